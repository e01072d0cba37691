package history

import (
	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/internal/snapstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// maxEntityFolds is how many entities one point-in-time read folds from
// their own streams before it builds the project's whole state instead:
// a query that reads many entities by id is cheaper from one snapshot.
const maxEntityFolds = 16

// Source is what a point-in-time view (flow's Engine.At) reads: project's
// state at seq.
//
// A read of one entity by id is answered without the project's whole
// state. When the inline projections are current and the entity's last
// change (Meta.Seq) is at or below seq, it is the entity as it is now: no
// later event changed it. Otherwise the entity is folded from what it
// depends on (EntityAt): its own stream and the project's rollbacks, up
// to seq. Approvals and exec records of a task are folded with their
// task, whose stream holds their events. Anything else — lists, the
// project itself, an entity of another project, an entity whose fold
// fails — reads the whole state, built once: the nearest snapshot at or
// below seq plus the project's events after it (snapstore.StateAt).
//
// Both ways give the same entity, encoded byte for byte alike
// (TestProperty_EntityAtEqualsWholeStateAt).
type Source struct {
	tx      store.Tx
	project string
	seq     uint64
	warn    func(string, ...any) // told of a snapshot or an index skipped

	whole   *projection.Memory                // the whole state, once built
	now     *projstore.Tx                     // the inline projections, when current
	checked bool                              // whether now was looked for
	folds   map[string]*projection.Memory     // entity folds by stream
	sums    map[string][]projstore.IndexEntry // summaries by bucket and project

	tail       *tailView // the status from a summary and the tail (tail.go), once built
	tailDone   bool      // whether tail was looked for
	entityOnly bool      // answer by entity only: errWhole where the whole state would answer
}

var _ projstore.Source = (*Source)(nil)

// NewSource returns project's state at seq, read in tx. warn is told of
// what the reads skip: a damaged snapshot (snapstore.StateAt), a rollback
// index that does not match the log (ProjectRollbacks).
func NewSource(tx store.Tx, project string, seq uint64, warn func(string, ...any)) *Source {
	return &Source{tx: tx, project: project, seq: seq, warn: warn, folds: map[string]*projection.Memory{}}
}

// Whole reports whether the source has built the project's whole state:
// a read it was given could not be answered from one entity's fold.
func (a *Source) Whole() bool { return a.whole != nil }

// state returns the project's whole state at seq, building it once.
func (a *Source) state() (*projection.Memory, error) {
	if a.entityOnly {
		return nil, errWhole
	}
	if a.whole == nil {
		mem, err := snapstore.StateAt(a.tx, a.project, a.seq, a.warn)
		if err != nil {
			return nil, err
		}
		a.whole = mem
	}
	return a.whole, nil
}

// fast reports whether an entity of project may be read on its own.
func (a *Source) fast(project string) bool {
	return a.whole == nil && project == a.project
}

// current returns the inline projections when they were built by this
// binary's fold (nil otherwise: another version's entities may differ).
func (a *Source) current() (*projstore.Tx, error) {
	if !a.checked {
		ok, err := projstore.Current(a.tx)
		if err != nil {
			return nil, err
		}
		a.checked = true
		if ok {
			a.now = projstore.NewTx(a.tx)
		}
	}
	return a.now, nil
}

// unchanged returns the entity as it is now when the projections are
// current and its last change is at or below seq; nil otherwise.
func unchanged[T any, P interface {
	*T
	EntityMeta() *projection.Meta
}](a *Source, get func(s *projstore.Tx) (P, error)) (P, error) {
	now, err := a.current()
	if err != nil || now == nil {
		return nil, err
	}
	v, err := get(now)
	if err != nil || v == nil || v.EntityMeta().Seq > a.seq {
		return nil, err
	}
	return v, nil
}

// stream returns the fold of what the entity of stream depends on, up to
// seq (EntityAt), or nil when it must be read from the whole state.
func (a *Source) stream(stream string) (*projection.Memory, error) {
	if mem, ok := a.folds[stream]; ok {
		return mem, nil
	}
	if len(a.folds) >= maxEntityFolds && !a.entityOnly {
		return nil, nil
	}
	mem, err := EntityAt(a.tx, a.project, stream, a.seq, a.warn)
	if err != nil {
		return nil, err
	}
	a.folds[stream] = mem // nil too: the fold failed, the whole state answers
	return mem, nil
}

// Task reads a task at seq: see Source.
func (a *Source) Task(project, id string) (*projection.Task, error) {
	if a.fast(project) {
		if t, ok := a.tail.task(project, id); ok {
			return t, nil
		}
		t, err := unchanged(a, func(s *projstore.Tx) (*projection.Task, error) { return s.Task(project, id) })
		if err != nil || t != nil {
			return t, err
		}
		mem, err := a.stream(projection.TaskStream(project, id))
		if err != nil || mem != nil {
			return taskOf(mem, project, id), err
		}
	}
	mem, err := a.state()
	if err != nil {
		return nil, err
	}
	return mem.Task(project, id)
}

func taskOf(mem *projection.Memory, project, id string) *projection.Task {
	if mem == nil {
		return nil
	}
	t, _ := mem.Task(project, id)
	return t
}

// Plan reads a plan at seq: see Source.
func (a *Source) Plan(project, id string) (*projection.Plan, error) {
	if a.fast(project) {
		p, err := unchanged(a, func(s *projstore.Tx) (*projection.Plan, error) { return s.Plan(project, id) })
		if err != nil || p != nil {
			return p, err
		}
		mem, err := a.stream(projection.PlanStream(project, id))
		if err != nil {
			return nil, err
		}
		if mem != nil {
			return mem.Plan(project, id)
		}
	}
	mem, err := a.state()
	if err != nil {
		return nil, err
	}
	return mem.Plan(project, id)
}

// Approval reads an approval at seq: see Source. Its task (which never
// changes) is taken from the projections; an approval that is not there
// now, or has no task, is read from the whole state.
func (a *Source) Approval(project, id string) (*projection.Approval, error) {
	if a.fast(project) {
		if v, ok := a.tail.approval(project, id); ok {
			return v, nil
		}
		v, mem, err := taskPart(a, project, func(s *projstore.Tx) (*projection.Approval, error) { return s.Approval(project, id) },
			func(v *projection.Approval) string { return v.Task })
		if err != nil || v != nil {
			return v, err
		}
		if mem != nil {
			return mem.Approval(project, id)
		}
	}
	mem, err := a.state()
	if err != nil {
		return nil, err
	}
	return mem.Approval(project, id)
}

// Exec reads an exec record at seq, as Approval reads an approval.
func (a *Source) Exec(project, id string) (*projection.Exec, error) {
	if a.fast(project) {
		v, mem, err := taskPart(a, project, func(s *projstore.Tx) (*projection.Exec, error) { return s.Exec(project, id) },
			func(v *projection.Exec) string { return v.Task })
		if err != nil || v != nil {
			return v, err
		}
		if mem != nil {
			return mem.Exec(project, id)
		}
	}
	mem, err := a.state()
	if err != nil {
		return nil, err
	}
	return mem.Exec(project, id)
}

// taskPart reads an entity that belongs to a task (an approval, an exec
// record): as it is now when that is also how it was at seq, else the
// fold of its task's stream to read it from; both nil when only the
// whole state can say.
func taskPart[T any, P interface {
	*T
	EntityMeta() *projection.Meta
}](a *Source, project string, get func(s *projstore.Tx) (P, error), task func(P) string) (P, *projection.Memory, error) {
	now, err := a.current()
	if err != nil || now == nil {
		return nil, nil, err
	}
	v, err := get(now)
	switch {
	case err != nil || v == nil:
		return nil, nil, err
	case v.EntityMeta().Seq <= a.seq:
		return v, nil, nil
	case task(v) == "":
		return nil, nil, nil
	}
	mem, err := a.stream(projection.TaskStream(project, task(v)))
	return nil, mem, err
}

// Checkpoint reads a checkpoint at seq. A checkpoint never changes once
// created: it is there at seq when it was created at or below it.
func (a *Source) Checkpoint(project, id string) (*projection.Checkpoint, error) {
	if a.fast(project) {
		now, err := a.current()
		if err != nil {
			return nil, err
		}
		if now != nil {
			c, err := now.Checkpoint(project, id)
			if err != nil || c != nil && c.Seq <= a.seq {
				return c, err
			}
		}
	}
	mem, err := a.state()
	if err != nil {
		return nil, err
	}
	return mem.Checkpoint(project, id)
}

// Project reads the project from the summary and the tail (tail.go) or
// else the whole state: its counters and event count depend on every
// event.
func (a *Source) Project(name string) (*projection.Project, error) {
	if name == a.project {
		v, err := a.tailState()
		if err != nil {
			return nil, err
		}
		if v != nil {
			return v.mem.Projects[name], nil
		}
	}
	mem, err := a.state()
	if err != nil {
		return nil, err
	}
	return mem.Project(name)
}

// The lists read the whole state, as projstore.Mem does.

func (a *Source) Projects() ([]*projection.Project, error) {
	mem, err := a.state()
	if err != nil {
		return nil, err
	}
	return projstore.Mem{Memory: mem}.Projects()
}

func (a *Source) Plans(project string) ([]*projection.Plan, error) {
	mem, err := a.state()
	if err != nil {
		return nil, err
	}
	return mem.PlansOf(project), nil
}

func (a *Source) Tasks(project string) ([]*projection.Task, error) {
	mem, err := a.state()
	if err != nil {
		return nil, err
	}
	return mem.TasksOf(project), nil
}

func (a *Source) Approvals(project string) ([]*projection.Approval, error) {
	mem, err := a.state()
	if err != nil {
		return nil, err
	}
	return mem.ApprovalsOf(project), nil
}

func (a *Source) Execs(project string) ([]*projection.Exec, error) {
	mem, err := a.state()
	if err != nil {
		return nil, err
	}
	return mem.ExecsOf(project), nil
}

func (a *Source) Checkpoints(project string) ([]*projection.Checkpoint, error) {
	mem, err := a.state()
	if err != nil {
		return nil, err
	}
	return mem.CheckpointsOf(project), nil
}

// The writes of projection.Store go to the whole state, as projstore.Mem's do:
// a view is read-only, and nothing writes through it.

func (a *Source) put(put func(m *projection.Memory) error) error {
	mem, err := a.state()
	if err != nil {
		return err
	}
	a.sums = nil // the summaries listed before may not hold
	return put(mem)
}

func (a *Source) PutProject(v *projection.Project) error {
	return a.put(func(m *projection.Memory) error { return m.PutProject(v) })
}
func (a *Source) PutPlan(v *projection.Plan) error {
	return a.put(func(m *projection.Memory) error { return m.PutPlan(v) })
}
func (a *Source) PutTask(v *projection.Task) error {
	return a.put(func(m *projection.Memory) error { return m.PutTask(v) })
}
func (a *Source) PutApproval(v *projection.Approval) error {
	return a.put(func(m *projection.Memory) error { return m.PutApproval(v) })
}
func (a *Source) PutExec(v *projection.Exec) error {
	return a.put(func(m *projection.Memory) error { return m.PutExec(v) })
}
func (a *Source) PutCheckpoint(v *projection.Checkpoint) error {
	return a.put(func(m *projection.Memory) error { return m.PutCheckpoint(v) })
}
func (a *Source) Delete(kind, project, id string) error {
	return a.put(func(m *projection.Memory) error { return m.Delete(kind, project, id) })
}
