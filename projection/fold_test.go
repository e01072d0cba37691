package projection

import (
	"bytes"
	"testing"

	"github.com/flowctl/flowctl/eventlog"
	"pgregory.net/rapid"
)

// copyStore is a Store that hands out copies of what it holds: a change
// the fold makes reaches it only through a put, as with flow's store on
// bbolt. Folding into it checks that the fold puts everything it
// changes, which the fold leaves out for a Memory (changed in place).
type copyStore struct{ m *Memory }

var _ Store = copyStore{}

func copyOf[V any](v *V) *V {
	if v == nil {
		return nil
	}
	c := *v
	return &c
}

func (s copyStore) Project(name string) (*Project, error) { return copyOf(s.m.Projects[name]), nil }
func (s copyStore) Plan(p, id string) (*Plan, error)      { return copyOf(get(s.m.Plans, p, id)), nil }
func (s copyStore) Task(p, id string) (*Task, error) {
	if t := get(s.m.Tasks, p, id); t != nil {
		return t.Clone(), nil
	}
	return nil, nil
}
func (s copyStore) Approval(p, id string) (*Approval, error) {
	return copyOf(get(s.m.Approvals, p, id)), nil
}
func (s copyStore) Exec(p, id string) (*Exec, error) { return copyOf(get(s.m.Execs, p, id)), nil }
func (s copyStore) Checkpoint(p, id string) (*Checkpoint, error) {
	return copyOf(get(s.m.Checkpoints, p, id)), nil
}
func (s copyStore) PutProject(v *Project) error       { return s.m.PutProject(copyOf(v)) }
func (s copyStore) PutPlan(v *Plan) error             { return s.m.PutPlan(copyOf(v)) }
func (s copyStore) PutTask(v *Task) error             { return s.m.PutTask(v.Clone()) }
func (s copyStore) PutApproval(v *Approval) error     { return s.m.PutApproval(copyOf(v)) }
func (s copyStore) PutExec(v *Exec) error             { return s.m.PutExec(copyOf(v)) }
func (s copyStore) PutCheckpoint(v *Checkpoint) error { return s.m.PutCheckpoint(copyOf(v)) }
func (s copyStore) Delete(kind, project, id string) error {
	return s.m.Delete(kind, project, id)
}

// TestApply_MemoryMatchesCopyingStore: a replay into a Memory, where the
// fold changes entities in place and puts nothing back, folds to the
// state a replay into a store of copies does.
func TestApply_MemoryMatchesCopyingStore(t *testing.T) {
	checkMemoryMatchesCopies(t, genHistory(t, 3, 20000))
}

// TestApply_MemoryMatchesCopyingStore_Random is
// TestApply_MemoryMatchesCopyingStore on the histories of any workload
// seed and size: the Memory's fast paths (an exec decoded into its
// entity, a task looked up by its stream, the project looked up once
// per event, pending approvals and contexts from its arena) fold to the
// state the Store interface's slow paths do.
func TestApply_MemoryMatchesCopyingStore_Random(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		seed := rapid.Uint64().Draw(rt, "seed")
		projects := rapid.IntRange(1, 4).Draw(rt, "projects")
		n := rapid.IntRange(1, 3000).Draw(rt, "events")
		checkMemoryMatchesCopies(rt, genHistorySeed(t, projects, n, seed))
	})
}

func checkMemoryMatchesCopies(t interface {
	Fatalf(string, ...any)
	Errorf(string, ...any)
}, records []*eventlog.Record) {
	mem, copies := NewMemory(), copyStore{NewMemory()}
	for _, r := range records {
		if err := Apply(mem, r); err != nil {
			t.Fatalf("Apply to Memory: %v", err)
		}
		if err := Apply(copies, r); err != nil {
			t.Fatalf("Apply to copyStore: %v", err)
		}
	}
	for project := range mem.Projects {
		got, want := AppendScope(nil, mem.Scope(project)), AppendScope(nil, copies.m.Scope(project))
		if !bytes.Equal(got, want) {
			t.Errorf("state of %s in Memory differs from the one in a store of copies", project)
		}
	}
	if len(mem.Projects) != len(copies.m.Projects) {
		t.Errorf("%d projects in Memory, %d in a store of copies", len(mem.Projects), len(copies.m.Projects))
	}
}
