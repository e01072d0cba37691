package projstore_test

import (
	"path/filepath"
	"testing"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/projection"
)

// TestReadOver: a Tx reading over the unwritten entities of others reads
// the newest layer's entity before the store's, as a copy of its own (a
// change to it leaves the layer as it was), a removal as nothing, and the
// store's entity when no layer holds it.
func TestReadOver(t *testing.T) {
	l, err := eventlog.Open(filepath.Join(t.TempDir(), "flow.db"), eventlog.Options{Create: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	task := func(id, title string) *projection.Task {
		return &projection.Task{Project: "p", ID: id, Title: title, Status: projection.StatusTodo}
	}
	err = l.Update(func(tx *eventlog.Tx) error {
		s, _ := projstore.Writer(tx)
		for _, v := range []*projection.Task{task("T-1", "stored"), task("T-2", "stored"), task("T-3", "stored")} {
			if err := s.PutTask(v); err != nil {
				return err
			}
		}
		return s.Flush()
	})
	if err != nil {
		t.Fatal(err)
	}
	err = l.View(func(tx *eventlog.Tx) error {
		older, _ := projstore.Writer(tx)
		newer, _ := projstore.Writer(tx)
		if err := older.PutTask(task("T-1", "older")); err != nil {
			return err
		}
		if err := older.PutTask(task("T-4", "older")); err != nil {
			return err
		}
		if err := newer.PutTask(task("T-1", "newer")); err != nil {
			return err
		}
		if err := newer.Delete(projection.KindTask, "p", "T-2"); err != nil {
			return err
		}
		s, _ := projstore.Writer(tx)
		s.ReadOver([]projstore.Unwritten{older.Unwritten(), newer.Unwritten()})
		for id, want := range map[string]string{"T-1": "newer", "T-2": "", "T-3": "stored", "T-4": "older", "T-5": ""} {
			got, err := s.Task("p", id)
			switch {
			case err != nil:
				t.Errorf("%s: %v", id, err)
			case want == "" && got != nil:
				t.Errorf("%s = %q, want none", id, got.Title)
			case want != "" && (got == nil || got.Title != want):
				t.Errorf("%s = %v, want %q", id, got, want)
			}
		}
		got, _ := s.Task("p", "T-1")
		got.Title = "changed"
		if again, _ := s.Task("p", "T-1"); again != got {
			t.Errorf("a second read gives another copy")
		}
		if v, _ := newer.Task("p", "T-1"); v.Title != "newer" {
			t.Errorf("the layer's entity changed with the copy: %q", v.Title)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestEncode: a Tx's entities encoded ahead (Encode) are what its Flush
// writes; an entity put after is written as put, not as encoded.
func TestEncode(t *testing.T) {
	l, err := eventlog.Open(filepath.Join(t.TempDir(), "flow.db"), eventlog.Options{Create: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	err = l.Update(func(tx *eventlog.Tx) error {
		s, _ := projstore.Writer(tx)
		for _, id := range []string{"T-1", "T-2"} {
			if err := s.PutTask(&projection.Task{Project: "p", ID: id, Title: "encoded", Status: projection.StatusTodo}); err != nil {
				return err
			}
		}
		if err := s.Encode(); err != nil {
			return err
		}
		if err := s.PutTask(&projection.Task{Project: "p", ID: "T-2", Title: "put after", Status: projection.StatusTodo}); err != nil {
			return err
		}
		return s.Flush()
	})
	if err != nil {
		t.Fatal(err)
	}
	err = l.View(func(tx *eventlog.Tx) error {
		s := projstore.NewTx(tx)
		for id, want := range map[string]string{"T-1": "encoded", "T-2": "put after"} {
			if got, err := s.Task("p", id); err != nil || got == nil || got.Title != want {
				t.Errorf("%s = %v, %v; want %q", id, got, err, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
