package projection

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/flowctl/flowctl/flow/store"
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
func Apply(s Store, r *store.Record) error {
	kind := kindOf(r.Type)
	if kind == kindUnknown || r.Schema != SchemaVersion {
		return fmt.Errorf("%w: %s (schema %d) at seq %d", ErrUnknown, r.Type, r.Schema, r.Seq)
	}
	f := fold{s: s, r: r, kind: kind}
	if m, ok := s.(*Memory); ok {
		f.mem = m
		if m.seen == nil {
			m.seen, m.canon = &stringCache{arena: new(foldArena)}, new(canon)
		}
		f.seen, f.canon = m.seen, m.canon
	}
	f.stream.kind, f.stream.project, f.stream.id, f.stream.ok = ParseStream(r.Stream)
	f.stream.ok = f.stream.ok && f.stream.project == r.Project
	if err := f.apply(); err != nil {
		return fmt.Errorf("seq %d (%s): %w", r.Seq, r.Type, err)
	}
	err := f.project(func(p *Project) error {
		p.Events++
		if f.stream.ok && f.stream.kind == KindProject {
			f.touch(&p.Meta)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("seq %d (%s): %w", r.Seq, r.Type, err)
	}
	return f.touchStream()
}

type fold struct {
	s    Store
	r    *store.Record
	kind eventKind
	// stream is r.Stream parsed; ok when it is a stream of the catalog
	// in r's project.
	stream struct {
		kind, project, id string
		ok                bool
	}
	touched bool // the entity of the stream records the event already
	// mem is s when it is a Memory: its getters return the entity it
	// holds, so a change is made in place and putting the entity back
	// (a map lookup that changes nothing) is left out.
	mem *Memory
	// seen is the string cache of s when it has one (a Memory, which
	// the folds of one goroutine at a time change), else nil.
	seen *stringCache
	// canon is the merge buffers and memory of s when it has them (a
	// Memory), else nil.
	canon *canon
	// proj is the event's project once project looked it up in a
	// Memory: an event changes it once or twice (a counter, its event
	// count), and only project.created, which looks up nothing, puts a
	// new one.
	proj *Project
}

// putNew puts v, an entity the event creates, with put; into a Memory,
// with add: v is new, so there is no entity there that it could be
// (Memory's put looks first, to make putting an entity back cheap).
func putNew[V any](f *fold, put func(*V) error, add func(*Memory, *V), v *V) error {
	if f.mem != nil {
		add(f.mem, v)
		return nil
	}
	return put(v)
}

// newTask, newApproval and newExec return a new zero entity for the
// fold to fill: from the Memory's arena when s is a Memory.
func (f *fold) newTask() *Task {
	if f.mem != nil {
		return carve(&f.seen.arena.tasks)
	}
	return new(Task)
}

func (f *fold) newApproval() *Approval {
	if f.mem != nil {
		return carve(&f.seen.arena.approvals)
	}
	return new(Approval)
}

func (f *fold) newExec() *Exec {
	if f.mem != nil {
		return carve(&f.seen.arena.execs)
	}
	return new(Exec)
}

// putBack puts back an entity the fold got from f.s and changed, unless
// the change was made in place.
func putBack[V any](f *fold, put func(*V) error, v *V) error {
	if f.mem != nil {
		return nil
	}
	return put(v)
}

// payload reads the event's payload with a payload type's decoder, as
// in f.payload(p.unmarshal): what msgpack.Unmarshal would read,
// without reflection. Strings are copied, so the state keeps no
// reference to r.Data; the strings that repeat from event to event (ids,
// actors, commands, outputs) mostly share one copy, from a cache of
// strings shared by the folds of one goroutine at a time: the Memory's
// own, whose new copies are carved from the Memory's arena (foldArena),
// or one from a pool. (A method value rather than an interface, so
// that neither the payload nor the reader escapes to the heap.)
func (f *fold) payload(unmarshal func([]byte, *stringCache) error) error {
	var err error
	if f.seen != nil {
		err = unmarshal(f.r.Data, f.seen)
	} else {
		seen := seenPool.Get().(*stringCache)
		err = unmarshal(f.r.Data, seen)
		seenPool.Put(seen)
	}
	if err != nil {
		return fmt.Errorf("%w: payload does not decode: %v", ErrInconsistent, err)
	}
	return nil
}

var seenPool = sync.Pool{New: func() any { return new(stringCache) }}

func (f *fold) meta() Meta {
	t := TimeOf(f.r.Time)
	return Meta{Version: f.r.Version, Seq: f.r.Seq, CreatedAt: t, CreatedBy: f.r.Actor, UpdatedAt: t}
}

func (f *fold) apply() error {
	switch f.kind {
	case kindProjectCreated:
		var p ProjectCreated
		if err := f.payload(p.unmarshal); err != nil {
			return err
		}
		return f.s.PutProject(&Project{Name: f.r.Project, Description: p.Description, Origin: p.Origin, Meta: f.meta()})
	case kindProjectArchived:
		return f.project(func(p *Project) error { p.Archived = true; return nil })
	case kindPlanCreated:
		return f.planCreated()
	case kindPlanClosed:
		var p PlanClosed
		if err := f.payload(p.unmarshal); err != nil {
			return err
		}
		return f.plan(p.ID, func(pl *Plan) error { pl.Status = "closed"; return nil })
	case kindTaskCreated:
		return f.taskCreated()
	case kindTaskUpdated, kindTaskDepsChanged, kindTaskStatusChanged, kindTaskClaimed,
		kindTaskLeaseRenewed, kindTaskReleased, kindTaskContextMerged, kindStepAdded, kindStepStatusChanged:
		return f.streamTask(f.taskEvent)
	case kindNoteAdded:
		return f.noteAdded()
	case kindApprovalRequested:
		return f.approvalRequested()
	case kindApprovalDecided:
		return f.approvalDecided()
	case kindExecRecorded:
		return f.execRecorded()
	case kindCheckpointCreated:
		return f.checkpointCreated()
	case kindRollbackApplied:
		return f.rollbackApplied()
	case kindRollbackMarked:
		return f.rollbackMarked()
	case kindProjectSettingChanged:
		return f.settingChanged()
	case kindApprovalConsumed:
		return f.approvalConsumed()
	}
	return fmt.Errorf("%w: %s", ErrUnknown, f.r.Type)
}

// project changes the event's project.
func (f *fold) project(change func(*Project) error) error {
	p := f.proj
	if p == nil {
		var err error
		if p, err = f.s.Project(f.r.Project); err != nil {
			return err
		}
		if f.mem != nil {
			f.proj = p
		}
	}
	if p == nil {
		return fmt.Errorf("%w: project %q does not exist", ErrInconsistent, f.r.Project)
	}
	if err := change(p); err != nil {
		return err
	}
	return putBack(f, f.s.PutProject, p)
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
	return putBack(f, f.s.PutPlan, p)
}

// task changes task id of the event's project; when it is the entity of
// the event's stream, it also records the event on it.
func (f *fold) task(id string, change func(*Task) error) error {
	own := f.stream.ok && f.stream.kind == KindTask && f.stream.id == id
	var t *Task
	if own && f.mem != nil {
		// The stream, task/<project>/<id>, ends with the task's key:
		// looked up as it is, without a key made.
		t = f.mem.Tasks[f.r.Stream[len(KindTask)+1:]]
	} else {
		var err error
		if t, err = f.s.Task(f.r.Project, id); err != nil {
			return err
		}
	}
	if t == nil {
		return fmt.Errorf("%w: task %s does not exist", ErrInconsistent, id)
	}
	if err := change(t); err != nil {
		return err
	}
	if own {
		f.touch(&t.Meta)
	}
	return putBack(f, f.s.PutTask, t)
}

// streamTask changes the task whose stream the event is on.
func (f *fold) streamTask(change func(*Task) error) error {
	if f.stream.kind != KindTask {
		return fmt.Errorf("%w: %s on stream %q", ErrInconsistent, f.r.Type, f.r.Stream)
	}
	return f.task(f.stream.id, change)
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
	if err := f.payload(p.unmarshal); err != nil {
		return err
	}
	if err := f.counter(PrefixPlan, p.ID, func(c *Counters) *int { return &c.Plans }); err != nil {
		return err
	}
	return f.s.PutPlan(&Plan{Project: f.r.Project, ID: p.ID, Title: p.Title, Description: p.Description, Status: "open", Meta: f.meta()})
}

func (f *fold) taskCreated() error {
	var p TaskCreated
	if err := f.payload(p.unmarshal); err != nil {
		return err
	}
	if err := f.counter(PrefixTask, p.ID, func(c *Counters) *int { return &c.Tasks }); err != nil {
		return err
	}
	status := p.Status
	if status == "" {
		status = StatusTodo
	}
	deps := p.Deps // read into a new slice: the task's own
	slices.SortFunc(deps, CompareTaskIDs)
	if p.Parent != "" {
		if err := f.project(countParent); err != nil {
			return err
		}
	}
	t := f.newTask()
	*t = Task{
		Project: f.r.Project, ID: p.ID, Plan: p.Plan, Title: p.Title, Description: p.Description,
		Status: status, Owner: p.Owner, Tags: NonNil(p.Tags), Priority: p.Priority, Deps: NonNil(deps),
		Ref: p.Ref, Steps: []Step{}, Context: EmptyContext, PendingApprovals: []string{}, Meta: f.meta(),
		Parent: p.Parent, Due: p.Due,
	}
	return putNew(f, f.s.PutTask, (*Memory).addTask, t)
}

// countParent counts a parent link made (Counters.Parents).
func countParent(p *Project) error {
	p.Counters.Parents++
	return nil
}

// touchStream records the event on the entity of its stream, unless that
// was done already.
func (f *fold) touchStream() error {
	if !f.stream.ok || f.touched {
		return nil // a stream outside the catalog: nothing to record
	}
	switch f.stream.kind {
	case KindProject:
		return f.project(func(p *Project) error { f.touch(&p.Meta); return nil })
	case KindPlan:
		return f.plan(f.stream.id, func(p *Plan) error { f.touch(&p.Meta); return nil })
	}
	return f.task(f.stream.id, func(*Task) error { return nil }) // task records it
}

// touch records the event on m: version, seq and update time. An
// imported event can be older than the entity's last change: the update
// time never goes back.
func (f *fold) touch(m *Meta) {
	m.Version, m.Seq, m.UpdatedAt = f.r.Version, f.r.Seq, max(m.UpdatedAt, TimeOf(f.r.Time))
	f.touched = true
}
