//go:build unix

package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/internal/serve"
)

// writeHook writes an executable shell script at name below f's hooks
// directory.
func (f *flowFile) writeHook(name, script string) string {
	f.t.Helper()
	p := filepath.Join(filepath.Dir(f.path), "hooks", filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// fullEvents is the log with every field (session, correlation).
func (f *flowFile) fullEvents() []flow.Event {
	f.t.Helper()
	var evs []flow.Event
	for _, line := range strings.Split(strings.TrimSpace(f.mustRun("", "log", "-o", "jsonl")), "\n") {
		var ev flow.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			f.t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// policy vetoes every task titled "forbidden".
const policy = `grep -q '"title":"forbidden"' && { echo 'no forbidden tasks here' >&2; exit 2; }; exit 0`

func TestHooks_VetoExit8(t *testing.T) {
	f := mustInit(t, "--project", "p")
	f.writeHook("pre-commit.d/10-policy", policy)
	before := f.bytes()
	_, stderr, code := f.run("", "task", "add", "forbidden")
	wantError(t, stderr, code, 8, "vetoed", "pre-commit.d/10-policy", "no forbidden tasks here")
	jerr := func() jsonError {
		_, stderr, code := f.run("", "-o", "json", "task", "add", "forbidden")
		return wantJSONError(t, stderr, code, 8, "vetoed")
	}()
	if !strings.Contains(jerr.Error.Message, "no forbidden tasks here") {
		t.Errorf("JSON message = %q", jerr.Error.Message)
	}
	if string(before) != string(f.bytes()) {
		t.Fatal("the file changed after a veto")
	}
	f.mustRun("", "task", "add", "allowed")
	// --no-hooks and FLOW_NO_HOOKS=1 skip the hooks, and say so on the events.
	f.mustRun("", "--no-hooks", "task", "add", "forbidden")
	if _, stderr, code := runCLIEnv(t, f.dir, map[string]string{"FLOW_NO_HOOKS": "1"}, "", "task", "add", "forbidden"); code != 0 {
		t.Fatalf("FLOW_NO_HOOKS=1: exit %d: %s", code, stderr)
	}
	evs := f.fullEvents()
	for _, ev := range evs[len(evs)-2:] {
		if ev.Session != "[no-hooks]" {
			t.Errorf("event %d session %q, want [no-hooks]", ev.Seq, ev.Session)
		}
	}
	if _, stderr, code := runCLIEnv(t, f.dir, map[string]string{"FLOW_HOOK_TIMEOUT": "soon"}, "", "task", "add", "x"); code != 2 ||
		!strings.Contains(stderr, "FLOW_HOOK_TIMEOUT") {
		t.Errorf("FLOW_HOOK_TIMEOUT=soon: exit %d: %s", code, stderr)
	}
}

// TestHooks_ReentrantHook: a pre-commit hook that runs flowctl reads and
// writes on the same file neither deadlocks nor recurses; its write is
// marked as made by the hook, and the command commits after it.
func TestHooks_ReentrantHook(t *testing.T) {
	f := mustInit(t, "--project", "p")
	self := "FLOWCTL_TEST_MAIN=1 " + os.Args[0] + " " + childMarker
	f.writeHook("pre-commit", "cat > /dev/null\n"+
		self+" task ls > /dev/null || exit 1\n"+
		self+" task add 'added by the hook' > /dev/null || exit 1\n")
	start := time.Now()
	f.mustRun("", "task", "add", "mine")
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %s", d)
	}
	var tasks []struct{ ID, Title string }
	if err := json.Unmarshal([]byte(f.mustRun("", "-o", "json", "task", "ls")), &tasks); err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 2 || tasks[0].Title != "added by the hook" || tasks[1].Title != "mine" {
		t.Fatalf("tasks = %+v, want the hook's then mine", tasks)
	}
	evs := f.fullEvents()
	hooked, mine := evs[len(evs)-2], evs[len(evs)-1]
	if hooked.Session != "[hook:pre-commit]" || hooked.Correlation == "" || mine.Session != "" || mine.Correlation != "" {
		t.Errorf("hook's event session %q correlation %q; command's %q %q", hooked.Session, hooked.Correlation, mine.Session, mine.Correlation)
	}
}

func TestHooks_LsAndTest(t *testing.T) {
	f := mustInit(t, "--project", "p")
	if out := f.mustRun("", "hooks", "ls"); !strings.Contains(out, "no hooks in") {
		t.Errorf("hooks ls, none: %q", out)
	}
	p := f.writeHook("pre-commit.d/10-policy", policy)
	bad := f.writeHook("post-commit", "exit 0")
	if err := os.Chmod(bad, 0o777); err != nil {
		t.Fatal(err)
	}
	var files []flow.HookFile
	if err := json.Unmarshal([]byte(f.mustRun("", "hooks", "ls", "-o", "json")), &files); err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Path != p || !files[0].Runs || len(files[0].SHA256) != 64 ||
		files[1].Path != bad || files[1].Runs || !strings.Contains(files[1].Refused, "writable by group or others") {
		t.Errorf("hooks ls = %+v", files)
	}
	// hooks test: events from the log, then a veto.
	f.mustRun("", "task", "add", "fine")
	events := f.mustRun("", "log", "-o", "jsonl")
	if out := f.mustRun(events, "hooks", "test", "pre-commit"); !strings.Contains(out, "10-policy") || !strings.Contains(out, "allow") {
		t.Errorf("hooks test, allowed: %q", out)
	}
	forbidden := `{"api":1,"hook":"pre-commit","event":{"type":"task.created"},"before":null,"after":{"title":"forbidden"}}`
	before := f.bytes()
	out, stderr, code := f.run(forbidden, "hooks", "test", "pre-commit")
	wantError(t, stderr, code, 8, "no forbidden tasks here")
	if !strings.Contains(out, "veto") || string(before) != string(f.bytes()) {
		t.Errorf("hooks test, vetoed: %q", out)
	}
	_, stderr, code = f.run(forbidden, "hooks", "test", "pre-save")
	wantError(t, stderr, code, 2, "pre-save")
	_, stderr, code = f.run("", "hooks", "test", "pre-commit")
	wantError(t, stderr, code, 2, "no events on stdin")
}

// TestHooks_PostCommitWarns: a failing post-commit hook is a warning; the
// command exits 0 and its events are committed.
func TestHooks_PostCommitWarns(t *testing.T) {
	f := mustInit(t, "--project", "p")
	out := filepath.Join(f.dir, "post.jsonl")
	f.writeHook("post-commit", "cat > "+out+"; exit 1")
	_, stderr, code := f.run("", "task", "add", "x")
	if code != 0 || !strings.Contains(stderr, "warning: post-commit hook post-commit failed: exit status 1") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	b, _ := os.ReadFile(out)
	var line struct {
		Event struct {
			Seq  uint64 `json:"seq"`
			Hash string `json:"hash"`
		} `json:"event"`
	}
	if json.Unmarshal(b, &line) != nil || line.Event.Seq == 0 || line.Event.Hash == "" {
		t.Errorf("post-commit input %q has no seq or hash", b)
	}
}

// TestHooks_ServeVeto: a write through the HTTP API runs the hooks; a
// veto is 403 with code vetoed and the file unchanged.
func TestHooks_ServeVeto(t *testing.T) {
	f, _ := serveFixture(t)
	f.writeHook("pre-commit", `grep -q '"to":"cancelled"' && { echo 'nothing is cancelled here' >&2; exit 2; }; exit 0`)
	h, err := serve.New(serve.Config{Path: f.path, Addr: "127.0.0.1:7070", Token: serveTestToken, Actor: "tester",
		Project: "web", Classify: serveClassify, Options: flow.Options{LockTimeout: time.Second, Hooks: &flow.Hooks{}}})
	if err != nil {
		t.Fatal(err)
	}
	before := f.bytes()
	w := get(h, "POST", "/api/v1/projects/web/tasks/T-2/move", `{"to":"cancelled"}`)
	var body jsonError
	json.Unmarshal(w.Body.Bytes(), &body)
	if w.Code != http.StatusForbidden || body.Error.Code != "vetoed" || !strings.Contains(body.Error.Message, "nothing is cancelled here") {
		t.Errorf("vetoed move: %d %s", w.Code, w.Body)
	}
	if string(before) != string(f.bytes()) {
		t.Error("the file changed after a veto")
	}
	if w := get(h, "POST", "/api/v1/projects/web/tasks/T-3/move", `{"to":"blocked"}`); w.Code != 200 {
		t.Errorf("allowed move: %d %s", w.Code, w.Body)
	}
}
