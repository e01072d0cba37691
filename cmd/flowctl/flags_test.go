package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow"
)

// runCancelled runs flowctl in dir with a context that is already
// cancelled: a command that follows the log (watch, log -f) and is not
// refused ends at once with exit 0 instead of running for ever.
func runCancelled(dir string, args ...string) (stdout, stderr string, code int) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut bytes.Buffer
	e := env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut,
		getenv: func(k string) string { return testEnv[k] }, dir: dir}
	code = run(ctx, args, e)
	return out.String(), errOut.String(), code
}

// wantRefused runs args on f and checks that they exit 2 with one line
// naming every fact, print nothing on stdout and leave the file as it was.
func wantRefused(t *testing.T, f *flowFile, args []string, facts ...string) {
	t.Helper()
	before := f.bytes()
	stdout, stderr, code := runCancelled(f.dir, args...)
	wantError(t, stderr, code, 2, facts...)
	if stdout != "" {
		t.Errorf("%v: stdout = %q, want nothing", args, stdout)
	}
	if !bytes.Equal(before, f.bytes()) {
		t.Errorf("%v changed the file", args)
	}
}

// TestFlags_ClosedSets: a flag that takes one of a closed set of values
// refuses any other with exit 2 and the list of the valid ones, instead of
// filtering on it (an empty table, exit 0) or storing it.
func TestFlags_ClosedSets(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "p")
	f.mustRun("", "task", "add", "first")
	tests := []struct {
		name  string
		args  []string
		facts []string
	}{
		{"TaskStatus", []string{"task", "ls", "--status", "nosuch"}, []string{"--status", "todo", "doing", "done", "blocked", "cancelled"}},
		{"ApprovalStatus", []string{"approval", "ls", "--status", "nosuch"}, []string{"--status", "pending", "granted", "denied"}},
		{"NoteKind", []string{"note", "add", "--kind", "nosuch", "text"}, []string{"--kind", "note", "memory"}},
		{"NoteLsKind", []string{"note", "ls", "--kind", "nosuch"}, []string{"--kind", "note", "memory"}},
		{"WatchFormat", []string{"watch", "--format", "yaml"}, []string{"--format", "text", "jsonl", "mcp"}},
		{"LogType", []string{"log", "--type", "no.such.type"}, []string{"--type", "task.created", "task.*"}},
		{"LogTypeWithoutStar", []string{"log", "--type", "task"}, []string{"--type", "task.created"}},
		{"LogTypePrefixOfNothing", []string{"log", "--type", "tsak.*"}, []string{"--type", "task.created"}},
		{"WatchType", []string{"watch", "--type", "nosuch"}, []string{"--type", "approval.decided"}},
		{"ImportFrom", []string{"import", "--from", "csv", "x.csv"}, []string{"--from", "events", "workflow-json"}},
		{"Output", []string{"task", "ls", "-o", "yaml"}, []string{"yaml", "text", "json", "jsonl"}},
		{"Color", []string{"task", "ls", "--color", "sometimes"}, []string{"--color", "auto", "never"}},
		{"ColorAlways", []string{"task", "ls", "--color", "always"}, []string{"--color", "auto", "never"}},
		{"MCPText", []string{"mcp", "--text", "terse"}, []string{"--text", "full", "summary"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantRefused(t, f, tt.args, tt.facts...) })
	}

	t.Run("ValidValues", func(t *testing.T) {
		for _, args := range [][]string{
			{"task", "ls", "--status", "todo"},
			{"approval", "ls", "--status", "pending"},
			{"note", "ls", "--kind", "memory"},
			{"log", "--type", "task.*"},
			{"log", "--type", "rollback.applied"},
		} {
			f.mustRun("", args...)
		}
		if out := f.mustRun("", "task", "ls", "--status", "todo"); !strings.Contains(out, "first") {
			t.Errorf("task ls --status todo = %q, want the todo task", out)
		}
	})
}

// TestFlags_Conflicts: two flags that ask for different output formats
// are refused, instead of one of them winning silently.
func TestFlags_Conflicts(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "p")
	for _, args := range [][]string{
		{"task", "ls", "--json", "-o", "text"},
		{"task", "ls", "-o", "jsonl", "--json"},
		{"watch", "--format", "jsonl", "-o", "text"},
		{"watch", "--format", "mcp", "--json"},
	} {
		t.Run(strings.Join(args, "_"), func(t *testing.T) { wantRefused(t, f, args, "two formats") })
	}
	t.Run("Agreeing", func(t *testing.T) {
		if out := f.mustRun("", "task", "ls", "--json", "-o", "json"); strings.TrimSpace(out) != "[]" {
			t.Errorf("--json -o json printed %q, want []", out)
		}
	})
}

// TestFlags_IfVersion: --if-version 0 is refused (it used to mean "no
// check", so any version passed), and the commands that create an entity
// take no --if-version at all instead of creating whatever it says.
func TestFlags_IfVersion(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "p")
	f.mustRun("", "task", "add", "first")
	f.mustRun("", "task", "edit", "T-1", "--title", "again") // v2
	for _, args := range [][]string{
		{"task", "edit", "T-1", "--title", "x", "--if-version", "0"},
		{"task", "start", "T-1", "--if-version", "0"},
		{"ctx", "set", "T-1", "a", "1", "--if-version", "0"},
		{"exec", "run", "--task", "T-1", "--if-version", "0", "--", "true"},
		{"task", "edit", "T-1", "--title", "x", "--if-version", "-1"},
	} {
		t.Run("Zero/"+strings.Join(args[:2], "_"), func(t *testing.T) { wantRefused(t, f, args, "--if-version") })
	}
	for _, args := range [][]string{
		{"task", "add", "second", "--if-version", "5"},
		{"plan", "new", "a plan", "--if-version", "5"},
		{"project", "new", "other", "--if-version", "5"},
	} {
		t.Run("Create/"+strings.Join(args[:2], "_"), func(t *testing.T) { wantRefused(t, f, args, "--if-version") })
	}
	t.Run("StaleIsAConflict", func(t *testing.T) {
		_, stderr, code := f.run("", "task", "edit", "T-1", "--title", "x", "--if-version", "1")
		wantError(t, stderr, code, 4)
		f.mustRun("", "task", "edit", "T-1", "--title", "x", "--if-version", "2")
	})
}

// TestMCP_IfVersionZero: if_version 0 is refused as invalid input on every
// tool that takes it, instead of being read as "no check" (any version
// passed); the file is left as it was.
func TestMCP_IfVersionZero(t *testing.T) {
	t.Parallel()
	f := mcpFile(t)
	h := startMCP(t, f, "agent", nil, "--tools", "all")
	before := f.bytes()
	for name, args := range map[string]map[string]any{
		"task_update": {"id": "T-1", "status": "doing"},
		"step_update": {"action": "add", "task": "T-1", "title": "x"},
		"ctx_merge":   {"task": "T-1", "patch": map[string]any{"a": 1}},
		"rollback":    {"to": "1", "task": "T-1", "apply": true},
	} {
		args["if_version"] = 0
		te := h.callErr(name, args, flow.CodeInvalid)
		if !strings.Contains(te.Message, "if_version") {
			t.Errorf("%s: %q does not name if_version", name, te.Message)
		}
	}
	if !bytes.Equal(before, f.bytes()) {
		t.Errorf("a refused if_version 0 changed the file")
	}
}
