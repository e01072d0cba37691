package projstore_test

import (
	"path/filepath"
	"testing"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/projection"
)

// TestPending_Clean: a batch's commands decode an entity once and share
// it; a query gets a copy; a write to the entity's bucket through the
// Pending, or a fold and a flush, is what the next get sees.
func TestPending_Clean(t *testing.T) {
	l, err := eventlog.Open(filepath.Join(t.TempDir(), "flow.db"), eventlog.Options{Create: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	err = l.Update(func(tx *eventlog.Tx) error {
		s, _ := projstore.Writer(tx)
		if err := s.PutTask(&projection.Task{Project: "p", ID: "T-1", Title: "a", Status: projection.StatusTodo}); err != nil {
			return err
		}
		return s.Flush()
	})
	if err != nil {
		t.Fatal(err)
	}
	title := func(t *testing.T, s *projstore.Tx) (*projection.Task, string) {
		t.Helper()
		task, err := s.Task("p", "T-1")
		if err != nil || task == nil {
			t.Fatalf("Task = %v, %v", task, err)
		}
		return task, task.Title
	}
	err = l.Update(func(tx *eventlog.Tx) error {
		p := projstore.NewPending(tx)
		w, batched := projstore.Writer(p)
		if !batched {
			t.Fatal("Writer of a Pending is not batched")
		}
		first, _ := title(t, w)
		if again, _ := title(t, w); again != first {
			t.Error("a command's second get decoded the task again")
		}
		if copied, got := title(t, projstore.Reader(p)); copied == first || got != "a" {
			t.Errorf("a query's get: the batch's own task (%v) or title %q, want a copy titled a", copied == first, got)
		}

		// A write through the Pending, as a rebuild of the project makes.
		k := []byte(projection.Key("p", "T-1"))
		b, _ := projection.AppendEntity(nil, &projection.Task{Project: "p", ID: "T-1", Title: "b", Status: projection.StatusTodo})
		if err := p.Put(projstore.BucketTasks, k, projstore.Seal(k, b)); err != nil {
			return err
		}
		task, got := title(t, w)
		if got != "b" {
			t.Errorf("after a write through the Pending, title %q, want b", got)
		}

		// A fold's change, flushed, stays what a get returns.
		task.Title = "c"
		if err := w.PutTask(task); err != nil {
			return err
		}
		if err := p.Flush(); err != nil {
			return err
		}
		if _, got := title(t, w); got != "c" {
			t.Errorf("after a flush, title %q, want c", got)
		}
		if _, got := title(t, projstore.NewTx(tx)); got != "c" {
			t.Errorf("stored title %q, want c", got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
