package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/internal/serve"
)

const serveTestToken = "serve-test-token-0123456789"

// serveFixture is a flow file with a bit of everything, and the server's
// handler on it, built as `flowctl serve` builds it (actor tester).
func serveFixture(t *testing.T) (*flowFile, http.Handler) {
	t.Helper()
	f := mustInit(t, "--project", "web")
	for _, args := range [][]string{
		{"task", "add", "write <the> parser & \"more\"", "--tag", "backend", "--owner", "ann"},
		{"checkpoint", "--label", "first"},
		{"task", "add", "test it", "--dep", "T-1", "--priority", "2"},
		{"task", "add", "ship", "--tag", "ops"},
		{"task", "start", "T-1"},
		{"ctx", "set", "T-1", "branch", `"main"`},
		{"note", "add", "--task", "T-1", "a note"},
		{"--actor", "agent", "approval", "request", "--task", "T-2", "-m", "deploy?", "--action", `{"cmd":"make deploy"}`},
		{"task", "claim", "T-3"},
		{"checkpoint", "--label", "second"},
		{"task", "done", "T-1"},
	} {
		if _, stderr, code := runCLI(t, f.dir, "", args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	h, err := serve.New(serve.Config{Path: f.path, Addr: "127.0.0.1:7070", Token: serveTestToken, Actor: "tester",
		Project: "web", Classify: serveClassify, Options: flow.Options{LockTimeout: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	return f, h
}

// get answers target as a browser at the server's address would get it.
func get(h http.Handler, method, target, body string) *httptest.ResponseRecorder {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, r)
	req.Host = "127.0.0.1:7070"
	if method == "POST" {
		req.Header.Set("Authorization", "Bearer "+serveTestToken)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// TestServe_ReadsEqualCLI checks that every read endpoint answers, byte
// for byte, what the CLI prints with -o json for the same question.
func TestServe_ReadsEqualCLI(t *testing.T) {
	f, h := serveFixture(t)
	cases := []struct {
		target string
		args   []string
	}{
		{"/api/v1/projects", []string{"project", "ls"}},
		{"/api/v1/projects/web/status", []string{"status"}},
		{"/api/v1/projects/web/status?at=C-1", []string{"status", "--at", "C-1"}},
		{"/api/v1/projects/web/status?at=HEAD", []string{"status", "--at", "HEAD"}},
		{"/api/v1/projects/web/tasks", []string{"task", "ls"}},
		{"/api/v1/projects/web/tasks?status=todo", []string{"task", "ls", "--status", "todo"}},
		{"/api/v1/projects/web/tasks?tag=ops", []string{"task", "ls", "--tag", "ops"}},
		{"/api/v1/projects/web/tasks?owner=ann", []string{"task", "ls", "--owner", "ann"}},
		{"/api/v1/projects/web/tasks?limit=2", []string{"task", "ls", "--limit", "2"}},
		{"/api/v1/projects/web/tasks?at=5", []string{"task", "ls", "--at", "5"}},
		{"/api/v1/projects/web/tasks?status=doing&at=C-2", []string{"task", "ls", "--status", "doing", "--at", "C-2"}},
		{"/api/v1/projects/web/tasks/T-1", []string{"task", "show", "T-1"}},
		{"/api/v1/projects/web/tasks/t-1", []string{"task", "show", "t-1"}},
		{"/api/v1/projects/web/tasks/T-1?at=C-2", []string{"task", "show", "T-1", "--at", "C-2"}},
		{"/api/v1/projects/web/ready", []string{"ready"}},
		{"/api/v1/projects/web/ready?explain=true", []string{"ready", "--explain"}},
		{"/api/v1/projects/web/ready?explain=1&at=C-1", []string{"ready", "--explain", "--at", "C-1"}},
		{"/api/v1/projects/web/log?limit=0", []string{"log"}},
		{"/api/v1/projects/web/log", []string{"log", "--limit", "100"}},
		{"/api/v1/projects/web/log?limit=3", []string{"log", "--limit", "3"}},
		{"/api/v1/projects/web/log?limit=3&before=10", []string{"log", "--limit", "3", "--until", "9"}},
		{"/api/v1/projects/web/log?type=task.*&limit=0", []string{"log", "--type", "task.*"}},
		{"/api/v1/projects/web/log?actor=tester&session=&limit=5", []string{"log", "--actor", "tester", "--limit", "5"}},
		{"/api/v1/projects/web/log?task=T-1&limit=0", []string{"log", "--stream", "task/web/T-1"}},
		{"/api/v1/projects/web/log?since=4&until=8&limit=0", []string{"log", "--since", "4", "--until", "8"}},
		{"/api/v1/projects/web/log?at=6&limit=0", []string{"log", "--until", "6"}},
		{"/api/v1/projects/web/diff?a=C-1", []string{"diff", "C-1"}},
		{"/api/v1/projects/web/diff?a=C-1&b=C-2", []string{"diff", "C-1", "C-2"}},
		{"/api/v1/projects/web/approvals", []string{"approval", "ls"}},
		{"/api/v1/projects/web/approvals?status=pending&task=T-2", []string{"approval", "ls", "--status", "pending", "--task", "T-2"}},
		{"/api/v1/projects/web/approvals?status=granted", []string{"approval", "ls", "--status", "granted"}},
		{"/api/v1/projects/web/checkpoints", []string{"checkpoint", "ls"}},
		{"/api/v1/projects/web/checkpoints?limit=1", []string{"checkpoint", "ls", "--limit", "1"}},
		// The API's graph is the open work unless all=1; `graph` draws every task.
		{"/api/v1/projects/web/graph?all=1", []string{"graph"}},
		{"/api/v1/projects/web/graph?task=T-2", []string{"graph", "T-2"}},
		{"/api/v1/projects/web/graph?all=1&at=C-1", []string{"graph", "--at", "C-1"}},
		{"/api/v1/projects/web/graph?task=T-1&at=C-2", []string{"graph", "T-1", "--at", "C-2"}},
	}
	for _, c := range cases {
		t.Run(c.target, func(t *testing.T) {
			args := append([]string{"-o", "json", "--project", "web"}, c.args...)
			if c.args[0] == "log" || c.args[0] == "project" {
				args = append([]string{"-o", "json"}, c.args...)
				if c.args[0] == "log" {
					args = append(args, "--project", "web")
				}
			}
			want, stderr, code := runCLI(t, f.dir, "", args...)
			if code != 0 {
				t.Fatalf("flowctl %v: exit %d: %s", args, code, stderr)
			}
			w := get(h, "GET", c.target, "")
			if w.Code != 200 {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			if got := w.Body.String(); got != want {
				t.Fatalf("the API answered\n%s\nthe CLI printed (%v)\n%s", got, args, want)
			}
		})
	}
}

// TestServe_ErrorsEqualCLI checks that an error is the CLI's JSON error
// object, with the HTTP status of its exit code.
func TestServe_ErrorsEqualCLI(t *testing.T) {
	f, h := serveFixture(t)
	cases := []struct {
		target string
		status int
		args   []string
	}{
		{"/api/v1/projects/web/tasks/T-99", 404, []string{"task", "show", "T-99"}},
		{"/api/v1/projects/web/status?at=C-9", 404, []string{"status", "--at", "C-9"}},
		{"/api/v1/projects/web/status?at=999", 400, []string{"status", "--at", "999"}},
		{"/api/v1/projects/nope/status", 404, []string{"status", "--project", "nope"}},
		{"/api/v1/projects/web/graph?task=T-99", 404, []string{"graph", "T-99"}},
	}
	for _, c := range cases {
		t.Run(c.target, func(t *testing.T) {
			args := append([]string{"-o", "json", "--project", "web"}, c.args...)
			_, want, code := runCLI(t, f.dir, "", args...)
			if code == 0 {
				t.Fatalf("flowctl %v: exit 0", args)
			}
			w := get(h, "GET", c.target, "")
			if w.Code != c.status || w.Body.String() != want {
				t.Fatalf("the API answered %d\n%s\nthe CLI printed (exit %d)\n%s", w.Code, w.Body, code, want)
			}
		})
	}
}

// TestServe_WritesEqualCLI checks that a write answers what the CLI's
// command prints: the entity as the CLI then shows it.
func TestServe_WritesEqualCLI(t *testing.T) {
	f, h := serveFixture(t)
	cases := []struct {
		target, body string
		args         []string // the CLI's read of the entity written
	}{
		{"/api/v1/projects/web/tasks/T-3/move", `{"to":"blocked","note":"waiting"}`, []string{"task", "show", "T-3"}},
		{"/api/v1/projects/web/approvals/A-1/grant", `{"comment":"go <ahead>"}`, []string{"approval", "show", "A-1"}},
		{"/api/v1/projects/web/tasks/T-2/move", `{"to":"cancelled"}`, []string{"task", "show", "T-2"}},
	}
	for _, c := range cases {
		w := get(h, "POST", c.target, c.body)
		want, stderr, code := runCLI(t, f.dir, "", append([]string{"-o", "json", "--project", "web"}, c.args...)...)
		if w.Code != 200 || code != 0 || w.Body.String() != want {
			t.Fatalf("POST %s: %d\n%s\nthe CLI shows (exit %d %s)\n%s", c.target, w.Code, w.Body, code, stderr, want)
		}
	}
	w := get(h, "POST", "/api/v1/projects/web/tasks/T-1/notes", `{"text":"from <the> web"}`)
	notes, _, _ := runCLI(t, f.dir, "", "-o", "json", "--project", "web", "note", "ls", "--task", "T-1")
	var all []json.RawMessage
	json.Unmarshal([]byte(notes), &all)
	if w.Code != 200 || len(all) != 2 || w.Body.String() != string(all[1])+"\n" {
		t.Fatalf("note: %d %s; note ls: %s", w.Code, w.Body, notes)
	}
	dry := get(h, "POST", "/api/v1/projects/web/rollback", `{"to":"C-1","dry_run":true}`)
	want, _, _ := runCLI(t, f.dir, "", "-o", "json", "--project", "web", "rollback", "--to", "C-1", "--dry-run")
	if dry.Code != 200 || dry.Body.String() != want {
		t.Fatalf("dry run: %d\n%s\nthe CLI printed\n%s", dry.Code, dry.Body, want)
	}
	// A conflict is the CLI's error: a second grant.
	w = get(h, "POST", "/api/v1/projects/web/approvals/A-1/grant", `{}`)
	_, wantErr, _ := runCLI(t, f.dir, "", "-o", "json", "--project", "web", "--actor", "reviewer", "approval", "grant", "A-1")
	if w.Code != 409 || w.Body.String() != wantErr {
		t.Fatalf("second grant: %d\n%s\nthe CLI printed\n%s", w.Code, w.Body, wantErr)
	}
}

func TestServe_Flags(t *testing.T) {
	f := mustInit(t, "--project", "web")
	_, stderr, code := runCLI(t, f.dir, "", "serve", "--addr", "0.0.0.0:7070")
	if code != 2 || !strings.Contains(stderr, "not a loopback address") || !strings.Contains(stderr, "--token-file") {
		t.Fatalf("0.0.0.0 without a token: exit %d: %s", code, stderr)
	}
	short := filepath.Join(f.dir, "short")
	os.WriteFile(short, []byte("abc\n"), 0o600)
	if _, stderr, code := runCLI(t, f.dir, "", "serve", "--token-file", short); code != 2 {
		t.Fatalf("a short token: exit %d: %s", code, stderr)
	}
	if _, stderr, code := runCLI(t, f.dir, "", "serve", "--addr", "nonsense"); code != 2 {
		t.Fatalf("a bad --addr: exit %d: %s", code, stderr)
	}
	if _, stderr, code := runCLI(t, t.TempDir(), "", "serve"); code != 3 {
		t.Fatalf("no flow file: exit %d: %s", code, stderr)
	}
}

// TestServe_RunAndStop runs the command as main does: it prints the URL,
// answers, and stops cleanly (exit 0) when its context ends (SIGINT).
func TestServe_RunAndStop(t *testing.T) {
	f := mustInit(t, "--project", "web")
	tokenFile := filepath.Join(f.dir, "token")
	os.WriteFile(tokenFile, []byte(serveTestToken+"\n"), 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr strings.Builder
	exit := make(chan int, 1)
	go func() {
		e := env{stdin: strings.NewReader(""), stdout: pw, stderr: &stderr,
			getenv: func(k string) string { return testEnv[k] }, dir: f.dir}
		exit <- run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--token-file", tokenFile}, e)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	var banner []string
	for len(banner) < 2 && lines.Scan() {
		banner = append(banner, lines.Text())
	}
	go io.Copy(io.Discard, pr)
	if len(banner) < 2 || !strings.HasPrefix(banner[0], "flowctl serve: http://127.0.0.1:") || !strings.Contains(banner[1], "/auth?t=") {
		t.Fatalf("banner %q; stderr %s", banner, stderr.String())
	}
	if strings.Contains(strings.Join(banner, "\n"), serveTestToken) {
		t.Fatalf("the banner prints the token of a token file: %q", banner)
	}
	base := strings.TrimSuffix(strings.Fields(banner[0])[2], "/")
	resp, err := http.Get(base + "/api/v1/projects")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"name":"web"`) {
		t.Fatalf("GET /api/v1/projects: %d %s", resp.StatusCode, body)
	}
	// An open event stream does not hold the stop up.
	stream, err := http.Get(base + "/api/v1/events")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	cancel()
	select {
	case code := <-exit:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
	case <-time.After(3 * time.Second):
		t.Fatal("serve did not stop within 3 s of its context ending")
	}
}
