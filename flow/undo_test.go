package flow

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"pgregory.net/rapid"
)

// headSeq returns the seq of the file's last event.
func headSeq(tb interface{ Fatal(...any) }, e *Engine) uint64 {
	seq, _, err := storeHead(e.log)
	if err != nil {
		tb.Fatal(err)
	}
	return seq
}

func TestUndo_WalksBackCommandByCommand(t *testing.T) {
	e := apprFixture(t) // project, T-1 added, T-1 started
	if _, err := e.MergeContext(ContextPatch{Project: "website", ID: "T-1", Patch: `{"branch":"main"}`}); err != nil {
		t.Fatal(err)
	}
	events := apprCount(t, e)
	res, err := e.Undo(UndoInput{Project: "website", DryRun: true})
	if err != nil || res.Applied || len(res.Events) != 1 || res.Events[0].Type != projection.TypeTaskContextMerged {
		t.Fatalf("dry run = %+v, %v", res, err)
	}
	if n := apprCount(t, e); n != events {
		t.Errorf("the dry run appended %d events", n-events)
	}
	if _, err := e.Undo(UndoInput{Project: "website"}); err != nil {
		t.Fatal(err)
	}
	tk, _ := e.Task("website", "T-1")
	if len(tk.Context) != 0 && string(tk.Context) != "{}" || tk.Status != projection.StatusDoing {
		t.Errorf("after one undo: context %s, status %s; want none, doing", tk.Context, tk.Status)
	}
	if _, err := e.Undo(UndoInput{Project: "website"}); err != nil { // the start, not a redo of the merge
		t.Fatal(err)
	}
	if tk, _ = e.Task("website", "T-1"); tk.Status != projection.StatusTodo || len(tk.Context) != 0 && string(tk.Context) != "{}" {
		t.Errorf("after two undos: %s %s; want todo, no context", tk.Status, tk.Context)
	}
	if _, err := e.Undo(UndoInput{Project: "website"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Task("website", "T-1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("after three undos T-1: %v, want gone", err)
	}
	before := apprCount(t, e)
	if _, err := e.Undo(UndoInput{Project: "website"}); !errors.Is(err, store.ErrConflict) {
		t.Errorf("undo of the project's creation: %v, want a conflict", err)
	}
	if n := apprCount(t, e); n != before {
		t.Errorf("the refused undo appended %d events", n-before)
	}
	if n := len(collect(t, e, Filter{Type: projection.TypeTaskContextMerged})); n != 1 {
		t.Errorf("history lost the merge: %d events", n)
	}
}

func TestUndo_RefusesWhatAnotherCommandChanged(t *testing.T) {
	e := apprFixture(t)
	apprTask(t, e, "other") // T-2, the tester's last command
	bob := e.As("bob", "b1")
	if _, err := bob.EditTask(TaskEdit{Project: "website", ID: "T-2", Title: ptr("renamed")}); err != nil {
		t.Fatal(err)
	}
	before := apprCount(t, e)
	_, err := e.Undo(UndoInput{Project: "website"})
	if !errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), "task T-2") || !strings.Contains(err.Error(), "bob") {
		t.Errorf("undo of a task bob changed since: %v, want a conflict naming T-2 and bob", err)
	}
	if n := apprCount(t, e); n != before {
		t.Errorf("the refused undo appended %d events", n-before)
	}
	// bob's own undo takes his edit back; then the tester's goes through.
	if _, err := bob.Undo(UndoInput{Project: "website"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Undo(UndoInput{Project: "website"}); err != nil {
		t.Errorf("undo after bob's undo: %v", err)
	}
	if _, err := e.Task("website", "T-2"); !errors.Is(err, ErrNotFound) {
		t.Errorf("T-2 after the undo: %v, want gone", err)
	}
	if _, err := e.As("carol", "").Undo(UndoInput{Project: "website"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("undo by an actor with no command: %v, want ErrNotFound", err)
	}
}

func ptr[T any](v T) *T { return &v }

// undoMachine makes a random history of one actor's commands in one
// project, remembering where each command that appended began.
type undoMachine struct {
	e      *Engine
	starts []uint64 // the first seq of each command, in order
}

func (m *undoMachine) do(t *rapid.T, run func() error) {
	before := headSeq(t, m.e)
	if err := run(); err != nil {
		if c := ErrorCode(err); c == CodeInternal || c == CodeCorrupt {
			t.Fatalf("command failed with %s: %v", c, err)
		}
	}
	if after := headSeq(t, m.e); after > before {
		m.starts = append(m.starts, before+1)
	}
}

func (m *undoMachine) task(t *rapid.T) string {
	p, err := m.e.Project("p")
	if err != nil {
		t.Fatal(err)
	}
	return projection.ShortID(projection.PrefixTask, rapid.IntRange(1, p.Counters.Tasks+1).Draw(t, "task"))
}

func (m *undoMachine) step(t *rapid.T) {
	e := m.e
	switch rapid.IntRange(0, 11).Draw(t, "op") {
	case 0, 1:
		m.do(t, func() error { _, err := e.AddTask(NewTask{Project: "p", Title: "t"}); return err })
	case 2:
		to := rapid.SampledFrom([]string{"todo", "doing", "done", "blocked", "cancelled"}).Draw(t, "to")
		id := m.task(t)
		m.do(t, func() error { _, err := e.MoveTask(Move{Project: "p", ID: id, To: to, Force: true}); return err })
	case 3:
		id, v := m.task(t), rapid.IntRange(0, 3).Draw(t, "v")
		m.do(t, func() error {
			_, err := e.MergeContext(ContextPatch{Project: "p", ID: id, Patch: fmt.Sprintf(`{"k%d":%d}`, v, v)})
			return err
		})
	case 4:
		id := m.task(t)
		m.do(t, func() error { _, err := e.AddStep(NewStep{Project: "p", Task: id, Title: "s"}); return err })
	case 5:
		id := m.task(t)
		m.do(t, func() error { _, err := e.AddNote(NewNote{Project: "p", Task: id, Text: "n"}); return err })
	case 6:
		a, b := m.task(t), m.task(t)
		m.do(t, func() error { _, err := e.AddDep(DepChange{Project: "p", ID: a, Dep: b}); return err })
	case 7:
		id := m.task(t)
		m.do(t, func() error {
			_, err := e.RequestApproval(NewApproval{Project: "p", Task: id, Message: "m"})
			return err
		})
	case 8:
		id, title := m.task(t), rapid.SampledFrom([]string{"x", "y"}).Draw(t, "title")
		m.do(t, func() error { _, err := e.EditTask(TaskEdit{Project: "p", ID: id, Title: &title}); return err })
	case 9:
		m.do(t, func() error { _, err := e.CreateCheckpoint(NewCheckpoint{Project: "p"}); return err })
	case 10:
		v := rapid.SampledFrom([]string{"allow", "deny"}).Draw(t, "setting")
		m.do(t, func() error {
			_, err := e.SetProjectSetting(SetSetting{Project: "p", Key: SettingSelfGrant, Value: v})
			return err
		})
	case 11:
		head := headSeq(t, e)
		to := rapid.Uint64Range(1, head).Draw(t, "to")
		m.do(t, func() error { _, err := e.Rollback(RollbackInput{Project: "p", To: Point{Seq: to}}); return err })
	}
}

// stateOf encodes what a rollback restores of a project's state: every
// plan, task, approval and exec record without its stream position, and
// the project's own fields.
func stateOf(t *rapid.T, s *projection.Scope) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "project %q %t %v\n", s.Project.Description, s.Project.Archived, s.Project.Settings)
	add := func(kind, id string, enc []byte, err error) {
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %s %x\n", kind, id, enc)
	}
	for _, v := range s.Plans {
		enc, err := stateBytes(v)
		add("plan", v.ID, enc, err)
	}
	for _, v := range s.Tasks {
		enc, err := stateBytes(v)
		add("task", v.ID, enc, err)
	}
	for _, v := range s.Approvals {
		enc, err := stateBytes(v)
		add("approval", v.ID, enc, err)
	}
	for _, v := range s.Execs {
		enc, err := stateBytes(v)
		add("exec", v.ID, enc, err)
	}
	return b.String()
}

// TestProperty_UndoEqualsRollback: after k undos of one actor's random
// history, the project's state is its state just before the k-th last
// command (what a rollback to that seq restores).
func TestProperty_UndoEqualsRollback(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		e := mustOpen(t)
		if _, err := e.CreateProject(NewProject{Name: "p"}); err != nil {
			rt.Fatal(err)
		}
		m := &undoMachine{e: e}
		for range rapid.IntRange(1, 25).Draw(rt, "commands") {
			m.step(rt)
		}
		k := rapid.IntRange(0, len(m.starts)).Draw(rt, "undos")
		for i := 1; i <= k; i++ {
			res, err := e.Undo(UndoInput{Project: "p"})
			if err != nil {
				rt.Fatalf("undo %d: %v", i, err)
			}
			start := m.starts[len(m.starts)-i]
			if res.First != start {
				rt.Fatalf("undo %d reverted seqs %d-%d, want the command at seq %d", i, res.First, res.Last, start)
			}
			states, err := e.Scopes("p", Point{Seq: start - 1}, Point{Seq: headSeq(rt, e)})
			if err != nil {
				rt.Fatal(err)
			}
			if want, got := stateOf(rt, states[0].Scope), stateOf(rt, states[1].Scope); got != want {
				rt.Fatalf("after %d undos the state is not the one at seq %d:\n got %s\nwant %s", i, start-1, got, want)
			}
		}
	})
}
