package view

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
)

var meta = projection.Meta{Version: 7, Seq: 42, CreatedAt: 1_700_000_000_123_456_789, CreatedBy: "alice", UpdatedAt: 1_700_000_100_000_000_001}

func fullTask() *projection.Task {
	return &projection.Task{Project: "demo", ID: "T-2", Plan: "P-1", Title: "two", Description: "d\nmore",
		Status: "doing", Owner: "bob", Tags: []string{"a", "b"}, Priority: 3, Deps: []string{"T-1"}, Ref: "gh#1",
		Claim: &projection.Claim{Actor: "alice", Session: "s1", LeaseUntil: 1_700_000_200_000_000_000, ClaimedAt: 1_700_000_000_000_000_000},
		Steps: []projection.Step{{ID: "T-2.1", Title: "s", Status: "completed", Progress: 100, Note: "n", Result: "r", Error: "e", UpdatedAt: 5},
			{ID: "T-2.2", Title: "t", Status: "pending"}},
		Context: `{"a":1,"b":{"c":[1,2.50]}}`, ContextVersion: 2, PendingApprovals: []string{"A-1"},
		Notes: 1, Execs: 2, Forced: true, Meta: meta}
}

// TestOf_SameJSONAsProjection pins the CLI's JSON output: the view of an
// entity marshals byte for byte as the projection did before the view
// layer existed, full and empty.
func TestOf_SameJSONAsProjection(t *testing.T) {
	cases := map[string]any{
		"task":        fullTask(),
		"task empty":  &projection.Task{Project: "demo", ID: "T-1", Context: projection.EmptyContext},
		"task nils":   &projection.Task{Tags: []string{}, Deps: []string{}, Steps: []projection.Step{}, PendingApprovals: []string{}, Context: "{}"},
		"tasks":       []*projection.Task{fullTask(), {ID: "T-9", Context: "{}"}},
		"approval":    &projection.Approval{Project: "demo", ID: "A-1", Task: "T-1", Step: "T-1.1", Message: "m", Code: "c", Action: `{"run":"x"}`, ActionHash: "ab", Expires: 9, Status: "granted", RequestedBy: "a", DecidedBy: "b", Comment: "ok", DecidedAt: 10, Meta: meta},
		"approval 0":  &projection.Approval{ID: "A-2"},
		"approvals":   []*projection.Approval{{ID: "A-1"}},
		"exec":        &projection.Exec{Project: "demo", ExecRecorded: projection.ExecRecorded{ID: "X-1", Task: "T-1", Command: "make", Code: "x", Cwd: "/", ExitCode: 2, ElapsedMS: 1.5, Stdout: projection.Output{Head: "h", Tail: "t", Bytes: 9, SHA256: "ff"}, AddedVars: []string{"v"}, GitHead: "abc", OccurredAt: 3}, Actor: "me", Meta: meta},
		"execs":       []*projection.Exec{{ExecRecorded: projection.ExecRecorded{ID: "X-2"}}},
		"checkpoint":  &projection.Checkpoint{Project: "demo", ID: "C-1", Label: "l", AtSeq: 5, Task: "T-1", GitHead: "g", Meta: meta},
		"checkpoints": []*projection.Checkpoint{{ID: "C-2"}},
		"project":     &projection.Project{Name: "demo", Description: "d", Archived: true, Counters: projection.Counters{Tasks: 2, Plans: 1}, Events: 9, Meta: meta},
		"projects":    []*projection.Project{{Name: "x"}},
		"step":        &flow.TaskStep{Step: fullTask().Steps[0], Task: "T-2", Version: 4},
		"context":     &flow.TaskContext{Task: "T-2", Context: `{"a":1}`, Version: 3, ContextVersion: 1},
	}
	for name, v := range cases {
		t.Run(name, func(t *testing.T) {
			want, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(Of(v))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("view differs from the projection's JSON\ngot:  %s\nwant: %s", got, want)
			}
		})
	}
}

func TestOf_PassesOthersThrough(t *testing.T) {
	v := map[string]int{"a": 1}
	if got := Of(v); got.(map[string]int)["a"] != 1 {
		t.Errorf("Of(map) = %v", got)
	}
}

func TestObject_EmptyIsAnObject(t *testing.T) {
	b, _ := json.Marshal(TaskOf(&projection.Task{}))
	if !bytes.Contains(b, []byte(`"context":{}`)) {
		t.Errorf("a task without context: %s", b)
	}
}

func TestTaskBriefOf_LiveClaimOnly(t *testing.T) {
	now := time.Unix(1_700_000_100, 0)
	tk := fullTask()
	if got := TaskBriefOf(tk, now).ClaimedBy; got != "alice" {
		t.Errorf("live claim: claimed_by = %q", got)
	}
	if got := TaskBriefOf(tk, now.Add(time.Hour)).ClaimedBy; got != "" {
		t.Errorf("expired claim: claimed_by = %q", got)
	}
}

func TestEventOf_TimeAsInJSON(t *testing.T) {
	ev := flow.Event{Seq: 1, Time: time.Unix(1_700_000_000, 120_000_000).UTC(), Data: json.RawMessage(`{}`)}
	full, _ := json.Marshal(ev)
	var f struct{ Time string }
	json.Unmarshal(full, &f)
	if got := EventOf(ev).Time; got != f.Time {
		t.Errorf("time = %q, the event's JSON has %q", got, f.Time)
	}
}
