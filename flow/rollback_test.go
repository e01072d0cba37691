package flow

import (
	"errors"
	"testing"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow/internal/snapstore"
	"github.com/flowctl/flowctl/flow/scopediff"
	"github.com/flowctl/flowctl/projection"
	"github.com/vmihailenco/msgpack/v5"
)

// rollbackFixture: project p; T-1 done, T-2 doing; checkpoint C-1; then
// T-3 added, T-2 done, an exec record and a granted approval on T-2.
func rollbackFixture(t *testing.T) *Engine {
	t.Helper()
	e := mustOpen(t)
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(e.CreateProject(NewProject{Name: "p"}))
	must(e.AddTask(NewTask{Project: "p", Title: "one"}))
	must(e.AddTask(NewTask{Project: "p", Title: "two"}))
	must(e.MoveTask(Move{Project: "p", ID: "T-1", To: "doing"}))
	must(e.MoveTask(Move{Project: "p", ID: "T-1", To: "done"}))
	must(e.MoveTask(Move{Project: "p", ID: "T-2", To: "doing"}))
	must(e.CreateCheckpoint(NewCheckpoint{Project: "p", Label: "before"}))
	must(e.AddTask(NewTask{Project: "p", Title: "three"}))
	must(e.RecordExec(NewExec{Project: "p", Task: "T-2", Command: "make", Success: true}))
	a, err := e.RequestApproval(NewApproval{Project: "p", Task: "T-2", Message: "ok?"})
	must(a, err)
	must(e.As("reviewer", "r1").DecideApproval(Decision{Project: "p", ID: a.ID, Grant: true}))
	must(e.MoveTask(Move{Project: "p", ID: "T-2", To: "done"}))
	return e
}

func TestRollback_ToCheckpoint(t *testing.T) {
	e := rollbackFixture(t)
	c, err := e.Checkpoint("p", "C-1")
	if err != nil {
		t.Fatal(err)
	}
	before, _, _ := storeHead(e.log)
	dry, err := e.Rollback(RollbackInput{Project: "p", To: Point{Checkpoint: "C-1"}, DryRun: true})
	if err != nil || dry.Applied || dry.ToSeq != c.AtSeq {
		t.Fatalf("dry run = %+v, %v", dry, err)
	}
	if after, _, _ := storeHead(e.log); after != before {
		t.Fatalf("dry run appended: head %d -> %d", before, after)
	}
	world := 0
	for _, ch := range dry.Changes {
		if ch.World != "" {
			world++
		}
	}
	if world != 2 {
		t.Errorf("changes %+v: want the exec record and the granted approval flagged", dry.Changes)
	}
	res, err := e.Rollback(RollbackInput{Project: "p", To: Point{Checkpoint: "C-1"}, Reason: "try again"})
	if err != nil || !res.Applied {
		t.Fatalf("Rollback = %+v, %v", res, err)
	}
	if _, err := e.Task("p", "T-3"); !errors.Is(err, ErrNotFound) {
		t.Errorf("T-3, created after the checkpoint, still there: %v", err)
	}
	t2, err := e.Task("p", "T-2")
	if err != nil || t2.Status != "doing" || t2.Execs != 0 {
		t.Fatalf("T-2 after rollback = %+v, %v", t2, err)
	}
	if _, err := e.Exec("p", "X-1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("exec record after the checkpoint still there: %v", err)
	}
	// Ids are never reused: the next task is T-4, not T-3.
	t4, err := e.AddTask(NewTask{Project: "p", Title: "four"})
	if err != nil || t4.ID != "T-4" {
		t.Fatalf("next task = %+v, %v; want T-4", t4, err)
	}
	// --if-version keeps working: T-2's version is its stream's.
	if _, err := e.MoveTask(Move{Project: "p", ID: "T-2", To: "done", Write: Write{IfVersion: t2.Version}}); err != nil {
		t.Fatalf("move with the restored task's version: %v", err)
	}
}

func TestRollback_ItselfCanBeRolledBack(t *testing.T) {
	e := rollbackFixture(t)
	head, _, _ := storeHead(e.log)
	want := scopeNow(t, e)
	res, err := e.Rollback(RollbackInput{Project: "p", To: Point{Checkpoint: "C-1"}})
	if err != nil || !res.Applied {
		t.Fatalf("Rollback = %+v, %v", res, err)
	}
	if _, err := e.Rollback(RollbackInput{Project: "p", To: Point{Seq: head}}); err != nil {
		t.Fatal(err)
	}
	got := scopeNow(t, e)
	if d := scopediff.Of(want, got); len(d) != 0 {
		t.Fatalf("after rolling the rollback back, the state differs: %+v", d)
	}
}

func scopeNow(t *testing.T, e *Engine) *projection.Scope {
	t.Helper()
	var s *projection.Scope
	err := e.read(func(src source) error {
		var err error
		s, err = snapstore.ScopeOf(src, "p")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRollback_Task(t *testing.T) {
	e := rollbackFixture(t)
	res, err := e.Rollback(RollbackInput{Project: "p", To: Point{Checkpoint: "C-1"}, Task: "T-2"})
	if err != nil || !res.Applied {
		t.Fatalf("Rollback = %+v, %v", res, err)
	}
	if task, err := e.Task("p", "T-3"); err != nil || task.Title != "three" {
		t.Errorf("a task rollback of T-2 touched T-3: %+v, %v", task, err)
	}
	if task, _ := e.Task("p", "T-2"); task.Status != "doing" {
		t.Errorf("T-2 status %s, want doing", task.Status)
	}
	_, err = e.Rollback(RollbackInput{Project: "p", To: Point{Checkpoint: "C-1"}, Task: "T-3"})
	if !errors.Is(err, eventlog.ErrConflict) {
		t.Fatalf("rollback of a task created after the point = %v, want a conflict", err)
	}
}

func TestRollback_NothingToDo(t *testing.T) {
	e := rollbackFixture(t)
	head, _, _ := storeHead(e.log)
	res, err := e.Rollback(RollbackInput{Project: "p", To: Point{Seq: head}})
	if err != nil || res.Applied || len(res.Changes) != 0 {
		t.Fatalf("rollback to now = %+v, %v; want nothing applied", res, err)
	}
}

func TestAt_ReadsThePast(t *testing.T) {
	e := rollbackFixture(t)
	past := e.At("p", Point{Checkpoint: "C-1"})
	t2, err := past.Task("p", "T-2")
	if err != nil || t2.Status != "doing" {
		t.Fatalf("T-2 at C-1 = %+v, %v", t2, err)
	}
	if _, err := past.Task("p", "T-3"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("T-3 at C-1: %v, want not found", err)
	}
	if _, err := past.AddTask(NewTask{Project: "p", Title: "x"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a write through a view = %v, want ErrInvalid", err)
	}
	now, err := e.Task("p", "T-2")
	if err != nil || now.Status != "done" {
		t.Fatalf("T-2 now = %+v, %v", now, err)
	}
}

func TestEngine_Scopes(t *testing.T) {
	e := rollbackFixture(t)
	head, _, _ := storeHead(e.log)
	s, err := e.Scopes("p", Point{Checkpoint: "C-1"}, Point{Seq: head})
	if err != nil {
		t.Fatal(err)
	}
	if s[1].Seq != head {
		t.Fatalf("HEAD resolved to seq %d, want %d", s[1].Seq, head)
	}
	var got []string
	for _, c := range scopediff.Of(s[0].Scope, s[1].Scope) {
		got = append(got, c.Kind+" "+c.ID+" "+c.Op)
	}
	want := []string{"task T-2 changed", "task T-3 added", "approval A-1 added", "exec X-1 added"}
	if len(got) != len(want) {
		t.Fatalf("changes %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("changes %v, want %v", got, want)
		}
	}
}

func TestRollback_TwiceToTheSamePointChangesNothing(t *testing.T) {
	e := rollbackFixture(t)
	if res, err := e.Rollback(RollbackInput{Project: "p", To: Point{Checkpoint: "C-1"}}); err != nil || !res.Applied {
		t.Fatalf("first rollback = %+v, %v", res, err)
	}
	head, _, _ := storeHead(e.log)
	res, err := e.Rollback(RollbackInput{Project: "p", To: Point{Checkpoint: "C-1"}})
	if err != nil || res.Applied || len(res.Changes) != 0 {
		t.Fatalf("second rollback = %+v, %v; want nothing to do", res, err)
	}
	if after, _, _ := storeHead(e.log); after != head {
		t.Fatalf("second rollback appended: head %d -> %d", head, after)
	}
}

func TestRollback_UnknownTaskIsNotFound(t *testing.T) {
	e := rollbackFixture(t)
	_, err := e.Rollback(RollbackInput{Project: "p", To: Point{Checkpoint: "C-1"}, Task: "T-9"})
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("rollback of T-9 = %v, want ErrNotFound", err)
	}
}

func TestRollback_IdempotentRetryReturnsTheFirstResult(t *testing.T) {
	e := rollbackFixture(t)
	in := RollbackInput{Project: "p", To: Point{Checkpoint: "C-1"}, Write: Write{Key: "k"}}
	first, err := e.Rollback(in)
	if err != nil || !first.Applied {
		t.Fatalf("first = %+v, %v", first, err)
	}
	head, _, _ := storeHead(e.log)
	again, err := e.Rollback(in)
	if err != nil || again == nil || !again.Applied || again.Seq != first.Seq || again.ToSeq != first.ToSeq {
		t.Fatalf("retry = %+v, %v; want the first result %+v", again, err, first)
	}
	if after, _, _ := storeHead(e.log); after != head {
		t.Fatalf("retry appended: head %d -> %d", head, after)
	}
}

func TestRollback_RestoredEntityKeepsItsStreamVersion(t *testing.T) {
	e := rollbackFixture(t)
	c2, err := e.CreateCheckpoint(NewCheckpoint{Project: "p", Label: "after"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.MoveTask(Move{Project: "p", ID: "T-3", To: "doing"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Rollback(RollbackInput{Project: "p", To: Point{Checkpoint: "C-1"}}); err != nil { // removes T-3
		t.Fatal(err)
	}
	if _, err := e.Rollback(RollbackInput{Project: "p", To: Point{Checkpoint: c2.ID}}); err != nil { // brings it back
		t.Fatal(err)
	}
	t3, err := e.Task("p", "T-3")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.MoveTask(Move{Project: "p", ID: "T-3", To: "doing", Write: Write{IfVersion: t3.Version}}); err != nil {
		t.Fatalf("move with the restored task's version %d: %v", t3.Version, err)
	}
}

func TestContextHistory_IncludesRollbacks(t *testing.T) {
	e := rollbackFixture(t)
	merge := func(patch string) {
		t.Helper()
		if _, err := e.MergeContext(ContextPatch{Project: "p", ID: "T-1", Patch: patch}); err != nil {
			t.Fatal(err)
		}
	}
	merge(`{"a":1}`)
	c, err := e.CreateCheckpoint(NewCheckpoint{Project: "p"})
	if err != nil {
		t.Fatal(err)
	}
	merge(`{"b":2}`)
	if _, err := e.Rollback(RollbackInput{Project: "p", To: Point{Checkpoint: c.ID}, Task: "T-1"}); err != nil {
		t.Fatal(err)
	}
	merge(`{"b":2}`)
	h, err := e.ContextHistory("p", "T-1", "b")
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, x := range h {
		ops = append(ops, x.Op)
	}
	if want := []string{"set", "unset", "set"}; len(ops) != 3 || ops[0] != want[0] || ops[1] != want[1] || ops[2] != want[2] {
		t.Fatalf("history of b = %v, want %v (set, the rollback's unset, set again)", ops, want)
	}
}

// TestRollback_MovesVersionsForward: every plan and task a rollback of
// the project changes gets a new version, its stream's (a rollback.marked
// event after the rollback.applied one), so that --if-version with the
// version read before the rollback is refused, and the entity's history
// shows the rollback: T-2 and P-1 are changed back, T-4 is removed, T-1
// is left alone.
func TestRollback_MovesVersionsForward(t *testing.T) {
	e := rollbackFixture(t)
	if _, err := e.AddPlan(NewPlan{Project: "p", Title: "plan"}); err != nil {
		t.Fatal(err)
	}
	c, err := e.CreateCheckpoint(NewCheckpoint{Project: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.ClosePlan(ClosePlan{Project: "p", ID: "P-1"}); err != nil {
		t.Fatal(err)
	}
	title := "changed"
	if _, err := e.EditTask(TaskEdit{Project: "p", ID: "T-2", Title: &title}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.AddTask(NewTask{Project: "p", Title: "four"}); err != nil {
		t.Fatal(err)
	}
	before := scopeNow(t, e)
	res, err := e.Rollback(RollbackInput{Project: "p", To: Point{Checkpoint: c.ID}})
	if err != nil || !res.Applied {
		t.Fatalf("Rollback = %+v, %v", res, err)
	}
	after := scopeNow(t, e)
	t2b, t2a := findTask(before, "T-2"), findTask(after, "T-2")
	if t2a.Title != "two" || t2a.Version <= t2b.Version {
		t.Fatalf("T-2 after the rollback: %q at version %d (before: version %d)", t2a.Title, t2a.Version, t2b.Version)
	}
	if _, err := e.EditTask(TaskEdit{Project: "p", ID: "T-2", Title: &title, Write: Write{IfVersion: t2b.Version}}); !errors.Is(err, eventlog.ErrConflict) {
		t.Fatalf("an edit with the version read before the rollback: %v, want a conflict", err)
	}
	if after.Plans[0].Version <= before.Plans[0].Version || after.Plans[0].Status != "open" {
		t.Fatalf("P-1 after the rollback: %+v", after.Plans[0])
	}
	if _, err := e.ClosePlan(ClosePlan{Project: "p", ID: "P-1", Write: Write{IfVersion: before.Plans[0].Version}}); !errors.Is(err, eventlog.ErrConflict) {
		t.Fatalf("closing P-1 with the version read before the rollback: %v, want a conflict", err)
	}
	if got, was := findTask(after, "T-1"), findTask(before, "T-1"); got.Version != was.Version {
		t.Errorf("T-1, which the rollback did not touch, moved from version %d to %d", was.Version, got.Version)
	}
	for _, tc := range []struct {
		stream  string
		removed bool
	}{{projection.TaskStream("p", "T-2"), false}, {projection.TaskStream("p", "T-4"), true}, {projection.PlanStream("p", "P-1"), false}} {
		evs := collect(t, e, Filter{Stream: tc.stream, Raw: true})
		last := evs[len(evs)-1]
		var mark projection.RollbackMarked
		if err := msgpack.Unmarshal(last.Raw, &mark); err != nil || last.Type != projection.TypeRollbackMarked ||
			mark.Rollback != res.Seq || mark.ToSeq != res.ToSeq || mark.Removed != tc.removed {
			t.Errorf("the last event of %s is %s %+v (%v), want the mark of the rollback at seq %d (removed %v)", tc.stream, last.Type, mark, err, res.Seq, tc.removed)
		}
	}
	if _, err := e.Verify(); err != nil {
		t.Fatal(err)
	}
}

func findTask(s *projection.Scope, id string) *projection.Task {
	for _, t := range s.Tasks {
		if t.ID == id {
			return t
		}
	}
	return nil
}

// TestRollback_PointBeforeTheProjectIsRefused: project q begins after
// p's events; a rollback of q to a point before its first event is a
// conflict (dry or not) that appends nothing, and Begun says q did not
// exist there.
func TestRollback_PointBeforeTheProjectIsRefused(t *testing.T) {
	e := rollbackFixture(t)
	before, _, _ := storeHead(e.log)
	if _, err := e.CreateProject(NewProject{Name: "q"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.AddTask(NewTask{Project: "q", Title: "one"}); err != nil {
		t.Fatal(err)
	}
	head, _, _ := storeHead(e.log)
	for _, dry := range []bool{true, false} {
		for _, to := range []Point{{Seq: 0}, {Seq: before}} {
			if _, err := e.Rollback(RollbackInput{Project: "q", To: to, DryRun: dry}); !errors.Is(err, eventlog.ErrConflict) {
				t.Errorf("rollback of q to %s (dry %v): %v, want a conflict", to, dry, err)
			}
		}
	}
	if now, _, _ := storeHead(e.log); now != head {
		t.Fatalf("refused rollbacks moved the head from %d to %d", head, now)
	}
	if err := e.Begun("q", Point{Seq: before}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Begun(q, %d) = %v, want not found", before, err)
	}
	if err := e.Begun("q", Point{Seq: before + 1}); err != nil {
		t.Errorf("Begun(q, %d), its first event: %v", before+1, err)
	}
}
