package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow"
)

// TestSearch: hits as a table and as JSON, every project when none is
// chosen, --at, and refusals.
func TestSearch(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "web")
	f.mustRun("", "task", "add", "Fix the parser", "--description", "the lexer is fine")
	f.mustRun("", "note", "add", "the parser needs a second pass", "--task", "T-1")
	f.mustRun("", "ctx", "merge", "T-1", `{"decision":"table-driven parser"}`)
	f.mustRun("", "project", "new", "api")
	f.mustRun("", "--project", "api", "task", "add", "parser for the API")
	t.Run("Text", func(t *testing.T) {
		out := f.mustRun("", "--project", "web", "search", "parser")
		for _, want := range []string{"SCORE", "T-1  ", "title", "Fix the parser", "note@3 (T-1)", "context"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "API") {
			t.Errorf("another project's task:\n%s", out)
		}
	})
	t.Run("JSON", func(t *testing.T) {
		var res flow.SearchResult
		if err := json.Unmarshal([]byte(f.mustRun("", "--project", "web", "search", "PARSER", "--limit", "1", "-o", "json")), &res); err != nil {
			t.Fatal(err)
		}
		if res.Project != "web" || !res.Index || len(res.Hits) != 1 || res.Hits[0].ID != "T-1" || res.Hits[0].Field != "title" {
			t.Errorf("result = %+v", res)
		}
	})
	t.Run("AllProjects", func(t *testing.T) {
		out := f.mustRun("", "search", "parser", "--all")
		if !strings.Contains(out, "api/T-1") || !strings.Contains(out, "web/T-1") {
			t.Errorf("output:\n%s", out)
		}
	})
	t.Run("At", func(t *testing.T) {
		if out := f.mustRun("", "--project", "web", "search", "pass", "--at", "2"); !strings.Contains(out, `No match for "pass"`) {
			t.Errorf("at 2: %s", out)
		}
	})
	t.Run("Errors", func(t *testing.T) {
		_, stderr, code := f.run("", "--project", "web", "search", "!!")
		wantError(t, stderr, code, 2, "no word to search")
		_, stderr, code = f.run("", "--project", "web", "search", "xy", "--limit", "0")
		wantError(t, stderr, code, 2, "--limit 0")
		_, stderr, code = f.run("", "--project", "nope", "search", "xy")
		wantError(t, stderr, code, 3, "nope")
		_, stderr, code = f.run("", "search", "xy", "--all", "--at", "1")
		wantError(t, stderr, code, 2, "--all")
		_, stderr, code = f.run("", "--project", "web", "search", "xy", "--all")
		wantError(t, stderr, code, 2, "--all")
	})
}

// TestSession: session ls, log, report --session.
func TestSession(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "web") // no session
	f.mustRun("", "--session", "s-1", "task", "add", "first")
	f.mustRun("", "--session", "s-1", "step", "add", "T-1", "analyse")
	f.mustRun("", "--session", "s-1", "step", "start", "T-1.1")
	f.mustRun("", "--session", "s-2", "--actor", "bob", "task", "add", "second")
	f.mustRun("", "--session", "s-1", "exec", "record", `{"task":"T-1","command":"go test","exit_code":0}`)
	f.mustRun("", "--session", "s-1", "checkpoint", "--label", "here")
	t.Run("Ls", func(t *testing.T) {
		var ss []flow.Session
		if err := json.Unmarshal([]byte(f.mustRun("", "session", "ls", "-o", "json")), &ss); err != nil {
			t.Fatal(err)
		}
		if len(ss) != 2 || ss[0].Session != "s-1" || ss[0].Events != 5 || ss[0].FirstSeq != 2 || ss[0].LastSeq != 7 ||
			ss[1].Session != "s-2" || ss[1].Actor != "bob" || ss[1].Events != 1 {
			t.Errorf("sessions = %+v", ss)
		}
		if out := f.mustRun("", "session", "ls"); !strings.Contains(out, "SESSION") || !strings.Contains(out, "2-7") {
			t.Errorf("text:\n%s", out)
		}
	})
	t.Run("Log", func(t *testing.T) {
		if got := seqsOf(f.logEvents("--session", "s-1")); len(got) != 5 || got[0] != 2 || got[4] != 7 {
			t.Errorf("log --session s-1: %v", got)
		}
	})
	t.Run("Watch", func(t *testing.T) {
		w := startWatch(t, f.dir, "watch", "--since", "1", "--session", "s-2", "--format", "mcp")
		w.waitLines(t, 2)
		w.stop(t)
		if out := w.stdout.String(); !strings.HasPrefix(out, `MCP::task_created {"seq":5,"project":"web","task":"T-2","title":"second"}`) || strings.Count(out, "\n") != 2 {
			t.Errorf("watch --session s-2:\n%s", out)
		}
	})
	t.Run("Report", func(t *testing.T) {
		out := f.mustRun("", "report", "--session", "s-1")
		for _, want := range []string{"# Session s-1", "## Tasks touched", "| T-1 | first | todo | 4 |", "## Steps", "T-1.1", "## Exec records", "go test", "## Checkpoints", "## Approvals", "_none_", "time spent"} {
			if !strings.Contains(out, want) {
				t.Errorf("report lacks %q:\n%s", want, out)
			}
		}
		_, stderr, code := f.run("", "report", "--session", "s-9")
		wantError(t, stderr, code, 3, "s-9")
		_, stderr, code = f.run("", "report", "T-1", "--session", "s-1")
		wantError(t, stderr, code, 2, "not both")
	})
}
