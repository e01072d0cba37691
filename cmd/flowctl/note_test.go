package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow"
)

// noteJSON is a note as `note ... -o json` prints it.
type noteJSON struct {
	Seq     uint64 `json:"seq"`
	Time    string `json:"time"`
	Actor   string `json:"actor"`
	Project string `json:"project"`
	Task    string `json:"task"`
	Kind    string `json:"kind"`
	Text    string `json:"text"`
}

func noteDecode(t *testing.T, stdout string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("stdout %q is not the JSON shape: %v", stdout, err)
	}
}

func TestNote_Add(t *testing.T) {
	t.Parallel()
	f := ctxFixture(t)
	if got := f.mustRun("", "note", "add", "--task", "T-1", "parser is slow"); got != "Added note to T-1 (seq 4)\n" {
		t.Errorf("stdout = %q", got)
	}
	var n noteJSON
	noteDecode(t, f.mustRun("", "note", "add", "--kind", "memory", "use -race", "-o", "json"), &n)
	if n.Seq != 5 || n.Task != "" || n.Kind != "memory" || n.Text != "use -race" || n.Actor != "tester" || n.Project != "demo" || n.Time == "" {
		t.Errorf("note = %+v", n)
	}
	stdout, stderr, code := runCLIEnv(t, f.dir, map[string]string{"FLOW_TASK_ID": "T-2"}, "line one\nline two\n", "note", "add", "-")
	if code != 0 || stdout != "Added note to T-2 (seq 6)\n" {
		t.Errorf("note add - with FLOW_TASK_ID: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	stdout, stderr, code = runCLIEnv(t, f.dir, map[string]string{"FLOW_TASK_ID": "T-2"}, "", "note", "add", "--task", "", "project-wide")
	if code != 0 || stdout != "Added note to project demo (seq 7)\n" {
		t.Errorf("note add --task '' with FLOW_TASK_ID: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	evs := f.logEvents("--type", "note.added")
	if len(evs) != 4 || evs[0].Stream != "task/demo/T-1" || evs[1].Stream != "project/demo" || evs[2].Stream != "task/demo/T-2" || evs[3].Stream != "project/demo" {
		t.Errorf("note streams = %+v", evs)
	}
}

func TestNote_Ls(t *testing.T) {
	t.Parallel()
	f := ctxFixture(t)
	f.mustRun("", "note", "add", "--task", "T-1", "one")
	f.mustRun("", "note", "add", "--kind", "memory", "two")
	f.mustRun("", "note", "add", "--task", "T-2", "--kind", "memory", "three")
	texts := func(args ...string) string {
		t.Helper()
		return noteTexts(t, f.mustRun("", append([]string{"note", "ls", "-o", "json"}, args...)...))
	}
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"All", nil, nil, "one,two,three"},
		{"Task", nil, []string{"--task", "T-1"}, "one"},
		{"Memory", nil, []string{"--kind", "memory"}, "two,three"},
		{"TaskFromEnv", map[string]string{"FLOW_TASK_ID": "T-2"}, nil, "three"},
		{"AllIgnoresEnv", map[string]string{"FLOW_TASK_ID": "T-2"}, []string{"--all"}, "one,two,three"},
		{"EmptyTaskIgnoresEnv", map[string]string{"FLOW_TASK_ID": "T-2"}, []string{"--task", ""}, "one,two,three"},
		{"Empty", nil, []string{"--task", "T-2", "--kind", "note"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.env == nil {
				if got := texts(tt.args...); got != tt.want {
					t.Errorf("notes = %q, want %q", got, tt.want)
				}
				return
			}
			stdout, stderr, code := runCLIEnv(t, f.dir, tt.env, "", append([]string{"note", "ls", "-o", "json"}, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			if got := noteTexts(t, stdout); got != tt.want {
				t.Errorf("notes = %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("EmptyIsArray", func(t *testing.T) {
		ctxWantEmptyArray(t, f.mustRun("", "note", "ls", "--task", "T-2", "--kind", "note", "-o", "json"))
	})
	t.Run("JSONLines", func(t *testing.T) {
		got := f.mustRun("", "note", "ls", "-o", "jsonl")
		lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
		if len(lines) != 3 {
			t.Fatalf("stdout = %q, want 3 lines", got)
		}
		for i, line := range lines {
			var n noteJSON
			noteDecode(t, line, &n)
			if n.Text != []string{"one", "two", "three"}[i] {
				t.Errorf("line %d = %+v", i, n)
			}
		}
	})
	t.Run("Text", func(t *testing.T) {
		got := f.mustRun("", "note", "ls")
		lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
		if len(lines) != 4 || !strings.HasPrefix(lines[0], "SEQ") {
			t.Fatalf("stdout = %q, want a header and 3 rows", got)
		}
		for i, want := range [][]string{{"T-1", "note", "one"}, {"-", "memory", "two"}, {"T-2", "memory", "three"}} {
			for _, w := range want {
				if !strings.Contains(lines[i+1], " "+w) {
					t.Errorf("row %d %q does not contain %q", i+1, lines[i+1], w)
				}
			}
		}
	})
}

func noteTexts(t *testing.T, stdout string) string {
	t.Helper()
	var ns []noteJSON
	noteDecode(t, stdout, &ns)
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.Text
	}
	return strings.Join(out, ",")
}

func TestNote_BadInput(t *testing.T) {
	t.Parallel()
	f := ctxFixture(t)
	f.mustRun("", "note", "add", "first")
	runBadInputs(t, f, []badInput{
		{name: "EmptyText", args: []string{"note", "add", "  "}, code: 2, facts: []string{"empty"}},
		{name: "BadUTF8", args: []string{"note", "add", "a\xffb"}, code: 2, facts: []string{"UTF-8"}},
		{name: "TooLong", args: []string{"note", "add", strings.Repeat("n", flow.MaxText+1)}, code: 2, facts: []string{"limit"}},
		{name: "BadKind", args: []string{"note", "add", "--kind", "todo", "x"}, code: 2, facts: []string{"todo"}},
		{name: "UnknownTask", args: []string{"note", "add", "--task", "T-9", "x"}, code: 3, facts: []string{"T-9"}},
		{name: "BadTaskID", args: []string{"note", "add", "--task", "P-1", "x"}, code: 2, facts: []string{"P-1"}},
		{name: "BadEnvTask", env: map[string]string{"FLOW_TASK_ID": "nine"}, args: []string{"note", "add", "x"}, code: 2, facts: []string{"nine"}},
		{name: "StaleIfVersion", args: []string{"note", "add", "x", "--if-version", "1"}, code: 4, facts: []string{"project/demo", "not 1"}},
		{name: "NoText", args: []string{"note", "add"}, code: 2, facts: []string{"arg"}},
		{name: "LsBadKind", args: []string{"note", "ls", "--kind", "todo"}, code: 2, facts: []string{"todo"}},
		{name: "LsUnknownTask", args: []string{"note", "ls", "--task", "T-9"}, code: 3, facts: []string{"T-9"}},
		{name: "LsTaskAndAll", args: []string{"note", "ls", "--task", "T-1", "--all"}, code: 2, facts: []string{"all"}},
		{name: "UnknownProject", args: []string{"note", "add", "x", "--project", "nope"}, code: 3, facts: []string{"nope"}},
	})
}
