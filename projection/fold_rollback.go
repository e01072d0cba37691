package projection

import (
	"fmt"
	"slices"
)

func (f *fold) checkpointCreated() error {
	var p CheckpointCreated
	if err := f.payload(p.unmarshal); err != nil {
		return err
	}
	if err := f.counter(PrefixCheckpoint, p.ID, func(c *Counters) *int { return &c.Checkpoints }); err != nil {
		return err
	}
	return f.s.PutCheckpoint(&Checkpoint{Project: f.r.Project, ID: p.ID, Label: p.Label, AtSeq: p.AtSeq,
		Task: p.Task, GitHead: p.GitHead, Meta: f.meta()})
}

// rollbackApplied puts back the restored states and removes the entities
// created after the target.
func (f *fold) rollbackApplied() error {
	var p RollbackApplied
	if err := f.payload(p.unmarshal); err != nil {
		return err
	}
	if p.Project != nil {
		err := f.project(func(cur *Project) error {
			// Counters and the event count only ever grow: an id is never reused.
			cur.Description, cur.Archived = p.Project.Description, p.Project.Archived
			cur.Settings = slices.Clone(p.Project.Settings)
			return nil
		})
		if err != nil {
			return err
		}
	}
	if c := p.Counters; c != nil {
		err := f.project(func(cur *Project) error {
			n := &cur.Counters
			n.Plans, n.Tasks, n.Approvals = max(n.Plans, c.Plans), max(n.Tasks, c.Tasks), max(n.Approvals, c.Approvals)
			n.Execs, n.Checkpoints = max(n.Execs, c.Execs), max(n.Checkpoints, c.Checkpoints)
			return nil
		})
		if err != nil {
			return err
		}
	}
	if err := restoreAll(f, p.Plans, f.s.Plan, f.s.PutPlan); err != nil {
		return err
	}
	if err := restoreAll(f, p.Tasks, f.s.Task, f.s.PutTask); err != nil {
		return err
	}
	if err := restoreAll(f, p.Approvals, f.s.Approval, f.s.PutApproval); err != nil {
		return err
	}
	if err := restoreAll(f, p.Execs, f.s.Exec, f.s.PutExec); err != nil {
		return err
	}
	for _, rm := range p.Removed {
		if err := f.s.Delete(rm.Kind, f.r.Project, rm.ID); err != nil {
			return err
		}
	}
	return nil
}

// rollbackMarked records a rollback on the plan or task of its stream
// (touchStream does, after apply), unless the rollback removed it: then
// there is nothing left to record it on.
func (f *fold) rollbackMarked() error {
	var p RollbackMarked
	if err := f.payload(p.unmarshal); err != nil {
		return err
	}
	if !f.stream.ok || f.stream.kind == KindProject {
		return fmt.Errorf("%w: %s on stream %q", ErrInconsistent, f.r.Type, f.r.Stream)
	}
	f.touched = p.Removed
	return nil
}

// entity is what restoreAll needs of a projected entity.
type entity interface {
	EntityID() string
	EntityMeta() *Meta
}

// EntityMeta returns the entity's Meta.
func (p *Plan) EntityMeta() *Meta     { return &p.Meta }
func (t *Task) EntityMeta() *Meta     { return &t.Meta }
func (a *Approval) EntityMeta() *Meta { return &a.Meta }
func (x *Exec) EntityMeta() *Meta     { return &x.Meta }

// restoreAll puts back restored entities. Each keeps its current stream
// position (Version), since its stream did not go back, and records the
// rollback as its last change.
func restoreAll[T any, P interface {
	*T
	entity
}](f *fold, items []T, get func(project, id string) (P, error), put func(P) error) error {
	for i := range items {
		v := P(&items[i])
		cur, err := get(f.r.Project, v.EntityID())
		if err != nil {
			return err
		}
		m := v.EntityMeta()
		if cur != nil {
			m.Version = cur.EntityMeta().Version
		}
		m.Seq, m.UpdatedAt = f.r.Seq, TimeOf(f.r.Time)
		if err := put(v); err != nil {
			return err
		}
	}
	return nil
}
