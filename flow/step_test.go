package flow

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/projection"
)

// stepAdd adds a step to task and fails the test on error.
func stepAdd(t *testing.T, e *Engine, task, title string) *TaskStep {
	t.Helper()
	s, err := e.AddStep(NewStep{Project: "p", Task: task, Title: title})
	if err != nil {
		t.Fatalf("AddStep(%s, %q): %v", task, title, err)
	}
	return s
}

// stepTo moves a step and fails the test on error.
func stepTo(t *testing.T, e *Engine, in StepMove) *TaskStep {
	t.Helper()
	in.Project = "p"
	s, err := e.MoveStep(in)
	if err != nil {
		t.Fatalf("MoveStep(%+v): %v", in, err)
	}
	return s
}

func stepEventCount(t *testing.T, e *Engine) int {
	t.Helper()
	return len(collect(t, e, Filter{Type: "step.*"}))
}

func pct(n int) *int { return &n }

func TestEngine_AddStep(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		e := ctxFixture(t)
		a := stepAdd(t, e, "T-1", "read")
		b := stepAdd(t, e, "T-1", "write")
		c := stepAdd(t, e, "T-2", "other")
		for _, tc := range []struct {
			got  *TaskStep
			id   string
			task string
		}{{a, "T-1.1", "T-1"}, {b, "T-1.2", "T-1"}, {c, "T-2.1", "T-2"}} {
			if tc.got.ID != tc.id || tc.got.Task != tc.task || tc.got.Status != projection.StepPending || tc.got.Progress != 0 {
				t.Errorf("step = %+v, want %s of %s, pending", tc.got, tc.id, tc.task)
			}
		}
		task, err := e.Task("p", "T-1")
		if err != nil || len(task.Steps) != 2 || b.Version != task.Version {
			t.Fatalf("task = %+v, %v; want 2 steps at version %d", task, err, b.Version)
		}
		steps, err := e.Steps("p", "T-1")
		if err != nil || len(steps) != 2 || steps[1].Title != "write" {
			t.Errorf("Steps = %+v, %v", steps, err)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		e := ctxFixture(t)
		for _, title := range []string{"", "  ", "x\xff", strings.Repeat("x", MaxTitle+1)} {
			if _, err := e.AddStep(NewStep{Project: "p", Task: "T-1", Title: title}); !errors.Is(err, ErrInvalid) {
				t.Errorf("AddStep(%q): %v, want ErrInvalid", title, err)
			}
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		e := ctxFixture(t)
		if _, err := e.AddStep(NewStep{Project: "p", Task: "T-9", Title: "x"}); !errors.Is(err, ErrNotFound) {
			t.Errorf("unknown task: %v, want ErrNotFound", err)
		}
	})
	t.Run("ErrConflict", func(t *testing.T) {
		e := ctxFixture(t)
		s := stepAdd(t, e, "T-1", "a")
		_, err := e.AddStep(NewStep{Project: "p", Task: "T-1", Title: "b", Write: Write{IfVersion: s.Version - 1}})
		if !errors.Is(err, eventlog.ErrConflict) {
			t.Errorf("stale IfVersion: %v, want a conflict", err)
		}
		if _, err := e.MoveTask(Move{Project: "p", ID: "T-2", To: projection.StatusCancelled}); err != nil {
			t.Fatal(err)
		}
		_, err = e.AddStep(NewStep{Project: "p", Task: "T-2", Title: "late"})
		if !errors.Is(err, eventlog.ErrConflict) || !strings.Contains(err.Error(), "cancelled") {
			t.Errorf("step on a cancelled task: %v, want a conflict naming the status", err)
		}
		if n := stepEventCount(t, e); n != 1 {
			t.Errorf("%d step events, want 1", n)
		}
	})
	t.Run("Idempotent", func(t *testing.T) {
		e := ctxFixture(t)
		in := NewStep{Project: "p", Task: "T-1", Title: "once", Write: Write{Key: "k"}}
		first, err := e.AddStep(in)
		if err != nil {
			t.Fatal(err)
		}
		again, err := e.AddStep(in)
		if err != nil || *again != *first {
			t.Errorf("retry = %+v, %v; want %+v", again, err, first)
		}
		if n := stepEventCount(t, e); n != 1 {
			t.Errorf("%d step events after a retry, want 1", n)
		}
	})
}

func TestEngine_MoveStep(t *testing.T) {
	t.Run("Allowed", func(t *testing.T) {
		paths := [][]string{
			{"in_progress", "completed"},
			{"in_progress", "failed"},
			{"in_progress", "skipped"},
			{"skipped"},
		}
		for _, path := range paths {
			e := ctxFixture(t)
			s := stepAdd(t, e, "T-1", "x")
			for _, to := range path {
				s = stepTo(t, e, StepMove{ID: s.ID, To: to})
				if s.Status != to {
					t.Errorf("path %v: status %s, want %s", path, s.Status, to)
				}
			}
		}
	})
	t.Run("Refused", func(t *testing.T) {
		tests := []struct {
			from []string // moves to make first
			to   string
		}{
			{nil, "completed"},
			{nil, "failed"},
			{[]string{"in_progress", "completed"}, "in_progress"},
			{[]string{"in_progress", "completed"}, "failed"},
			{[]string{"in_progress", "failed"}, "completed"},
			{[]string{"skipped"}, "in_progress"},
		}
		for _, tt := range tests {
			e := ctxFixture(t)
			s := stepAdd(t, e, "T-1", "x")
			for _, to := range tt.from {
				s = stepTo(t, e, StepMove{ID: s.ID, To: to})
			}
			before := stepEventCount(t, e)
			_, err := e.MoveStep(StepMove{Project: "p", ID: s.ID, To: tt.to})
			if !errors.Is(err, eventlog.ErrConflict) || !strings.Contains(err.Error(), "can move to") {
				t.Errorf("%s -> %s: %v, want a conflict naming the allowed moves", s.Status, tt.to, err)
			}
			if n := stepEventCount(t, e); n != before {
				t.Errorf("%s -> %s appended %d events", s.Status, tt.to, n-before)
			}
		}
	})
	t.Run("RefusedNamesMoves", func(t *testing.T) {
		e := ctxFixture(t)
		s := stepAdd(t, e, "T-1", "x")
		_, err := e.MoveStep(StepMove{Project: "p", ID: s.ID, To: "completed"})
		for _, fact := range []string{"T-1.1", "pending", "in_progress (step start)", "skipped (step skip)"} {
			if err == nil || !strings.Contains(err.Error(), fact) {
				t.Errorf("error %v does not mention %q", err, fact)
			}
		}
	})
	t.Run("Records", func(t *testing.T) {
		e := ctxFixture(t)
		a := stepAdd(t, e, "T-1", "a")
		stepTo(t, e, StepMove{ID: a.ID, To: "in_progress", Note: "go"})
		done := stepTo(t, e, StepMove{ID: a.ID, To: "completed", Result: "all green"})
		if done.Progress != 100 || done.Result != "all green" || done.Note != "go" {
			t.Errorf("done step = %+v, want progress 100, result and note kept", done)
		}
		b := stepAdd(t, e, "T-1", "b")
		stepTo(t, e, StepMove{ID: b.ID, To: "in_progress"})
		failed := stepTo(t, e, StepMove{ID: b.ID, To: "failed", Error: "exit 1"})
		if failed.Error != "exit 1" || failed.Status != "failed" {
			t.Errorf("failed step = %+v", failed)
		}
	})
	t.Run("NoOp", func(t *testing.T) {
		e := ctxFixture(t)
		s := stepAdd(t, e, "T-1", "a")
		stepTo(t, e, StepMove{ID: s.ID, To: "in_progress"})
		stepTo(t, e, StepMove{ID: s.ID, To: "completed", Result: "r"})
		before := stepEventCount(t, e)
		again := stepTo(t, e, StepMove{ID: s.ID, To: "completed", Result: "r"})
		if n := stepEventCount(t, e); n != before || again.Status != "completed" {
			t.Errorf("repeating done appended %d events, step %+v", n-before, again)
		}
		_, err := e.MoveStep(StepMove{Project: "p", ID: s.ID, To: "completed", Result: "other"})
		if !errors.Is(err, eventlog.ErrConflict) {
			t.Errorf("changing a completed step's result: %v, want a conflict", err)
		}
		_, err = e.MoveStep(StepMove{Project: "p", ID: s.ID, To: "completed", Write: Write{IfVersion: again.Version + 5}})
		if !errors.Is(err, eventlog.ErrConflict) {
			t.Errorf("no-op with a stale IfVersion: %v, want a conflict", err)
		}
	})
	t.Run("TaskClosed", func(t *testing.T) {
		e := ctxFixture(t)
		s := stepAdd(t, e, "T-1", "a")
		for _, to := range []string{"doing", "done"} {
			if _, err := e.MoveTask(Move{Project: "p", ID: "T-1", To: to}); err != nil {
				t.Fatal(err)
			}
		}
		_, err := e.MoveStep(StepMove{Project: "p", ID: s.ID, To: "in_progress"})
		if !errors.Is(err, eventlog.ErrConflict) || !strings.Contains(err.Error(), "done") {
			t.Errorf("step of a done task: %v, want a conflict", err)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		e := ctxFixture(t)
		stepAdd(t, e, "T-1", "a")
		for _, id := range []string{"T-1.2", "T-9.1"} {
			if _, err := e.MoveStep(StepMove{Project: "p", ID: id, To: "in_progress"}); !errors.Is(err, ErrNotFound) {
				t.Errorf("MoveStep(%s): %v, want ErrNotFound", id, err)
			}
			if _, err := e.Step("p", id); !errors.Is(err, ErrNotFound) {
				t.Errorf("Step(%s): %v, want ErrNotFound", id, err)
			}
		}
		if _, err := e.Steps("p", "T-9"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Steps(T-9): %v, want ErrNotFound", err)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		e := ctxFixture(t)
		s := stepAdd(t, e, "T-1", "a")
		for name, in := range map[string]StepMove{
			"Pending":          {ID: s.ID, To: "pending"},
			"UnknownStatus":    {ID: s.ID, To: "finished"},
			"BadID":            {ID: "T-1", To: "in_progress"},
			"ProgressOnDone":   {ID: s.ID, To: "completed", Progress: pct(50)},
			"BadNote":          {ID: s.ID, To: "in_progress", Note: "\xff"},
			"ErrorTooLong":     {ID: s.ID, To: "failed", Error: strings.Repeat("e", MaxText+1)},
			"ProgressNegative": {ID: s.ID, To: "in_progress", Progress: pct(-1)},
		} {
			in.Project = "p"
			if _, err := e.MoveStep(in); !errors.Is(err, ErrInvalid) {
				t.Errorf("%s: %v, want ErrInvalid", name, err)
			}
		}
	})
}

func TestEngine_StepProgress(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		e := ctxFixture(t)
		s := stepAdd(t, e, "T-1", "a")
		s = stepTo(t, e, StepMove{ID: s.ID, To: "in_progress", Progress: pct(0)})
		for _, p := range []int{0, 40, 100, 30} {
			s = stepTo(t, e, StepMove{ID: s.ID, To: "in_progress", Progress: pct(p), Note: "at " + strconv.Itoa(p)})
			if s.Progress != p || s.Status != "in_progress" {
				t.Errorf("after progress %d: %+v", p, s)
			}
		}
	})
	t.Run("StartsPending", func(t *testing.T) {
		e := ctxFixture(t)
		s := stepAdd(t, e, "T-1", "a")
		s = stepTo(t, e, StepMove{ID: s.ID, To: "in_progress", Progress: pct(25)})
		if s.Status != "in_progress" || s.Progress != 25 {
			t.Errorf("progress on a pending step: %+v, want in_progress at 25", s)
		}
		if n := stepEventCount(t, e); n != 2 {
			t.Errorf("%d step events, want 2 (added, one move)", n)
		}
	})
	t.Run("SameAppendsNothing", func(t *testing.T) {
		e := ctxFixture(t)
		s := stepAdd(t, e, "T-1", "a")
		stepTo(t, e, StepMove{ID: s.ID, To: "in_progress", Progress: pct(10)})
		stepTo(t, e, StepMove{ID: s.ID, To: "in_progress", Progress: pct(10)})
		if n := stepEventCount(t, e); n != 2 {
			t.Errorf("%d step events, want 2", n)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		e := ctxFixture(t)
		s := stepAdd(t, e, "T-1", "a")
		for _, p := range []int{-1, 101, 1000} {
			if _, err := e.MoveStep(StepMove{Project: "p", ID: s.ID, To: "in_progress", Progress: pct(p)}); !errors.Is(err, ErrInvalid) {
				t.Errorf("progress %d: %v, want ErrInvalid", p, err)
			}
		}
	})
	t.Run("ErrConflict", func(t *testing.T) {
		e := ctxFixture(t)
		s := stepAdd(t, e, "T-1", "a")
		stepTo(t, e, StepMove{ID: s.ID, To: "skipped"})
		_, err := e.MoveStep(StepMove{Project: "p", ID: s.ID, To: "in_progress", Progress: pct(50)})
		if !errors.Is(err, eventlog.ErrConflict) {
			t.Errorf("progress on a skipped step: %v, want a conflict", err)
		}
	})
}
