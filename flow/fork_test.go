package flow

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/flowctl/flowctl/flow/internal/history"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"pgregory.net/rapid"
)

// forkState encodes a project's state as a fork must copy it: every
// plan, task (deps, context, steps, notes), approval and exec record
// without its project name and stream position, and the settings.
func forkState(t *rapid.T, s *projection.Scope) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "project %q %v %+v\n", s.Project.Description, s.Project.Settings, s.Project.Counters)
	add := func(kind, id string, enc []byte, err error) {
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %s %x\n", kind, id, enc)
	}
	for _, v := range s.Plans {
		c := *v
		c.Project = ""
		enc, err := stateBytes(&c)
		add("plan", v.ID, enc, err)
	}
	for _, v := range s.Tasks {
		c := *v
		c.Project = ""
		enc, err := stateBytes(&c)
		add("task", v.ID, enc, err)
	}
	for _, v := range s.Approvals {
		c := *v
		c.Project = ""
		enc, err := stateBytes(&c)
		add("approval", v.ID, enc, err)
	}
	for _, v := range s.Execs {
		c := *v
		c.Project = ""
		enc, err := stateBytes(&c)
		add("exec", v.ID, enc, err)
	}
	return b.String()
}

type noteKey struct{ Task, Kind, Text string }

// noteKeys lists a project's notes up to seq upTo (0: all).
func noteKeys(t *rapid.T, e *Engine, project string, upTo uint64) []noteKey {
	ns, err := e.Notes(project, NoteFilter{})
	if err != nil {
		t.Fatal(err)
	}
	out := []noteKey{}
	for _, n := range ns {
		if upTo == 0 || n.Seq <= upTo {
			out = append(out, noteKey{n.Task, n.Kind, n.Text})
		}
	}
	return out
}

// TestProperty_ForkEqualsAt: a fork's state at its head is the source's
// at the point it was forked from (`--at POINT`), whatever the source
// does after.
func TestProperty_ForkEqualsAt(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		e := mustOpen(t)
		if _, err := e.CreateProject(NewProject{Name: "p", Description: "source"}); err != nil {
			rt.Fatal(err)
		}
		first := headSeq(rt, e)
		m := &undoMachine{e: e}
		for range rapid.IntRange(0, 20).Draw(rt, "commands") {
			m.step(rt)
		}
		point := rapid.Uint64Range(first, headSeq(rt, e)).Draw(rt, "point")
		f, err := e.ForkProject(ForkInput{Project: "p", Name: "f", From: Point{Seq: point}})
		if err != nil {
			rt.Fatalf("fork at %d: %v", point, err)
		}
		if f.Origin == nil || f.Origin.Project != "p" || f.Origin.Seq != point || len(f.Origin.Hash) != 64 {
			rt.Fatalf("origin = %+v", f.Origin)
		}
		for range rapid.IntRange(0, 5).Draw(rt, "after") {
			m.step(rt)
		}
		src, err := e.Scopes("p", Point{Seq: point})
		if err != nil {
			rt.Fatal(err)
		}
		fork, err := e.Scopes("f", Point{Seq: headSeq(rt, e)})
		if err != nil {
			rt.Fatal(err)
		}
		if got, want := forkState(rt, fork[0].Scope), forkState(rt, src[0].Scope); got != want {
			rt.Fatalf("the fork's state is not the source's at %d:\n got %s\nwant %s", point, got, want)
		}
		// The notes of tasks a rollback took out before the point stay with
		// the source: a note needs its task.
		want := []noteKey{}
		for _, n := range noteKeys(rt, e, "p", point) {
			if n.Task == "" || slices.ContainsFunc(src[0].Scope.Tasks, func(t *projection.Task) bool { return t.ID == n.Task }) {
				want = append(want, n)
			}
		}
		if got := noteKeys(rt, e, "f", 0); !reflect.DeepEqual(got, want) {
			rt.Fatalf("the fork's notes %v, the source's at %d %v", got, point, want)
		}
		// Reads of one task go through the entity fold; they agree with the state.
		for _, v := range fork[0].Scope.Tasks {
			err := e.view(func(tx store.Tx) error {
				mem, err := history.EntityAt(tx, "f", projection.TaskStream("f", v.ID), headSeq(rt, e), e.warn)
				if err == nil && (mem == nil || mem.Tasks[projection.Key("f", v.ID)] == nil) {
					rt.Fatalf("the entity fold of the fork's %s failed (the whole state would be read)", v.ID)
				}
				return err
			})
			if err != nil {
				rt.Fatal(err)
			}
			got, err := e.At("f", Point{Seq: headSeq(rt, e)}).Task("f", v.ID)
			if err != nil || got.Title != v.Title || got.Status != v.Status {
				rt.Fatalf("task %s of the fork at head: %+v, %v", v.ID, got, err)
			}
		}
	})
}

func TestForkProject_Errors(t *testing.T) {
	e := apprFixture(t)
	before := apprCount(t, e)
	for _, tc := range []struct {
		in   ForkInput
		want error
	}{
		{ForkInput{Project: "website", Name: "website", From: Point{Seq: 2}}, ErrExists},
		{ForkInput{Project: "website", Name: "bad name", From: Point{Seq: 2}}, ErrInvalid},
		{ForkInput{Project: "nope", Name: "x", From: Point{Seq: 2}}, ErrNotFound},
		{ForkInput{Project: "website", Name: "x", From: Point{Checkpoint: "C-9"}}, ErrNotFound},
	} {
		if _, err := e.ForkProject(tc.in); !errors.Is(err, tc.want) {
			t.Errorf("ForkProject(%+v) = %v, want %v", tc.in, err, tc.want)
		}
	}
	if n := apprCount(t, e); n != before {
		t.Errorf("refused forks appended %d events", n-before)
	}
}
