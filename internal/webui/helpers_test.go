package webui

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/internal/flowtest"
	"github.com/flowctl/flowctl/projection"
)

// evil is a user-written string that must reach every page escaped.
const evil = `<script>alert("x")</script>`

// fixture is a flow file with one project, "web", that has a task in
// every status, steps, exec records, context with history, notes and
// memories, approvals pending and decided, and checkpoints; and a second
// project, "other". Mid is the seq of checkpoint C-1, taken half way.
type fixture struct {
	path string
	now  func() time.Time
	mid  uint64
}

// must is v, or a panic on err: the fixture's commands do not fail.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), flow.DefaultDir, flow.DefaultFile)
	clock := flowtest.Clock()
	e, err := flow.Open(path, flow.Options{Create: true, NoSync: true, Actor: "ann", Session: "s1", Now: clock})
	if err != nil {
		tb.Fatal(err)
	}
	const p = "web"
	must(e.CreateProject(flow.NewProject{Name: p, Description: "the web site " + evil}))
	must(e.CreateProject(flow.NewProject{Name: "other"}))
	plan := must(e.AddPlan(flow.NewPlan{Project: p, Title: "launch"}))
	add := func(title string, deps ...string) *projection.Task {
		return must(e.AddTask(flow.NewTask{Project: p, Plan: plan.ID, Title: title, Deps: deps, Owner: "ann", Tags: []string{"ui"}, Priority: 2}))
	}
	t1 := add("design the page " + evil) // T-1: done
	t2 := add("build the page", t1.ID)   // T-2: doing, steps, execs, context
	t3 := add("write the docs", t2.ID)   // T-3: todo, waits for T-2
	t4 := add("blocked on legal")        // T-4: blocked
	t5 := add("drop the old site")       // T-5: cancelled
	must(e.AddTask(flow.NewTask{Project: "other", Title: "elsewhere"}))
	move := func(id, to string) {
		must(e.MoveTask(flow.Move{Project: p, ID: id, To: to}))
	}
	move(t1.ID, "doing")
	move(t1.ID, "done")
	must(e.MergeContext(flow.ContextPatch{Project: p, ID: t2.ID, Patch: `{"branch":"feat/page","build":{"ok":true,"n":3,"files":["a.go","b.go"]},"html":"` + strings.ReplaceAll(evil, `"`, `\"`) + `"}`}))
	c1 := must(e.CreateCheckpoint(flow.NewCheckpoint{Project: p, Label: "before work"}))
	move(t2.ID, "doing")
	must(e.ClaimTask(flow.Claim{Project: p, ID: t2.ID}))
	must(e.MergeContext(flow.ContextPatch{Project: p, ID: t2.ID, Patch: `{"branch":"feat/page-2"}`}))
	s1 := must(e.AddStep(flow.NewStep{Project: p, Task: t2.ID, Title: "scaffold"}))
	s2 := must(e.AddStep(flow.NewStep{Project: p, Task: t2.ID, Title: "style " + evil}))
	must(e.MoveStep(flow.StepMove{Project: p, ID: s1.ID, To: projection.StepInProgress}))
	must(e.MoveStep(flow.StepMove{Project: p, ID: s1.ID, To: projection.StepCompleted, Result: "ok"}))
	progress := 40
	must(e.MoveStep(flow.StepMove{Project: p, ID: s2.ID, To: projection.StepInProgress, Progress: &progress, Note: "half"}))
	must(e.RecordExec(flow.NewExec{Project: p, Task: t2.ID, Command: "go test ./...", ExitCode: 0, Success: true, ElapsedMS: 850,
		Stdout: projection.Output{Head: "ok  pkg\n", Bytes: 8}}))
	must(e.RecordExec(flow.NewExec{Project: p, Task: t2.ID, Command: "go vet ./...", ExitCode: 1, Success: false, ElapsedMS: 1200,
		Stderr: projection.Output{Head: "vet: " + evil + "\n", Tail: "exit 1\n", Bytes: 4000}}))
	must(e.AddNote(flow.NewNote{Project: p, Task: t2.ID, Text: "note " + evil}))
	must(e.AddNote(flow.NewNote{Project: p, Task: t2.ID, Kind: flow.NoteKindMemory, Text: "remember the cache"}))
	must(e.RequestApproval(flow.NewApproval{Project: p, Task: t2.ID, Message: "deploy " + evil, Action: `{"cmd":"deploy","env":"prod"}`}))
	a2 := must(e.RequestApproval(flow.NewApproval{Project: p, Task: t2.ID, Message: "merge", Action: `{"cmd":"merge"}`}))
	must(e.As("reviewer", "").DecideApproval(flow.Decision{Project: p, ID: a2.ID, Grant: true, Comment: "fine"}))
	move(t4.ID, "blocked")
	move(t5.ID, "cancelled")
	must(e.CreateCheckpoint(flow.NewCheckpoint{Project: p, Label: "after work"}))
	_ = t3
	if err := e.Close(); err != nil {
		tb.Fatal(err)
	}
	// The pages' clock: just after the fixture's last event, so that
	// T-2's claim is live.
	last := clock()
	return &fixture{path: path, now: func() time.Time { return last }, mid: c1.AtSeq}
}

// handler is the pages of the fixture.
func (f *fixture) handler(readOnly bool) http.Handler {
	return New(Config{Path: f.path, Options: flow.Options{Now: f.now}, ReadOnly: readOnly})
}

// get requests path and returns the status and body.
func get(tb testing.TB, h http.Handler, path string) (int, string) {
	tb.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(body)
}

// mustGet requests path and fails unless it answers 200 with HTML.
func mustGet(tb testing.TB, h http.Handler, path string) string {
	tb.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	body, _ := io.ReadAll(rec.Result().Body)
	if rec.Code != http.StatusOK {
		tb.Fatalf("GET %s: %d\n%s", path, rec.Code, body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		tb.Fatalf("GET %s: Content-Type %q", path, ct)
	}
	return string(body)
}

// wantIn fails unless body holds every one of parts.
func wantIn(tb testing.TB, what, body string, parts ...string) {
	tb.Helper()
	for _, p := range parts {
		if !strings.Contains(body, p) {
			tb.Errorf("%s: missing %q", what, p)
		}
	}
}

// wantNotIn fails if body holds any of parts.
func wantNotIn(tb testing.TB, what, body string, parts ...string) {
	tb.Helper()
	for _, p := range parts {
		if strings.Contains(body, p) {
			tb.Errorf("%s: holds %q", what, p)
		}
	}
}

// serve requests path and returns the recorder.
func serve(h http.Handler, path string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec
}
