package history

import (
	"errors"

	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/internal/snapstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// A diff between two points without either whole state (Between): the
// status summary stored with the project's newest snapshot at or below
// the earlier point A (seq S, tail.go's start) and the project's events
// after it, up to the later point B, folded over only the entities they
// touch, each read as it stood at S (the tail view's store). An entity
// no event in (A, B] touches is the same at both points, and is read
// not at all; one that some event there touches is, at A, as the fold
// held it when it passed A (touched in (S, A]) or else as it stood at S,
// and at B as the fold holds it at the end. So a diff costs the events
// from the nearest snapshot to B and the reads of the entities they
// touch, not the size of the project's state.

// ErrNotBetween says Between cannot answer: no summary at or below the
// earlier point, a rollback among the events (it changes entities
// without touching them on their streams), or an entity only the whole
// state can read. The caller reads both states instead.
var ErrNotBetween = errors.New("history: a diff needs the whole states")

// Between returns project's entities that events in (a, b] touched
// (a <= b), as they stood at a and as they stand at b, each state a
// Scope of those entities only (the project in both): every entity
// that differs between the two points is there, and the others that
// are there are the same in both (a comparison tells them by their
// encodings). Checkpoints are left out. ErrNotBetween when the events
// cannot be folded that way.
func Between(tx store.Tx, project string, a, b uint64, warn func(string, ...any)) (*projection.Scope, *projection.Scope, error) {
	if b < a {
		return nil, nil, errors.New("history: Between needs a <= b")
	}
	sum, err := snapstore.NearestSummary(tx, project, a, warn)
	if err != nil || sum == nil {
		return nil, nil, errors.Join(err, ErrNotBetween)
	}
	at := NewSource(tx, project, sum.Seq, warn)
	at.entityOnly = true
	s := &betweenStore{tailStore: &tailStore{project: project, at: at, sum: sum,
		v: &tailView{name: project, sum: sum, mem: projection.NewMemory(), before: map[string]string{}}}}
	p, err := s.tailStore.Project(project)
	if err != nil || p == nil {
		return nil, nil, errors.Join(err, ErrNotBetween)
	}
	s.counters = p.Counters
	if far, err := farApart(tx, project, p, b); err != nil || far {
		return nil, nil, errors.Join(err, ErrNotBetween)
	}
	err = tx.ReplayProject(project, sum.Seq+1, func(r *store.Record) error {
		switch {
		case r.Seq > b:
			return store.ErrStop
		case r.Type == projection.TypeRollbackApplied || r.Type == projection.TypeRollbackMarked:
			return errWhole
		}
		if r.Seq > a && s.atA == nil {
			s.pass()
		}
		if err := projection.Apply(s, r); err != nil && !errors.Is(err, projection.ErrUnknown) {
			return err
		}
		return nil
	})
	if errors.Is(err, errWhole) {
		return nil, nil, ErrNotBetween
	}
	if err != nil {
		return nil, nil, err
	}
	if s.atA == nil {
		s.pass()
	}
	x, y := s.scopes()
	return x, y, nil
}

// farApart reports whether the fold from p (the project at the summary
// Between starts from) to seq b would cost more than reading the whole
// states from snapshots: whether the project's events between them (as
// far as the newest summary at or below b tells: its project's event
// count) are more than 3/4 of the entities of both states (the ids
// issued by p and by that summary's project). On flowbench's files
// (100k and 3M events a project) a fold costs about 5 us an event and
// a state read from snapshots (snapstore.DiffAt) about 4.5 us an
// entity, so the fold is the cheaper below about 0.9 events an entity
// of the two states; it also holds only the entities it touches.
func farApart(tx store.Tx, project string, p *projection.Project, b uint64) (bool, error) {
	if foldAny {
		return false, nil
	}
	sum, err := snapstore.NearestSummary(tx, project, b, func(string, ...any) {}) // the read at a reports its own
	if err != nil || sum == nil || sum.Project == nil {
		return false, err
	}
	q := new(projection.Project)
	if ok, err := projection.DecodeEntity(sum.Project, q); err != nil || !ok || q.Name != project {
		return false, nil
	}
	entities := func(c projection.Counters) uint64 { return uint64(c.Plans + c.Tasks + c.Approvals + c.Execs) }
	return 4*(q.Events-min(p.Events, q.Events)) > 3*(entities(p.Counters)+entities(q.Counters)), nil
}

// foldAny makes Between fold however far apart the points are (tests:
// SetFoldAny).
var foldAny bool

// SetFoldAny makes Between fold however far apart its points are, or
// weigh the fold against the snapshots again, and returns the setting
// before. For tests: small histories are all far apart by that measure.
func SetFoldAny(v bool) bool {
	old := foldAny
	foldAny = v
	return old
}

// betweenStore is the tail view's store that also keeps what Between
// compares: the touched entities as the fold held them when it passed
// the earlier point (atA), and, after that, each entity it reads for
// the first time as it stood at S (firstAfter), which is also how it
// stood at the earlier point: no event in (S, A] touched it.
type betweenStore struct {
	*tailStore
	atA        *projection.Memory // nil until the fold passes A
	firstAfter *projection.Memory
}

var _ projection.Store = (*betweenStore)(nil)

// pass copies the touched entities as they stand now: at the earlier
// point.
func (s *betweenStore) pass() {
	m := s.v.mem
	s.atA, s.firstAfter = projection.NewMemory(), projection.NewMemory()
	for _, v := range m.Projects {
		s.atA.Projects[v.Name] = v.Clone()
	}
	for k, v := range m.Plans {
		s.atA.Plans[k] = v.Clone()
	}
	for k, v := range m.Tasks {
		s.atA.Tasks[k] = v.Clone()
	}
	for k, v := range m.Approvals {
		s.atA.Approvals[k] = v.Clone()
	}
	for k, v := range m.Execs {
		s.atA.Execs[k] = v.Clone()
	}
}

// first reports whether the tail view has not read the entity of bucket
// with id yet.
func (s *betweenStore) first(bucket, id string) bool {
	_, ok := s.v.before[bucket+"\x00"+id]
	return !ok
}

// seen reads an entity through get, and keeps a copy of it in
// firstAfter when this is its first read after the earlier point.
func seen[V any](s *betweenStore, bucket, id string, get func() (*V, error), clone func(*V) *V, put func(*projection.Memory, *V) error) (*V, error) {
	first := s.atA != nil && s.first(bucket, id)
	v, err := get()
	if err == nil && first && v != nil {
		err = put(s.firstAfter, clone(v))
	}
	return v, err
}

func (s *betweenStore) Plan(project, id string) (*projection.Plan, error) {
	return seen(s, projstore.BucketPlans, id, func() (*projection.Plan, error) { return s.tailStore.Plan(project, id) },
		(*projection.Plan).Clone, (*projection.Memory).PutPlan)
}

func (s *betweenStore) Task(project, id string) (*projection.Task, error) {
	return seen(s, projstore.BucketTasks, id, func() (*projection.Task, error) { return s.tailStore.Task(project, id) },
		(*projection.Task).Clone, (*projection.Memory).PutTask)
}

func (s *betweenStore) Approval(project, id string) (*projection.Approval, error) {
	return seen(s, projstore.BucketApprovals, id, func() (*projection.Approval, error) { return s.tailStore.Approval(project, id) },
		(*projection.Approval).Clone, (*projection.Memory).PutApproval)
}

func (s *betweenStore) Exec(project, id string) (*projection.Exec, error) {
	return seen(s, projstore.BucketExecs, id, func() (*projection.Exec, error) { return s.tailStore.Exec(project, id) },
		(*projection.Exec).Clone, (*projection.Memory).PutExec)
}

// The puts read the entity first, through the reads above, so that its
// first read is kept whether or not the fold read it before it wrote.

func (s *betweenStore) PutPlan(v *projection.Plan) error {
	if _, err := s.Plan(v.Project, v.ID); err != nil {
		return err
	}
	return s.tailStore.PutPlan(v)
}

func (s *betweenStore) PutTask(v *projection.Task) error {
	if _, err := s.Task(v.Project, v.ID); err != nil {
		return err
	}
	return s.tailStore.PutTask(v)
}

func (s *betweenStore) PutApproval(v *projection.Approval) error {
	if _, err := s.Approval(v.Project, v.ID); err != nil {
		return err
	}
	return s.tailStore.PutApproval(v)
}

func (s *betweenStore) PutExec(v *projection.Exec) error {
	if _, err := s.Exec(v.Project, v.ID); err != nil {
		return err
	}
	return s.tailStore.PutExec(v)
}

// scopes returns the touched entities at the earlier point and at the
// later one, in no order.
func (s *betweenStore) scopes() (*projection.Scope, *projection.Scope) {
	m := s.v.mem
	x := &projection.Scope{Project: s.atA.Projects[s.project], Checkpoints: []*projection.Checkpoint{}}
	y := &projection.Scope{Project: m.Projects[s.project], Checkpoints: []*projection.Checkpoint{}}
	x.Plans, y.Plans = pairsOf(m.Plans, s.atA.Plans, s.firstAfter.Plans)
	x.Tasks, y.Tasks = pairsOf(m.Tasks, s.atA.Tasks, s.firstAfter.Tasks)
	x.Approvals, y.Approvals = pairsOf(m.Approvals, s.atA.Approvals, s.firstAfter.Approvals)
	x.Execs, y.Execs = pairsOf(m.Execs, s.atA.Execs, s.firstAfter.Execs)
	return x, y
}

// pairsOf lists the entities of now (every touched one, as it stands at
// the later point) and each one's value at the earlier point: in atA
// when the fold touched it before it passed that point, else in
// firstAfter when it existed at S, else none.
func pairsOf[V any](now, atA, firstAfter map[string]*V) (x, y []*V) {
	x, y = []*V{}, make([]*V, 0, len(now))
	for k, v := range now {
		y = append(y, v)
		if old, ok := atA[k]; ok {
			x = append(x, old)
		} else if old, ok := firstAfter[k]; ok {
			x = append(x, old)
		}
	}
	return x, y
}
