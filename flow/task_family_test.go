package flow

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"pgregory.net/rapid"
)

func familyFixture(tb testing.TB) *Engine {
	tb.Helper()
	e := mustOpen(tb)
	if _, err := e.CreateProject(NewProject{Name: "p"}); err != nil {
		tb.Fatal(err)
	}
	return e
}

func head(tb testing.TB, e *Engine) uint64 {
	tb.Helper()
	var h uint64
	if err := e.Read(func(r *Reader) error { h = r.Head(); return nil }); err != nil {
		tb.Fatal(err)
	}
	return h
}

// checkFamily checks, on e's state, that every task's children are
// exactly the tasks whose parent it is, and that no chain of parents
// loops.
func checkFamily(tb testing.TB, e *Engine) {
	tb.Helper()
	tasks, err := e.Tasks("p", TaskFilter{})
	if err != nil {
		tb.Fatal(err)
	}
	parent := map[string]string{}
	want := map[string][]string{}
	for _, t := range tasks {
		parent[t.ID] = t.Parent
		if t.Parent != "" {
			want[t.Parent] = append(want[t.Parent], t.ID)
		}
	}
	for _, t := range tasks {
		kids, err := e.Children("p", t.ID)
		if err != nil {
			tb.Fatal(err)
		}
		var got []string
		for _, k := range kids {
			got = append(got, k.ID)
		}
		if !slices.Equal(got, want[t.ID]) {
			tb.Fatalf("children of %s = %v, want the tasks whose parent it is: %v", t.ID, got, want[t.ID])
		}
		seen := map[string]bool{}
		for cur := t.ID; cur != ""; cur = parent[cur] {
			if seen[cur] {
				tb.Fatalf("the parents of %s loop at %s", t.ID, cur)
			}
			seen[cur] = true
		}
	}
}

// TestProperty_ParentChildClosure: on any history of task adds under
// parents, re-parenting (cycles included, which must be refused), status
// moves and rollbacks of the project or of one task, the children of
// every task are the inverse of the parent links and no parent chain
// loops; a refused command changes nothing.
func TestProperty_ParentChildClosure(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		e := familyFixture(t)
		n := 0
		task := func(label string) string {
			return projection.ShortID("T", rapid.IntRange(1, max(n, 1)).Draw(rt, label))
		}
		var marks []uint64
		for range rapid.IntRange(1, 30).Draw(rt, "ops") {
			before := head(t, e)
			var err error
			switch op := rapid.IntRange(0, 5).Draw(rt, "op"); {
			case op == 0 || n == 0:
				in := NewTask{Project: "p", Title: "t"}
				if n > 0 && rapid.Bool().Draw(rt, "withParent") {
					in.Parent = task("parent")
				}
				if _, err = e.AddTask(in); err == nil {
					n++
				}
			case op == 1 || op == 2:
				parent := ""
				if rapid.IntRange(0, 3).Draw(rt, "detach") > 0 {
					parent = task("newParent")
				}
				_, err = e.EditTask(TaskEdit{Project: "p", ID: task("child"), Parent: &parent})
				if errors.Is(err, ErrParentCycle) && !errors.Is(err, store.ErrConflict) {
					rt.Fatalf("ErrParentCycle is not a conflict: %v", err)
				}
			case op == 3:
				to := rapid.SampledFrom([]string{"doing", "done", "todo", "cancelled"}).Draw(rt, "to")
				_, err = e.MoveTask(Move{Project: "p", ID: task("moved"), To: to, Force: rapid.Bool().Draw(rt, "force")})
			case op == 4:
				marks = append(marks, head(t, e))
			case op == 5 && len(marks) > 0:
				in := RollbackInput{Project: "p", To: Point{Seq: rapid.SampledFrom(marks).Draw(rt, "to")}}
				if rapid.Bool().Draw(rt, "oneTask") {
					in.Task = task("rolledBack")
				}
				_, err = e.Rollback(in)
			}
			if err != nil && head(t, e) != before {
				rt.Fatalf("a refused command (%v) appended events", err)
			}
			checkFamily(t, e)
		}
	})
}

func TestEngine_Subtasks(t *testing.T) {
	e := familyFixture(t)
	add := func(in NewTask) *projection.Task {
		t.Helper()
		in.Project = "p"
		tk, err := e.AddTask(in)
		if err != nil {
			t.Fatal(err)
		}
		return tk
	}
	parent := add(NewTask{Title: "release"})
	a := add(NewTask{Title: "notes", Parent: "T-1"})
	b := add(NewTask{Title: "tag", Parent: "t-1"})
	if a.Parent != "T-1" || b.Parent != "T-1" {
		t.Fatalf("parents = %q, %q; want T-1", a.Parent, b.Parent)
	}
	t.Run("ErrNotFound", func(t *testing.T) {
		if _, err := e.AddTask(NewTask{Project: "p", Title: "x", Parent: "T-99"}); !errors.Is(err, ErrNotFound) {
			t.Errorf("parent T-99: %v, want ErrNotFound", err)
		}
	})
	t.Run("ErrParentCycle", func(t *testing.T) {
		for _, p := range []string{"T-1", "T-2"} { // itself, its own child
			id := map[string]string{"T-1": "T-1", "T-2": "T-1"}[p]
			if _, err := e.EditTask(TaskEdit{Project: "p", ID: id, Parent: &p}); !errors.Is(err, ErrParentCycle) {
				t.Errorf("T-1 under %s: %v, want ErrParentCycle", p, err)
			}
		}
	})
	t.Run("DoneBlockedByOpenChildren", func(t *testing.T) {
		mustMove(t, e, "T-1", "doing")
		_, err := e.MoveTask(Move{Project: "p", ID: "T-1", To: "done"})
		if !errors.Is(err, ErrBlocked) || ErrorCode(err) != CodeConflict || !strings.Contains(err.Error(), "T-2 (todo), T-3 (todo)") {
			t.Fatalf("done with open subtasks: %v, want ErrBlocked (conflict)", err)
		}
		mustMove(t, e, "T-2", "doing")
		mustMove(t, e, "T-2", "done")
		mustMove(t, e, "T-3", "cancelled")
		f, err := e.TaskFamily("p", "T-1")
		if err != nil || f.Progress != 100 || len(f.Children) != 2 {
			t.Fatalf("family = %+v, %v; want 2 children, progress 100 (one done, one cancelled)", f, err)
		}
		mustMove(t, e, "T-1", "done")
	})
	t.Run("NoOpenChildUnderDoneParent", func(t *testing.T) {
		if _, err := e.AddTask(NewTask{Project: "p", Title: "late", Parent: "T-1"}); !errors.Is(err, store.ErrConflict) {
			t.Errorf("a subtask of a done task: %v, want a conflict", err)
		}
	})
	t.Run("Detach", func(t *testing.T) {
		none := ""
		tk, err := e.EditTask(TaskEdit{Project: "p", ID: "T-2", Parent: &none})
		if err != nil || tk.Parent != "" {
			t.Fatalf("detach: %+v, %v", tk, err)
		}
		kids, _ := e.Children("p", parent.ID)
		if len(kids) != 1 || kids[0].ID != "T-3" {
			t.Errorf("children after detaching T-2 = %v, want [T-3]", kids)
		}
	})
}

func mustMove(tb testing.TB, e *Engine, id, to string) {
	tb.Helper()
	if _, err := e.MoveTask(Move{Project: "p", ID: id, To: to}); err != nil {
		tb.Fatalf("%s -> %s: %v", id, to, err)
	}
}

// TestProperty_StepAttempts: on any sequence of step moves and retries,
// a step's attempt is 1 plus the retries accepted once it started (0
// before), a retry is accepted exactly from failed, and its times follow
// its moves.
func TestProperty_StepAttempts(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		e := familyFixture(t)
		if _, err := e.AddTask(NewTask{Project: "p", Title: "t"}); err != nil {
			rt.Fatal(err)
		}
		if _, err := e.AddStep(NewStep{Project: "p", Task: "T-1", Title: "s"}); err != nil {
			rt.Fatal(err)
		}
		started, retries := false, 0
		for range rapid.IntRange(1, 25).Draw(rt, "moves") {
			before, err := e.Step("p", "T-1.1")
			if err != nil {
				rt.Fatal(err)
			}
			var st *TaskStep
			if rapid.IntRange(0, 2).Draw(rt, "retry") == 0 {
				st, err = e.StepRetry("p", "T-1.1", "", Write{})
				if (err == nil) != (before.Status == projection.StepFailed) {
					rt.Fatalf("retry from %s: %v", before.Status, err)
				}
				if err == nil {
					retries++
				}
			} else {
				to := rapid.SampledFrom([]string{"in_progress", "completed", "failed", "skipped"}).Draw(rt, "to")
				st, err = e.MoveStep(StepMove{Project: "p", ID: "T-1.1", To: to})
				if err == nil && to == "in_progress" {
					started = true
				}
			}
			if err != nil {
				continue
			}
			want := 0
			if started {
				want = 1 + retries
			}
			if st.Attempt != want {
				rt.Fatalf("attempt = %d after %d retries (started %v), want %d", st.Attempt, retries, started, want)
			}
			switch st.Status {
			case projection.StepInProgress:
				if st.StartedAt == 0 || st.CompletedAt != 0 {
					rt.Fatalf("in progress: started %d, completed %d", st.StartedAt, st.CompletedAt)
				}
			case projection.StepCompleted, projection.StepFailed, projection.StepSkipped:
				if st.CompletedAt == 0 || st.CompletedAt < st.StartedAt {
					rt.Fatalf("%s: started %d, completed %d", st.Status, st.StartedAt, st.CompletedAt)
				}
			}
		}
	})
}

func TestEngine_StepResultData(t *testing.T) {
	e := familyFixture(t)
	if _, err := e.AddTask(NewTask{Project: "p", Title: "t"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.AddStep(NewStep{Project: "p", Task: "T-1", Title: "s"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.MoveStep(StepMove{Project: "p", ID: "T-1.1", To: "in_progress"}); err != nil {
		t.Fatal(err)
	}
	before := head(t, e)
	if _, err := e.MoveStep(StepMove{Project: "p", ID: "T-1.1", To: "completed", ResultData: `{"k":1,"k":2}`}); !errors.Is(err, ErrInvalid) || head(t, e) != before {
		t.Fatalf("duplicate keys: %v, want ErrInvalid and nothing appended", err)
	}
	st, err := e.MoveStep(StepMove{Project: "p", ID: "T-1.1", To: "completed", Result: "ok", ResultData: `{"passed": 41}`})
	if err != nil || st.ResultData != `{"passed": 41}` || st.Result != "ok" || st.Attempt != 1 {
		t.Fatalf("step = %+v, %v", st, err)
	}
	if _, err := e.StepRetry("p", "T-1.1", "", Write{}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("retry of a completed step: %v, want a conflict", err)
	}
}

func TestParseDue(t *testing.T) {
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"":                     {},
		"+3d":                  now.Add(72 * time.Hour),
		"+4h":                  now.Add(4 * time.Hour),
		"+2w":                  now.Add(14 * 24 * time.Hour),
		"+30m":                 now.Add(30 * time.Minute),
		"2026-12-01T17:00:00Z": time.Date(2026, 12, 1, 17, 0, 0, 0, time.UTC),
		"2020-01-02":           time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC), // the past is allowed
	} {
		got, err := ParseDue(in, now)
		if err != nil || (want.IsZero() && got != 0) || (!want.IsZero() && !got.Std().Equal(want)) {
			t.Errorf("ParseDue(%q) = %v, %v; want %v", in, got.Std(), err, want)
		}
	}
	for _, in := range []string{"3d", "+d", "+-3d", "+3y", "tomorrow", "+99999w", "2026-13-01"} {
		if _, err := ParseDue(in, now); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseDue(%q): %v, want ErrInvalid", in, err)
		}
	}
}

// TestProperty_ReadyOrder: ready lists its tasks sorted by priority
// (higher first), then due date (sooner first, none last), then age.
func TestProperty_ReadyOrder(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		e := familyFixture(t)
		base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		for range rapid.IntRange(1, 12).Draw(rt, "tasks") {
			in := NewTask{Project: "p", Title: "t", Priority: rapid.IntRange(0, 2).Draw(rt, "pri")}
			if d := rapid.IntRange(-1, 3).Draw(rt, "due"); d >= 0 {
				in.Due = projection.TimeOf(base.Add(time.Duration(d) * 24 * time.Hour))
			}
			if _, err := e.AddTask(in); err != nil {
				rt.Fatal(err)
			}
		}
		rs, err := e.Ready("p", false)
		if err != nil {
			rt.Fatal(err)
		}
		for i := 1; i < len(rs); i++ {
			a, b := rs[i-1].Task, rs[i].Task
			key := func(t *projection.Task) []int64 {
				due := int64(t.Due)
				if due == 0 {
					due = 1 << 62
				}
				n, _ := projection.IDNumber("T", t.ID)
				return []int64{-int64(t.Priority), due, int64(t.CreatedAt), int64(n)}
			}
			if slices.Compare(key(a), key(b)) > 0 {
				rt.Fatalf("ready lists %s (pri %d, due %d) before %s (pri %d, due %d)", a.ID, a.Priority, a.Due, b.ID, b.Priority, b.Due)
			}
		}
	})
}
