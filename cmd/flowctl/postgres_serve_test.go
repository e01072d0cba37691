package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/internal/serve"
)

// TestPostgres_Serve: the HTTP API on a postgres:// store answers status
// byte for byte as `flowctl status -o json` does, before and after a note
// posted with the token, which lands (and one without it does not); the
// password is in no answer.
func TestPostgres_Serve(t *testing.T) {
	dsn, pw := pgURL(t)
	dir := t.TempDir()
	vars := map[string]string{"FLOW_DB": dsn}
	cli := func(args ...string) string {
		t.Helper()
		stdout, stderr, code := runCLIEnv(t, dir, vars, "", args...)
		if code != 0 {
			t.Fatalf("flowctl %s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		return stdout
	}
	cli("init", "--project", "web")
	cli("task", "add", "write the parser", "--tag", "backend")
	cli("task", "add", "test it", "--dep", "T-1")
	cli("task", "start", "T-1")
	h, err := serve.New(serve.Config{Path: dsn, Addr: "127.0.0.1:7070", Token: serveTestToken, Actor: "tester",
		Project: "web", Classify: serveClassify, Options: flow.Options{LockTimeout: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	var answers strings.Builder
	wantStatus := func() {
		t.Helper()
		w := get(h, "GET", "/api/v1/projects/web/status", "")
		answers.WriteString(w.Body.String())
		if want := cli("--project", "web", "status", "-o", "json"); w.Code != 200 || w.Body.String() != want {
			t.Errorf("the API answered %d\n%s\nthe CLI printed\n%s", w.Code, w.Body, want)
		}
	}
	wantStatus()

	// Without the token: refused, nothing lands.
	req := httptest.NewRequest("POST", "/api/v1/projects/web/tasks/T-1/notes", strings.NewReader(`{"text":"no token"}`))
	req.Host = "127.0.0.1:7070"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	answers.WriteString(w.Body.String())
	if w.Code != http.StatusUnauthorized {
		t.Errorf("a note without the token: %d %s", w.Code, w.Body)
	}
	w = get(h, "POST", "/api/v1/projects/web/tasks/T-1/notes", `{"text":"posted over HTTP"}`)
	answers.WriteString(w.Body.String())
	if w.Code != 200 || !strings.Contains(w.Body.String(), "posted over HTTP") {
		t.Fatalf("a note with the token: %d %s", w.Code, w.Body)
	}
	notes := cli("--project", "web", "note", "ls", "--task", "T-1", "-o", "json")
	if !strings.Contains(notes, "posted over HTTP") || strings.Contains(notes, "no token") || !strings.Contains(notes, `"tester"`) {
		t.Errorf("note ls printed %s", notes)
	}
	wantStatus()
	if strings.Contains(answers.String(), pw) {
		t.Errorf("the API answered the password:\n%s", answers.String())
	}
}
