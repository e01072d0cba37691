package projection

import (
	"errors"
	"fmt"
	"slices"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/vmihailenco/msgpack/v5"
)

// ErrUnknown reports an event this binary does not know (a newer type or
// schema). It is not corruption: the event is kept and skipped by the fold.
var ErrUnknown = errors.New("projection: unknown event type or schema")

// ErrInconsistent reports an event that does not fit the state it is
// folded into (a step of a task that does not exist, say). Commands are
// validated before they become events, so this means damage or a bug.
var ErrInconsistent = errors.New("projection: event does not fit the state")

// Apply folds one event into s. It is deterministic: it reads nothing but
// s and r, no clock, no randomness. Events of unknown types or schemas
// return ErrUnknown and change nothing.
func Apply(s Store, r *eventlog.Record) error {
	schema, ok := Schema(r.Type)
	if !ok || r.Schema != schema {
		return fmt.Errorf("%w: %s (schema %d) at seq %d", ErrUnknown, r.Type, r.Schema, r.Seq)
	}
	f := fold{s: s, r: r}
	if err := f.apply(); err != nil {
		return fmt.Errorf("seq %d (%s): %w", r.Seq, r.Type, err)
	}
	if err := f.project(func(p *Project) error { p.Events++; return nil }); err != nil {
		return fmt.Errorf("seq %d (%s): %w", r.Seq, r.Type, err)
	}
	return f.touchStream()
}

type fold struct {
	s Store
	r *eventlog.Record
}

func (f *fold) decode(v any) error {
	if err := msgpack.Unmarshal(f.r.Data, v); err != nil {
		return fmt.Errorf("%w: payload does not decode: %v", ErrInconsistent, err)
	}
	return nil
}

func (f *fold) meta() Meta {
	t := TimeOf(f.r.Time)
	return Meta{Version: f.r.Version, Seq: f.r.Seq, CreatedAt: t, CreatedBy: f.r.Actor, UpdatedAt: t}
}

func (f *fold) apply() error {
	switch f.r.Type {
	case TypeProjectCreated:
		var p ProjectCreated
		if err := f.decode(&p); err != nil {
			return err
		}
		return f.s.PutProject(&Project{Name: f.r.Project, Description: p.Description, Meta: f.meta()})
	case TypeProjectArchived:
		return f.project(func(p *Project) error { p.Archived = true; return nil })
	case TypePlanCreated:
		return f.planCreated()
	case TypePlanClosed:
		var p PlanClosed
		if err := f.decode(&p); err != nil {
			return err
		}
		return f.plan(p.ID, func(pl *Plan) error { pl.Status = "closed"; return nil })
	case TypeTaskCreated:
		return f.taskCreated()
	case TypeTaskUpdated, TypeTaskDepsChanged, TypeTaskStatusChanged, TypeTaskClaimed,
		TypeTaskLeaseRenewed, TypeTaskReleased, TypeTaskContextMerged, TypeStepAdded, TypeStepStatusChanged:
		return f.streamTask(f.taskEvent)
	case TypeNoteAdded:
		return f.noteAdded()
	case TypeApprovalRequested:
		return f.approvalRequested()
	case TypeApprovalDecided:
		return f.approvalDecided()
	case TypeExecRecorded:
		return f.execRecorded()
	case TypeCheckpointCreated:
		return f.checkpointCreated()
	case TypeRollbackApplied:
		return f.rollbackApplied()
	}
	return fmt.Errorf("%w: %s", ErrUnknown, f.r.Type)
}

// project changes the event's project.
func (f *fold) project(change func(*Project) error) error {
	p, err := f.s.Project(f.r.Project)
	if err != nil {
		return err
	}
	if p == nil {
		return fmt.Errorf("%w: project %q does not exist", ErrInconsistent, f.r.Project)
	}
	if err := change(p); err != nil {
		return err
	}
	return f.s.PutProject(p)
}

func (f *fold) plan(id string, change func(*Plan) error) error {
	p, err := f.s.Plan(f.r.Project, id)
	if err != nil {
		return err
	}
	if p == nil {
		return fmt.Errorf("%w: plan %s does not exist", ErrInconsistent, id)
	}
	if err := change(p); err != nil {
		return err
	}
	return f.s.PutPlan(p)
}

func (f *fold) task(id string, change func(*Task) error) error {
	t, err := f.s.Task(f.r.Project, id)
	if err != nil {
		return err
	}
	if t == nil {
		return fmt.Errorf("%w: task %s does not exist", ErrInconsistent, id)
	}
	if err := change(t); err != nil {
		return err
	}
	return f.s.PutTask(t)
}

// streamTask changes the task whose stream the event is on.
func (f *fold) streamTask(change func(*Task) error) error {
	kind, _, id, ok := ParseStream(f.r.Stream)
	if !ok || kind != KindTask {
		return fmt.Errorf("%w: %s on stream %q", ErrInconsistent, f.r.Type, f.r.Stream)
	}
	return f.task(id, change)
}

// counter raises a project counter to the number of a new id.
func (f *fold) counter(prefix, id string, field func(*Counters) *int) error {
	n, ok := IDNumber(prefix, id)
	if !ok {
		return fmt.Errorf("%w: malformed id %q", ErrInconsistent, id)
	}
	return f.project(func(p *Project) error {
		c := field(&p.Counters)
		*c = max(*c, n)
		return nil
	})
}

func (f *fold) planCreated() error {
	var p PlanCreated
	if err := f.decode(&p); err != nil {
		return err
	}
	if err := f.counter(PrefixPlan, p.ID, func(c *Counters) *int { return &c.Plans }); err != nil {
		return err
	}
	return f.s.PutPlan(&Plan{Project: f.r.Project, ID: p.ID, Title: p.Title, Description: p.Description, Status: "open", Meta: f.meta()})
}

func (f *fold) taskCreated() error {
	var p TaskCreated
	if err := f.decode(&p); err != nil {
		return err
	}
	if err := f.counter(PrefixTask, p.ID, func(c *Counters) *int { return &c.Tasks }); err != nil {
		return err
	}
	status := p.Status
	if status == "" {
		status = StatusTodo
	}
	deps := slices.Clone(p.Deps)
	slices.SortFunc(deps, CompareTaskIDs)
	return f.s.PutTask(&Task{
		Project: f.r.Project, ID: p.ID, Plan: p.Plan, Title: p.Title, Description: p.Description,
		Status: status, Owner: p.Owner, Tags: NonNil(p.Tags), Priority: p.Priority, Deps: NonNil(deps),
		Ref: p.Ref, Steps: []Step{}, Context: EmptyContext, PendingApprovals: []string{}, Meta: f.meta(),
	})
}

// touchStream records the event on the entity of its stream: version, seq
// and update time.
func (f *fold) touchStream() error {
	kind, project, id, ok := ParseStream(f.r.Stream)
	if !ok || project != f.r.Project {
		return nil // a stream outside the catalog: nothing to record
	}
	// An imported event can be older than the entity's last change: the
	// update time never goes back.
	touch := func(m *Meta) {
		m.Version, m.Seq, m.UpdatedAt = f.r.Version, f.r.Seq, max(m.UpdatedAt, TimeOf(f.r.Time))
	}
	switch kind {
	case KindProject:
		return f.project(func(p *Project) error { touch(&p.Meta); return nil })
	case KindPlan:
		return f.plan(id, func(p *Plan) error { touch(&p.Meta); return nil })
	}
	return f.task(id, func(t *Task) error { touch(&t.Meta); return nil })
}
