package flow

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow/store"
)

func mustProjectNamed(t *testing.T, e *Engine, name string) {
	t.Helper()
	if _, err := e.CreateProject(NewProject{Name: name}); err != nil {
		t.Fatal(err)
	}
}

// headOf returns the log's head seq.
func headOf(t *testing.T, e *Engine) uint64 {
	t.Helper()
	var head uint64
	if err := e.Read(func(r *Reader) error { head = r.Head(); return nil }); err != nil {
		t.Fatal(err)
	}
	return head
}

// TestAddTasks: items name earlier items by key in their deps, all are
// created in one transaction, and a batch that would fail part of the way
// creates nothing.
func TestAddTasks(t *testing.T) {
	e := mustOpen(t)
	mustProjectNamed(t, e, "p")
	if _, err := e.AddTask(NewTask{Project: "p", Title: "existing"}); err != nil {
		t.Fatal(err)
	}

	got, err := e.AddTasks("p", []BatchTask{
		{Key: "a", NewTask: NewTask{Title: "first", Deps: []string{"T-1"}}},
		{Key: "b", NewTask: NewTask{Title: "second", Deps: []string{"a"}}},
		{NewTask: NewTask{Title: "third", Deps: []string{"a", "b"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tk := range got {
		ids = append(ids, tk.ID)
	}
	if !slices.Equal(ids, []string{"T-2", "T-3", "T-4"}) {
		t.Fatalf("ids = %v", ids)
	}
	if !slices.Equal(got[1].Deps, []string{"T-2"}) || !slices.Equal(got[2].Deps, []string{"T-2", "T-3"}) {
		t.Errorf("deps = %v, %v: keys must become the ids of their items", got[1].Deps, got[2].Deps)
	}

	refused := []struct {
		name  string
		items []BatchTask
		want  error
		text  string
	}{
		{"EmptyTitle", []BatchTask{{NewTask: NewTask{Title: "ok"}}, {NewTask: NewTask{Title: " "}}}, ErrInvalid, "tasks[1]: title is empty"},
		{"KeyTwice", []BatchTask{{Key: "k", NewTask: NewTask{Title: "x"}}, {Key: "k", NewTask: NewTask{Title: "y"}}}, ErrInvalid, `key "k" is used twice`},
		{"LaterKey", []BatchTask{{NewTask: NewTask{Title: "x", Deps: []string{"later"}}}, {Key: "later", NewTask: NewTask{Title: "y"}}}, ErrInvalid, "neither the key"},
		{"UnknownTask", []BatchTask{{NewTask: NewTask{Title: "x"}}, {NewTask: NewTask{Title: "y", Deps: []string{"T-99"}}}}, ErrNotFound, "tasks[1]: dep T-99"},
		{"UnknownPlan", []BatchTask{{NewTask: NewTask{Title: "x", Plan: "P-9"}}}, ErrNotFound, ""},
		// A title over MaxTitle is found only while writing: item 0 exists
		// then, and nothing of the batch may remain.
		{"LateFailure", []BatchTask{{NewTask: NewTask{Title: "x"}}, {NewTask: NewTask{Title: strings.Repeat("y", MaxTitle+1)}}}, ErrInvalid, "nothing was created"},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			before := headOf(t, e)
			_, err := e.AddTasks("p", c.items)
			if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.text) {
				t.Fatalf("AddTasks = %v, want %v containing %q", err, c.want, c.text)
			}
			if after := headOf(t, e); after != before {
				t.Errorf("head moved from %d to %d: a refused batch must write nothing", before, after)
			}
		})
	}
}

// TestUpdateTask: the parts run in order in one transaction (claim, edit,
// status, release), IfVersion guards the first, and a failing part undoes
// the parts before it.
func TestUpdateTask(t *testing.T) {
	e := mustOpen(t)
	mustProjectNamed(t, e, "p")
	tk, err := e.AddTask(NewTask{Project: "p", Title: "t"})
	if err != nil {
		t.Fatal(err)
	}

	title := "renamed"
	got, applied, err := e.UpdateTask(TaskUpdate{Project: "p", ID: tk.ID, Claim: "claim", Title: &title, Status: "doing",
		Write: Write{IfVersion: tk.Version}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(applied, []string{"claim", "edit", "status"}) {
		t.Errorf("applied = %v", applied)
	}
	if got.Title != "renamed" || got.Status != "doing" || got.Claim == nil || got.Claim.Actor != "tester" {
		t.Errorf("task = %+v, claim %+v", got, got.Claim)
	}

	_, _, err = e.UpdateTask(TaskUpdate{Project: "p", ID: tk.ID, Status: "todo", Write: Write{IfVersion: tk.Version}})
	if !errors.Is(err, store.ErrConflict) {
		t.Errorf("a stale IfVersion = %v, want a conflict", err)
	}

	before := headOf(t, e)
	other := "edited, then undone"
	_, _, err = e.UpdateTask(TaskUpdate{Project: "p", ID: tk.ID, Title: &other, Status: "no-such-status"})
	if err == nil {
		t.Fatal("a bad status was accepted")
	}
	if after := headOf(t, e); after != before {
		t.Errorf("head moved from %d to %d: the edit before the failing part must be undone", before, after)
	}
	if now, _ := e.Task("p", tk.ID); now.Title != "renamed" {
		t.Errorf("title = %q after a failed update", now.Title)
	}

	for _, u := range []TaskUpdate{
		{Project: "p", ID: tk.ID},
		{Project: "p", ID: tk.ID, Claim: "grab"},
	} {
		if _, _, err := e.UpdateTask(u); !errors.Is(err, ErrInvalid) {
			t.Errorf("UpdateTask(%+v) = %v, want ErrInvalid", u, err)
		}
	}

	got, applied, err = e.UpdateTask(TaskUpdate{Project: "p", ID: tk.ID, Claim: "release"})
	if err != nil || got.Claim != nil || !slices.Equal(applied, []string{"release"}) {
		t.Errorf("release: %v, claim %+v, applied %v", err, got.Claim, applied)
	}
}
