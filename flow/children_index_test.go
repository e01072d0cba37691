package flow

import (
	"encoding/binary"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// childrenFixture is project p with T-1 and its children T-2 and T-3, and
// T-4 moved from T-1 to T-2.
func childrenFixture(t *testing.T) *Engine {
	t.Helper()
	e := familyFixture(t)
	for _, in := range []NewTask{{Title: "release"}, {Title: "notes", Parent: "T-1"}, {Title: "tag", Parent: "T-1"}, {Title: "moved", Parent: "T-1"}} {
		in.Project = "p"
		if _, err := e.AddTask(in); err != nil {
			t.Fatal(err)
		}
	}
	to := "T-2"
	if _, err := e.EditTask(TaskEdit{Project: "p", ID: "T-4", Parent: &to}); err != nil {
		t.Fatal(err)
	}
	return e
}

func wantChildren(t *testing.T, e *Engine, id string, want ...string) {
	t.Helper()
	kids, err := e.Children("p", id)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, k := range kids {
		got = append(got, k.ID)
	}
	if !slices.Equal(got, want) {
		t.Errorf("children of %s = %v, want %v", id, got, want)
	}
}

// indexed reports whether the children index holds child under parent.
func indexed(t *testing.T, e *Engine, parent, child string) bool {
	t.Helper()
	var v []byte
	err := e.log.View(func(tx store.Tx) error {
		var err error
		v, err = tx.Get(projstore.BucketChildren, projstore.ChildKey("p", parent, child))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return v != nil
}

func TestChildrenIndex(t *testing.T) {
	e := childrenFixture(t)
	wantChildren(t, e, "T-1", "T-2", "T-3")
	wantChildren(t, e, "T-2", "T-4")
	if !indexed(t, e, "T-2", "T-4") || indexed(t, e, "T-1", "T-4") {
		t.Error("the index does not follow T-4 from T-1 to T-2")
	}
	t.Run("VerifyFindsAMissingEntry", func(t *testing.T) {
		e := childrenFixture(t)
		err := e.log.Update(func(tx store.Tx) error {
			return tx.Delete(projstore.BucketChildren, projstore.ChildKey("p", "T-1", "T-3"))
		})
		if err != nil {
			t.Fatal(err)
		}
		var ce *store.CorruptionError
		if _, err := e.Verify(); !errors.As(err, &ce) {
			t.Errorf("Verify = %v, want a corruption naming the index", err)
		}
		if _, err := e.Rebuild(); err != nil { // and a rebuild mends it (the cleanup verifies)
			t.Fatal(err)
		}
	})
}

// TestChildrenIndex_OldFormat: a file of projection format 4 (no children
// index) answers read-only through a replay, and its first writable open
// rebuilds the projections with the index.
func TestChildrenIndex_OldFormat(t *testing.T) {
	e := childrenFixture(t)
	path := e.Path()
	err := e.log.Update(func(tx store.Tx) error {
		if err := tx.DeleteBucket(projstore.BucketChildren); err != nil {
			return err
		}
		old := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, projection.Version), 4)
		return tx.Put(projstore.BucketMeta, projstore.KeyVersion, old)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	wantChildren(t, ro, "T-1", "T-2", "T-3")
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	rw, err := Open(path, Options{Actor: "tester"})
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	if !indexed(t, rw, "T-1", "T-2") || !indexed(t, rw, "T-2", "T-4") {
		t.Error("a writable open of a format 4 file did not build the index")
	}
	wantChildren(t, rw, "T-2", "T-4")
	if _, err := rw.Verify(); err != nil {
		t.Error(err)
	}
}

// familyProject fills project p of e with tasks tasks, every third a
// subtask of a task without a parent before it, and returns the parent of
// the most subtasks.
func familyProject(tb testing.TB, e *Engine, tasks int) string {
	tb.Helper()
	if _, err := e.CreateProject(NewProject{Name: "p"}); err != nil {
		tb.Fatal(err)
	}
	var roots []string
	kids := map[string]int{}
	for i := 1; i <= tasks; i++ {
		in := NewTask{Project: "p", Title: "task"}
		if i%3 == 0 && len(roots) > 0 {
			in.Parent = roots[(i*7919)%len(roots)]
			kids[in.Parent]++
		}
		tk, err := e.AddTask(in)
		if err != nil {
			tb.Fatal(err)
		}
		if in.Parent == "" {
			roots = append(roots, tk.ID)
		}
	}
	best := roots[0]
	for _, r := range roots {
		if kids[r] > kids[best] {
			best = r
		}
	}
	return best
}

// BenchmarkTaskFamily is task show's read of a parent in a project of
// 3,000 tasks, 1,000 of them subtasks: through the children index, a
// prefix scan and a read of each child, not a walk over every task.
func BenchmarkTaskFamily(b *testing.B) {
	e := mustOpen(b)
	parent := familyProject(b, e, 3000)
	b.ResetTimer()
	for b.Loop() {
		f, err := e.TaskFamily("p", parent)
		if err != nil || len(f.Children) == 0 {
			b.Fatalf("family = %+v, %v", f, err)
		}
	}
}

// TestGenFamilyFile writes the project of BenchmarkTaskFamily to the file
// FLOWCTL_GEN_FAMILY names, for timing `flowctl task show` on it, and
// prints the parent of the most subtasks. Skipped without the variable.
func TestGenFamilyFile(t *testing.T) {
	path := os.Getenv("FLOWCTL_GEN_FAMILY")
	if path == "" {
		t.Skip("set FLOWCTL_GEN_FAMILY=FILE to write the file")
	}
	e, err := Open(path, Options{Create: true, NoSync: true, Actor: "gen"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	t.Logf("parent with the most subtasks: %s", familyProject(t, e, 3000))
}
