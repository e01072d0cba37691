package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// stepJSON is a step as `step ... -o json` prints it.
type stepJSON struct {
	ID       string          `json:"id"`
	Title    string          `json:"title"`
	Status   string          `json:"status"`
	Progress int             `json:"progress"`
	Note     string          `json:"note"`
	Result   string          `json:"result"`
	Error    string          `json:"error"`
	Updated  string          `json:"updated_at"`
	Started  *string         `json:"started_at"`
	Done     *string         `json:"completed_at"`
	Attempt  int             `json:"attempt"`
	Data     json.RawMessage `json:"result_data"`
	Task     string          `json:"task"`
	Version  uint64          `json:"version"`
}

func stepDecode(t *testing.T, stdout string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("stdout %q is not the JSON shape: %v", stdout, err)
	}
}

// stepRun runs a step command with -o json and returns the step.
func stepRun(t *testing.T, f *flowFile, args ...string) stepJSON {
	t.Helper()
	var s stepJSON
	stepDecode(t, f.mustRun("", append(append([]string{"step"}, args...), "-o", "json")...), &s)
	return s
}

func TestStep_Add(t *testing.T) {
	t.Parallel()
	f := ctxFixture(t)
	got := f.mustRun("", "step", "add", "T-1", "read the spec")
	if want := "Added step T-1.1: read the spec\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	s := stepRun(t, f, "add", "T-1", "write it")
	if s.ID != "T-1.2" || s.Task != "T-1" || s.Status != "pending" || s.Progress != 0 || s.Title != "write it" || s.Version != 3 || s.Updated == "" {
		t.Errorf("step = %+v, want T-1.2 of T-1, pending, version 3", s)
	}
	stdout, stderr, code := runCLIEnv(t, f.dir, map[string]string{"FLOW_TASK_ID": "T-2"}, "", "step", "add", "from env")
	if code != 0 || stdout != "Added step T-2.1: from env\n" {
		t.Errorf("step add with FLOW_TASK_ID: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestStep_Moves(t *testing.T) {
	t.Parallel()
	f := ctxFixture(t)
	f.mustRun("", "step", "add", "T-1", "parse")
	f.mustRun("", "step", "add", "T-1", "print")
	f.mustRun("", "step", "add", "T-1", "docs")

	if got := f.mustRun("", "step", "start", "T-1.1"); got != "T-1.1 in_progress (0%): parse\n" {
		t.Errorf("start: stdout = %q", got)
	}
	s := stepRun(t, f, "progress", "1.1", "40%", "--note", "half way")
	if s.Status != "in_progress" || s.Progress != 40 || s.Note != "half way" {
		t.Errorf("progress: %+v", s)
	}
	s = stepRun(t, f, "done", "T-1.1", "--result", "ok")
	if s.Status != "completed" || s.Progress != 100 || s.Result != "ok" {
		t.Errorf("done: %+v", s)
	}
	s = stepRun(t, f, "progress", "T-1.2", "10")
	if s.Status != "in_progress" || s.Progress != 10 {
		t.Errorf("progress on a pending step: %+v, want it started at 10", s)
	}
	s = stepRun(t, f, "fail", "T-1.2", "--error", "exit 1")
	if s.Status != "failed" || s.Error != "exit 1" || s.Progress != 10 {
		t.Errorf("fail: %+v", s)
	}
	stdout, stderr, code := runCLIEnv(t, f.dir, map[string]string{"FLOW_TASK_ID": "T-1"}, "", "step", "skip", "3", "--note", "later")
	if code != 0 || stdout != "T-1.3 skipped (0%): docs\n" {
		t.Errorf("skip 3 with FLOW_TASK_ID: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	t.Run("LsText", func(t *testing.T) {
		got := f.mustRun("", "step", "ls", "T-1")
		lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
		if len(lines) != 4 || !strings.HasPrefix(lines[0], "ID") {
			t.Fatalf("stdout = %q, want a header and 3 rows", got)
		}
		if head := strings.Fields(lines[0]); len(head) < 4 || head[3] != "ATTEMPT" {
			t.Errorf("header %q, want ATTEMPT after PROGRESS", lines[0])
		}
		for i, attempt := range []string{"1", "1", "0"} { // skipped before it started: 0
			if row := strings.Fields(lines[i+1]); len(row) < 4 || row[3] != attempt {
				t.Errorf("row %d %q: attempt is not %s", i+1, lines[i+1], attempt)
			}
		}
		for i, want := range [][]string{{"T-1.1", "completed", "100%", "result: ok"}, {"T-1.2", "failed", "10%", "error: exit 1"}, {"T-1.3", "skipped", "0%", "later"}} {
			for _, w := range want {
				if !strings.Contains(lines[i+1], w) {
					t.Errorf("row %d %q does not contain %q", i+1, lines[i+1], w)
				}
			}
		}
	})
	t.Run("LsJSON", func(t *testing.T) {
		var steps []stepJSON
		stepDecode(t, f.mustRun("", "step", "ls", "T-1", "-o", "json"), &steps)
		if len(steps) != 3 || steps[0].ID != "T-1.1" || steps[2].Status != "skipped" || steps[2].Note != "later" {
			t.Errorf("steps = %+v", steps)
		}
	})
	t.Run("LsEmptyIsArray", func(t *testing.T) {
		ctxWantEmptyArray(t, f.mustRun("", "step", "ls", "T-2", "-o", "json"))
	})
}

func TestStep_BadInput(t *testing.T) {
	t.Parallel()
	f := ctxFixture(t)
	f.mustRun("", "step", "add", "T-1", "a")
	f.mustRun("", "step", "add", "T-1", "b")
	f.mustRun("", "step", "start", "T-1.2")
	f.mustRun("", "step", "add", "T-2", "c")
	f.mustRun("", "task", "cancel", "T-2")
	runBadInputs(t, f, []badInput{
		{name: "DoneWhilePending", args: []string{"step", "done", "T-1.1"}, code: 4, facts: []string{"T-1.1", "pending", "in_progress (step start)"}},
		{name: "FailWhilePending", args: []string{"step", "fail", "T-1.1", "--error", "x"}, code: 4, facts: []string{"can move to"}},
		{name: "ProgressStaleIfVersion", args: []string{"step", "progress", "T-1.2", "50", "--if-version", "1"}, code: 4, facts: []string{"not 1"}},
		{name: "ProgressOver100", args: []string{"step", "progress", "T-1.2", "101"}, code: 2, facts: []string{"101", "0 to 100"}},
		{name: "ProgressNegative", args: []string{"step", "progress", "T-1.2", "--", "-1"}, code: 2, facts: []string{"-1"}},
		{name: "ProgressNotANumber", args: []string{"step", "progress", "T-1.2", "half"}, code: 2, facts: []string{"half"}},
		{name: "FailWithoutError", args: []string{"step", "fail", "T-1.2"}, code: 2, facts: []string{"error"}},
		{name: "UnknownStep", args: []string{"step", "start", "T-1.9"}, code: 3, facts: []string{"T-1.9"}},
		{name: "UnknownTask", args: []string{"step", "add", "T-7", "x"}, code: 3, facts: []string{"T-7"}},
		{name: "BadStepID", args: []string{"step", "start", "T-1"}, code: 2, facts: []string{"step id"}},
		{name: "BareNumberWithoutTask", args: []string{"step", "start", "2"}, code: 2, facts: []string{"FLOW_TASK_ID"}},
		{name: "EmptyTitle", args: []string{"step", "add", "T-1", " "}, code: 2, facts: []string{"title"}},
		{name: "BadUTF8Note", args: []string{"step", "skip", "T-1.1", "--note", "a\xff"}, code: 2, facts: []string{"UTF-8"}},
		{name: "CancelledTaskAdd", args: []string{"step", "add", "T-2", "late"}, code: 4, facts: []string{"cancelled"}},
		{name: "CancelledTaskMove", args: []string{"step", "start", "T-2.1"}, code: 4, facts: []string{"cancelled"}},
		{name: "StaleIfVersion", args: []string{"step", "add", "T-1", "x", "--if-version", "2"}, code: 4, facts: []string{"not 2"}},
		{name: "LsUnknownTask", args: []string{"step", "ls", "T-8"}, code: 3, facts: []string{"T-8"}},
		{name: "BadFlag", args: []string{"step", "done", "T-1.2", "--force"}, code: 2, facts: []string{"--force"}},
	})
	t.Run("JSONError", func(t *testing.T) {
		_, stderr, code := f.run("", "step", "done", "T-1.1", "--json")
		if e := wantJSONError(t, stderr, code, 4, "conflict"); !strings.Contains(e.Error.Message, "pending") {
			t.Errorf("message %q does not name the status", e.Error.Message)
		}
	})
}
