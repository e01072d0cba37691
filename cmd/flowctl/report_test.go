package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// reportJSON holds the fields of `report -o json` the tests look at.
type reportJSON struct {
	Markdown string `json:"markdown"`
	Task     *struct {
		ID string `json:"id"`
	} `json:"task"`
	Project json.RawMessage `json:"project"`
	Status  *struct {
		HeadSeq uint64 `json:"head_seq"`
	} `json:"status"`
	Approvals []json.RawMessage `json:"approvals"`
	Execs     []struct {
		ID string `json:"id"`
	} `json:"execs"`
	Notes    []json.RawMessage `json:"notes"`
	Timeline []struct {
		Seq     uint64 `json:"seq"`
		Type    string `json:"type"`
		Summary string `json:"summary"`
	} `json:"timeline"`
}

func decodeReport(t *testing.T, stdout string) reportJSON {
	t.Helper()
	var r reportJSON
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("report -o json is not the report object: %v\n%s", err, stdout)
	}
	return r
}

func TestReport(t *testing.T) {
	t.Parallel()
	f := statusFile(t)

	t.Run("TaskText", func(t *testing.T) {
		stdout, stderr, code := f.run("", "report", "T-1")
		if code != 0 || stderr != "" {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		golden(t, "report_task.golden", stdout)
	})

	t.Run("ProjectText", func(t *testing.T) {
		stdout, stderr, code := f.run("", "report")
		if code != 0 || stderr != "" {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		golden(t, "report_project.golden", stdout)
	})

	t.Run("TaskJSON", func(t *testing.T) {
		r := decodeReport(t, f.mustRun("", "report", "t-1", "-o", "json"))
		if r.Markdown != f.mustRun("", "report", "T-1") {
			t.Errorf("markdown in JSON differs from the text output")
		}
		if r.Task == nil || r.Task.ID != "T-1" || len(r.Approvals) != 1 || len(r.Execs) != 3 || len(r.Notes) != 1 {
			t.Errorf("task %+v, %d approvals, %d execs, %d notes; want T-1, 1, 3, 1", r.Task, len(r.Approvals), len(r.Execs), len(r.Notes))
		}
		if len(r.Timeline) != 16 || r.Timeline[0].Seq != 5 || r.Timeline[15].Type != "note.added" {
			t.Errorf("timeline = %+v, want 16 events from seq 5 to the note", r.Timeline)
		}
	})

	t.Run("ProjectJSON", func(t *testing.T) {
		r := decodeReport(t, f.mustRun("", "report", "--json"))
		if !strings.HasPrefix(r.Markdown, "# Project alpha\n") || r.Task != nil || r.Status == nil || r.Status.HeadSeq != 37 {
			t.Errorf("project report JSON: task %v, status %+v, markdown %.40q", r.Task, r.Status, r.Markdown)
		}
		if len(r.Timeline) != 37 || len(r.Execs) != 5 {
			t.Errorf("timeline %d events, %d execs; want 37, 5", len(r.Timeline), len(r.Execs))
		}
	})

	t.Run("IgnoresFlowTaskID", func(t *testing.T) {
		stdout, _, code := runCLIEnv(t, f.dir, map[string]string{"FLOW_TASK_ID": "T-1"}, "", "report")
		if code != 0 || !strings.HasPrefix(stdout, "# Project alpha\n") {
			t.Errorf("report with FLOW_TASK_ID set: exit %d, %.40q; want the project report", code, stdout)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		statusUnchanged(t, f, 3, "report", "T-99")
		statusUnchanged(t, f, 2, "report", "x-1")
		statusUnchanged(t, f, 2, "report", "T-1", "T-2")
		statusUnchanged(t, f, 2, "report", "--bogus")
		before := f.bytes()
		_, stderr, code := f.run("", "report", "T-99", "-o", "json")
		e := wantJSONError(t, stderr, code, 3, "not_found")
		if !strings.Contains(e.Error.Message, "T-99") {
			t.Errorf("error %q does not name T-99", e.Error.Message)
		}
		if string(before) != string(f.bytes()) {
			t.Errorf("report T-99 changed the file")
		}
	})
}

func TestReport_Empty(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "empty")
	stdout, stderr, code := f.run("", "report")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"# Project empty\n", "_No open tasks._", "- ready: none", "| 1 |"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	r := decodeReport(t, f.mustRun("", "report", "-o", "json"))
	if len(r.Execs) != 0 || r.Execs == nil || len(r.Timeline) != 1 {
		t.Errorf("empty project report: execs %v, timeline %d; want [] and 1", r.Execs, len(r.Timeline))
	}
}
