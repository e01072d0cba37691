package history

import (
	"errors"
	"slices"

	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/snapshot"
)

// A diff of two far points without either whole state (Far). The
// entities that differ between points A and B are those the events in
// (A, B] wrote, and every event is on the stream of the entity it
// changes (EntityAt's placement rules): a task's stream holds its own
// events and those of its approvals and exec records, a plan's its own,
// the project's its own and those of the approvals and exec records of
// no task. So Far reads the project's records in (A, B] once, without
// folding them, and keeps only the streams they are on and the ids the
// events that create an entity give it; then it reads, for each stream
// that was there at A, its entities at A (EntityAt: that stream alone,
// and the project's rollbacks) and at B, and, for each entity created
// after A, only its title at B. At the head (B is the head and the
// projections are this binary's), the state at B is the projections',
// read by key. So a far diff costs a read of the records between the
// points (no fold, no snapshot) and the entities that changed, not the
// state at either point, and holds only those entities.

// farCreates are the events that create an entity of a kind a diff
// lists, by the index of its kind in a Scope's lists (plans, tasks,
// approvals, execs): each puts a new entity whose id is the payload's
// "id" (the fold's counter checks it is the next one, and ids are never
// reused).
var farCreates = map[string]int{
	projection.TypePlanCreated:       0,
	projection.TypeTaskCreated:       1,
	projection.TypeApprovalRequested: 2,
	projection.TypeExecRecorded:      3,
}

// farBuckets are the projections' buckets of the kinds a diff lists, in
// farCreates' order.
var farBuckets = [4]string{projstore.BucketPlans, projstore.BucketTasks, projstore.BucketApprovals, projstore.BucketExecs}

// Far returns project's entities that events in (a, b] wrote (a <= b),
// as they stood at a and as they stand at b, each state a Scope of those
// entities only, as Between does: every entity that differs between the
// two points is there, and the others that are there are the same in
// both (a comparison tells them by their encodings). The entities at b
// alone (created after a) hold only their id and the title a diff names
// them by (a plan's or task's title, an approval's message, an exec
// record's command and code) when the projections hold them as they
// were at b: a diff lists them as added, by title. The project is there
// when an event on its stream is in (a, b] (its description and archived
// flag change only there), else nil in both. Checkpoints are left out.
//
// An entity at b is read from the inline projections, by key, when they
// are this binary's fold and its last change (Meta.Seq) is at or below
// b, as Source reads it; else from its stream's fold up to b (EntityAt).
//
// It returns ErrNotBetween when the events cannot be read that way: a
// rollback among them (it changes entities without touching them on
// their streams), an event on a stream outside the catalog or of another
// project, an entity's fold that fails (EntityAt), or a payload whose id
// does not read.
func Far(tx store.Tx, project string, a, b uint64, warn func(string, ...any)) (*projection.Scope, *projection.Scope, error) {
	if b < a {
		return nil, nil, errors.New("history: Far needs a <= b")
	}
	f := &far{tx: tx, project: project, a: a, b: b, warn: warn, seen: map[string]bool{},
		folds: map[string]*projection.Memory{}, x: &projection.Scope{}, y: &projection.Scope{}}
	ok, err := projstore.Current(tx)
	if err != nil {
		return nil, nil, err
	}
	if ok {
		f.now = projstore.NewTx(tx)
	}
	if err := f.scan(); err != nil {
		return nil, nil, err
	}
	if err := f.streams(); err != nil {
		return nil, nil, err
	}
	if err := f.bornAtB(); err != nil {
		return nil, nil, err
	}
	f.x.Plans, f.y.Plans = projection.NonNil(f.x.Plans), projection.NonNil(f.y.Plans)
	f.x.Tasks, f.y.Tasks = projection.NonNil(f.x.Tasks), projection.NonNil(f.y.Tasks)
	f.x.Approvals, f.y.Approvals = projection.NonNil(f.x.Approvals), projection.NonNil(f.y.Approvals)
	f.x.Execs, f.y.Execs = projection.NonNil(f.x.Execs), projection.NonNil(f.y.Execs)
	f.x.Checkpoints, f.y.Checkpoints = []*projection.Checkpoint{}, []*projection.Checkpoint{}
	return f.x, f.y, nil
}

// far is one Far read.
type far struct {
	tx      store.Tx
	project string
	a, b    uint64
	now     *projstore.Tx // the projections, when this binary's; else nil
	warn    func(string, ...any)

	// seen are the streams the events in (a, b] are on, each true when it
	// was there at a (its first event there is not its first).
	seen map[string]bool
	// born are the entities created in (a, b].
	born []bornRef
	// folds are the streams folded up to b (EntityAt), by stream.
	folds map[string]*projection.Memory
	x, y  *projection.Scope
}

// bornRef is an entity created in (a, b]: its kind (farCreates' index),
// id and the stream of the event that created it (its task's, or the
// project's).
type bornRef struct {
	kind       int
	id, stream string
}

// scan reads the project's records in (a, b] and notes their streams and
// the entities they create.
func (f *far) scan() error {
	err := f.tx.ReplayProject(f.project, f.a+1, func(r *store.Record) error {
		if r.Seq > f.b {
			return store.ErrStop
		}
		if r.Type == projection.TypeRollbackApplied || r.Type == projection.TypeRollbackMarked {
			return errWhole
		}
		_, p, _, ok := projection.ParseStream(r.Stream)
		if !ok || p != f.project {
			return errWhole
		}
		if _, ok := f.seen[r.Stream]; !ok {
			f.seen[r.Stream] = r.Version > 1
		}
		if i, ok := farCreates[r.Type]; ok {
			id, ok := snapshot.StringFields(r.Data, "id")
			if !ok || id[0] == "" {
				return errWhole
			}
			f.born = append(f.born, bornRef{kind: i, id: id[0], stream: r.Stream})
		}
		return nil
	})
	if errors.Is(err, errWhole) {
		return ErrNotBetween
	}
	return err
}

// fold returns the fold of stream up to b (EntityAt), once per stream.
func (f *far) fold(stream string) (*projection.Memory, error) {
	if m, ok := f.folds[stream]; ok {
		return m, nil
	}
	m, err := EntityAt(f.tx, f.project, stream, f.b, f.warn)
	if err != nil {
		return nil, err
	}
	if m == nil {
		return nil, ErrNotBetween
	}
	f.folds[stream] = m
	return m, nil
}

// streams reads the entities of each stream that was there at a, at a
// (EntityAt) and at b (atB), in the streams' order, and the project
// when its own stream is among those the events are on.
func (f *far) streams() error {
	names := make([]string, 0, len(f.seen))
	for s, old := range f.seen {
		if old || s == projection.ProjectStream(f.project) {
			names = append(names, s)
		}
	}
	slices.Sort(names)
	for _, s := range names {
		atA := projection.NewMemory()
		if f.seen[s] {
			m, err := EntityAt(f.tx, f.project, s, f.a, f.warn)
			if err != nil {
				return err
			}
			if m == nil {
				return ErrNotBetween
			}
			atA = m
		}
		if s == projection.ProjectStream(f.project) {
			if err := f.projectAtB(atA); err != nil {
				return err
			}
		}
		var err error
		if f.x.Plans, f.y.Plans, err = pairsAtB(f, 0, s, atA.Plans, f.x.Plans, f.y.Plans, planOf); err != nil {
			return err
		}
		if f.x.Tasks, f.y.Tasks, err = pairsAtB(f, 1, s, atA.Tasks, f.x.Tasks, f.y.Tasks, taskOf2); err != nil {
			return err
		}
		if f.x.Approvals, f.y.Approvals, err = pairsAtB(f, 2, s, atA.Approvals, f.x.Approvals, f.y.Approvals, approvalOf); err != nil {
			return err
		}
		if f.x.Execs, f.y.Execs, err = pairsAtB(f, 3, s, atA.Execs, f.x.Execs, f.y.Execs, execOf); err != nil {
			return err
		}
	}
	return nil
}

// projectAtB sets the project at a (from its stream's fold atA: nil
// when the stream began after a) and at b: the projections' when no
// event on its stream came after b (Meta.Seq), else its stream's fold.
func (f *far) projectAtB(atA *projection.Memory) error {
	f.x.Project = atA.Projects[f.project]
	if f.now != nil {
		p, err := f.now.Project(f.project)
		if err != nil {
			return err
		}
		if p != nil && p.Seq <= f.b {
			f.y.Project = p
			return nil
		}
	}
	m, err := f.fold(projection.ProjectStream(f.project))
	if err != nil {
		return err
	}
	f.y.Project = m.Projects[f.project]
	return nil
}

// Readers of one kind's entity in the projections and in a fold.
type kindOf[V any] struct {
	now  func(s *projstore.Tx, project, id string) (*V, error)
	mem  func(m *projection.Memory, key string) *V
	meta func(v *V) *projection.Meta
}

var (
	planOf = kindOf[projection.Plan]{(*projstore.Tx).Plan,
		func(m *projection.Memory, k string) *projection.Plan { return m.Plans[k] },
		func(v *projection.Plan) *projection.Meta { return &v.Meta }}
	taskOf2 = kindOf[projection.Task]{(*projstore.Tx).Task,
		func(m *projection.Memory, k string) *projection.Task { return m.Tasks[k] },
		func(v *projection.Task) *projection.Meta { return &v.Meta }}
	approvalOf = kindOf[projection.Approval]{(*projstore.Tx).Approval,
		func(m *projection.Memory, k string) *projection.Approval { return m.Approvals[k] },
		func(v *projection.Approval) *projection.Meta { return &v.Meta }}
	execOf = kindOf[projection.Exec]{(*projstore.Tx).Exec,
		func(m *projection.Memory, k string) *projection.Exec { return m.Execs[k] },
		func(v *projection.Exec) *projection.Meta { return &v.Meta }}
)

// pairsAtB appends the entities of m (kind i of stream's fold at a,
// keyed project/id) to x, and each one at b to y (none is gone: only a
// rollback removes an entity).
func pairsAtB[V any](f *far, i int, stream string, m map[string]*V, x, y []*V, k kindOf[V]) ([]*V, []*V, error) {
	for key, v := range m {
		w, err := atB(f, stream, key[len(f.project)+1:], k)
		if err != nil {
			return nil, nil, err
		}
		x = append(x, v)
		if w != nil {
			y = append(y, w)
		}
	}
	return x, y, nil
}

// atB reads the entity with id of stream at b: the projections' when its
// last change is at or below b, else from the stream's fold.
func atB[V any](f *far, stream, id string, k kindOf[V]) (*V, error) {
	if f.now != nil {
		v, err := k.now(f.now, f.project, id)
		if err != nil {
			return nil, err
		}
		if v != nil && k.meta(v).Seq <= f.b {
			return v, nil
		}
	}
	m, err := f.fold(stream)
	if err != nil {
		return nil, err
	}
	return k.mem(m, f.project+"/"+id), nil
}

// bornAtB puts the entities created in (a, b] into the state at b: named
// from the projections' encoding (id and title) when their last change is
// at or below b, else read whole (atB).
func (f *far) bornAtB() error {
	var err error
	for _, r := range f.born {
		switch r.kind {
		case 0:
			f.y.Plans, err = bornOne(f, r, f.y.Plans, planOf)
		case 1:
			f.y.Tasks, err = bornOne(f, r, f.y.Tasks, taskOf2)
		case 2:
			f.y.Approvals, err = bornOne(f, r, f.y.Approvals, approvalOf)
		case 3:
			f.y.Execs, err = bornOne(f, r, f.y.Execs, execOf)
		}
		if err != nil {
			return err
		}
	}
	f.born = nil
	return nil
}

// bornOne appends the entity r at b to y.
func bornOne[V any](f *far, r bornRef, y []*V, k kindOf[V]) ([]*V, error) {
	if f.now != nil {
		key := []byte(f.project + "/" + r.id)
		v, err := f.tx.Get(farBuckets[r.kind], key)
		if err != nil {
			return nil, err
		}
		if v != nil {
			e, err := projstore.EntityMsgpack(f.tx, farBuckets[r.kind], key, v)
			if err != nil {
				return nil, err
			}
			if seq, ok := snapshot.UintField(e, "seq"); ok && seq <= f.b && seq > 0 {
				if w, ok := Named[V](r.kind, r.id, e); ok {
					return append(y, w), nil
				}
			}
		}
	}
	w, err := atB(f, r.stream, r.id, k)
	if err != nil || w == nil {
		return y, err
	}
	return append(y, w), nil
}

// Named returns an entity of kind i (plans, tasks, approvals, execs)
// holding only its id and what a diff titles it by (a plan's or task's
// title, an approval's message, an exec record's command and code), read
// from its encoding e; ok false when they do not read.
func Named[V any](i int, id string, e []byte) (*V, bool) {
	var v any
	switch i {
	case 0:
		f, ok := snapshot.StringFields(e, "title")
		if !ok {
			return nil, false
		}
		v = &projection.Plan{ID: id, Title: f[0]}
	case 1:
		f, ok := snapshot.StringFields(e, "title")
		if !ok {
			return nil, false
		}
		v = &projection.Task{ID: id, Title: f[0]}
	case 2:
		f, ok := snapshot.StringFields(e, "message")
		if !ok {
			return nil, false
		}
		v = &projection.Approval{ID: id, Message: f[0]}
	case 3:
		f, ok := snapshot.StringFields(e, "command", "code")
		if !ok {
			return nil, false
		}
		x := &projection.Exec{}
		x.ID, x.Command, x.Code = id, f[0], f[1]
		v = x
	}
	out, ok := v.(*V)
	return out, ok
}
