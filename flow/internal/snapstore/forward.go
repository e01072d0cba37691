package snapstore

import (
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// FoldForward folds into mem, a state at seq from, the events of project
// up to seq to, without changing an entity mem held before: the fold
// changes copies, which take the place of the entities they copy. So a
// Scope taken of mem before (its lists of entities) still is the state
// at from, and shares with the state at to every entity no event
// changed: two states at once cost one, plus what changed between them.
// It returns how many events it folded.
func FoldForward(tx store.Tx, mem *projection.Memory, project string, from, to uint64) (int, error) {
	return FoldTo(tx, &copies{mem: mem, own: map[any]bool{}}, project, from, to)
}

// copies is a projection.Store on a Memory that hands the fold a copy of
// each entity the first time it reads it, and puts the copy in its place:
// the fold changes only entities of its own (own), never one the Memory
// held before. The fold puts back every entity it changes in a store
// that is not a Memory (projection's TestApply_MemoryMatchesCopyingStore
// proves it), so the copies are what it changes.
type copies struct {
	mem *projection.Memory
	own map[any]bool // the entities made or copied since the fold began
}

var _ projection.Store = (*copies)(nil)

// copyOf returns v for the fold to change: v itself when it is the
// fold's own, else a copy (clone) put in v's place (put) and owned.
func copyOf[V any](c *copies, v *V, clone func(*V) *V, put func(*V) error) (*V, error) {
	if v == nil || c.own[v] {
		return v, nil
	}
	v = clone(v)
	c.own[v] = true
	return v, put(v)
}

// shallow copies an entity whose fold replaces its slices rather than
// changing them in place (plans, approvals, exec records, checkpoints).
func shallow[V any](v *V) *V {
	c := *v
	return &c
}

func (c *copies) Project(name string) (*projection.Project, error) {
	p, _ := c.mem.Project(name)
	return copyOf(c, p, (*projection.Project).Clone, c.PutProject)
}

func (c *copies) Plan(project, id string) (*projection.Plan, error) {
	v, _ := c.mem.Plan(project, id)
	return copyOf(c, v, shallow, c.PutPlan)
}

func (c *copies) Task(project, id string) (*projection.Task, error) {
	v, _ := c.mem.Task(project, id)
	return copyOf(c, v, (*projection.Task).Clone, c.PutTask)
}

func (c *copies) Approval(project, id string) (*projection.Approval, error) {
	v, _ := c.mem.Approval(project, id)
	return copyOf(c, v, shallow, c.PutApproval)
}

func (c *copies) Exec(project, id string) (*projection.Exec, error) {
	v, _ := c.mem.Exec(project, id)
	return copyOf(c, v, shallow, c.PutExec)
}

func (c *copies) Checkpoint(project, id string) (*projection.Checkpoint, error) {
	v, _ := c.mem.Checkpoint(project, id)
	return copyOf(c, v, shallow, c.PutCheckpoint)
}

// The puts own what they put: an entity the fold made, or one it had.

func (c *copies) PutProject(v *projection.Project) error { c.own[v] = true; return c.mem.PutProject(v) }
func (c *copies) PutPlan(v *projection.Plan) error       { c.own[v] = true; return c.mem.PutPlan(v) }
func (c *copies) PutTask(v *projection.Task) error       { c.own[v] = true; return c.mem.PutTask(v) }
func (c *copies) PutApproval(v *projection.Approval) error {
	c.own[v] = true
	return c.mem.PutApproval(v)
}
func (c *copies) PutExec(v *projection.Exec) error { c.own[v] = true; return c.mem.PutExec(v) }
func (c *copies) PutCheckpoint(v *projection.Checkpoint) error {
	c.own[v] = true
	return c.mem.PutCheckpoint(v)
}
func (c *copies) Delete(kind, project, id string) error { return c.mem.Delete(kind, project, id) }
