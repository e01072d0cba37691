package history

import (
	"errors"
	"time"

	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/internal/snapstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// A status at a point without the whole state (Source's summary queries,
// Project): the status summary stored with the project's newest snapshot
// at or below the seq (snapstore.Summary: the status index's counts and
// the ids status reads, and the project entity, as of the snapshot's seq
// S) and the project's events after it, up to the seq (the tail), folded
// over only the entities they touch. Each entity the fold reads is read
// as it stood at S, as a read of one entity by id is (Source at S:
// unchanged since, or folded from its own stream), and the status it had
// then is kept: the counts at the seq are the summary's less each
// touched entity's status at S plus its status at the seq, and the lists
// the summary's less the touched entities plus those that are in them at
// the seq. So the cost is the tail's events and the touched entities'
// reads, not the size of the project's state.
//
// Anything the tail cannot be folded that way for — no summary, a
// rollback in the tail (it changes entities without touching them on
// their streams), an entity that can only be read from the whole state —
// is errWhole: the source takes the whole state then, as it did before,
// and gives the same answers (TestProperty_StatusAtEqualsWholeState).

// errWhole says the tail view cannot answer: the whole state must.
var errWhole = errors.New("history: the whole state is needed")

// tailView is project's status at seq from a summary and its tail.
type tailView struct {
	name   string // the project
	sum    *snapstore.Summary
	mem    *projection.Memory // the entities the tail touched, at seq, and the project
	before map[string]string  // status index bucket + "\x00" + id -> status at S ("" none), each touched entity
}

// tailState returns the tail view, built once; nil when the whole state
// must answer (or has been built already).
func (a *Source) tailState() (*tailView, error) {
	if a.whole != nil || a.tailDone {
		return a.tail, nil
	}
	a.tailDone = true
	v, err := buildTail(a.tx, a.project, a.seq, a.warn)
	if errors.Is(err, errWhole) {
		return nil, nil
	}
	a.tail = v
	return v, err
}

func buildTail(tx store.Tx, project string, seq uint64, warn func(string, ...any)) (*tailView, error) {
	sum, err := snapstore.NearestSummary(tx, project, seq, warn)
	if err != nil || sum == nil {
		return nil, errors.Join(err, errWhole)
	}
	at := NewSource(tx, project, sum.Seq, warn)
	at.entityOnly = true
	ts := &tailStore{project: project, at: at, sum: sum,
		v: &tailView{name: project, sum: sum, mem: projection.NewMemory(), before: map[string]string{}}}
	p, err := ts.Project(project)
	if err != nil || p == nil {
		return nil, errors.Join(err, errWhole)
	}
	ts.counters = p.Counters
	err = tx.ReplayProject(project, sum.Seq+1, func(r *store.Record) error {
		switch {
		case r.Seq > seq:
			return store.ErrStop
		case r.Type == projection.TypeRollbackApplied || r.Type == projection.TypeRollbackMarked:
			return errWhole
		}
		if err := projection.Apply(ts, r); err != nil && !errors.Is(err, projection.ErrUnknown) {
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ts.v, nil
}

// indexStatus is an entity's status in the status index (see entriesOf);
// "" for none.
func indexStatus(v any) string {
	switch v := v.(type) {
	case *projection.Plan:
		return v.Status
	case *projection.Task:
		return v.Status
	case *projection.Approval:
		return v.Status
	case *projection.Exec:
		return execStatus[v.Success]
	}
	return ""
}

// after returns the status at seq of the touched entity of bucket with
// id ("" when there is none).
func (v *tailView) after(bucket, id string) string {
	key := projection.Key(v.project(), id)
	switch bucket {
	case projstore.BucketPlans:
		return statusOrNone(v.mem.Plans[key])
	case projstore.BucketTasks:
		return statusOrNone(v.mem.Tasks[key])
	case projstore.BucketApprovals:
		return statusOrNone(v.mem.Approvals[key])
	case projstore.BucketExecs:
		return statusOrNone(v.mem.Execs[key])
	}
	return ""
}

func statusOrNone[V any](v *V) string {
	if v == nil {
		return ""
	}
	return indexStatus(v)
}

func (v *tailView) project() string { return v.name }

// touched calls fn with the id of every touched entity of bucket.
func (v *tailView) touched(bucket string, fn func(id string)) {
	for k := range v.before {
		if b, id, ok := cutKey(k); ok && b == bucket {
			fn(id)
		}
	}
}

func cutKey(k string) (bucket, id string, ok bool) {
	for i := 0; i < len(k); i++ {
		if k[i] == 0 {
			return k[:i], k[i+1:], true
		}
	}
	return "", "", false
}

// counts returns the status index's counts of bucket at seq.
func (v *tailView) counts(bucket string) map[string]int {
	out := map[string]int{}
	for st, n := range v.sum.Counts[bucket] {
		out[st] = n
	}
	v.touched(bucket, func(id string) {
		if st := v.before[bucket+"\x00"+id]; st != "" {
			out[st]--
		}
		if st := v.after(bucket, id); st != "" {
			out[st]++
		}
	})
	for st, n := range out {
		if n == 0 {
			delete(out, st)
		}
	}
	return out
}

// sets maps what SummaryIDs is asked to the summary's list.
var sets = map[[2]string]snapstore.SummarySet{
	{projstore.BucketTasks, projection.StatusTodo}:          snapstore.SetTodo,
	{projstore.BucketTasks, projection.StatusBlocked}:       snapstore.SetBlocked,
	{projstore.BucketApprovals, projection.ApprovalPending}: snapstore.SetPending,
	{projstore.BucketTasks, projection.StatusDoing}:         snapstore.SetDoing,
}

// idsOf returns the ids of bucket's entities of status at seq, sorted by
// number; ok false when the summary does not list them.
func (v *tailView) idsOf(bucket, status string) ([]string, bool) {
	if v == nil {
		return nil, false
	}
	set, ok := sets[[2]string{bucket, status}]
	if !ok || !v.sum.Lists(set) {
		return nil, false
	}
	return v.listed(bucket, v.sum.Sets[set], func(id string) bool { return v.after(bucket, id) == status }), true
}

// listed returns the ids of list (the summary's, at S) that no event of
// the tail touched, and the touched ids of bucket that keep, sorted.
func (v *tailView) listed(bucket string, list []string, keep func(id string) bool) []string {
	var out []string
	for _, id := range list {
		if _, ok := v.before[bucket+"\x00"+id]; !ok {
			out = append(out, id)
		}
	}
	v.touched(bucket, func(id string) {
		if keep(id) {
			out = append(out, id)
		}
	})
	return projstore.SortIDs(out)
}

// task returns a touched task at seq; ok false when the tail did not
// touch it.
func (v *tailView) task(project, id string) (*projection.Task, bool) {
	if v == nil {
		return nil, false
	}
	if _, ok := v.before[projstore.BucketTasks+"\x00"+id]; !ok || project != v.project() {
		return nil, false
	}
	return v.mem.Tasks[projection.Key(project, id)], true
}

// approval returns a touched approval at seq, as task does.
func (v *tailView) approval(project, id string) (*projection.Approval, bool) {
	if v == nil {
		return nil, false
	}
	if _, ok := v.before[projstore.BucketApprovals+"\x00"+id]; !ok || project != v.project() {
		return nil, false
	}
	return v.mem.Approvals[projection.Key(project, id)], true
}

// claimed returns the ids of the tasks whose claim holds at now, at seq:
// of the summary's claimed tasks (every claim at S) and the touched ones,
// those whose claim is live; task reads an untouched task at seq.
func (v *tailView) claimed(now time.Time, task func(id string) (*projection.Task, error)) ([]string, error) {
	var err error
	ids := v.listed(projstore.BucketTasks, v.sum.Sets[snapstore.SetClaimed], func(id string) bool {
		t := v.mem.Tasks[projection.Key(v.project(), id)]
		return t != nil && t.Claim.Live(now)
	})
	out := ids[:0:0]
	for _, id := range ids {
		t, ok := v.task(v.project(), id)
		if !ok {
			if t, err = task(id); err != nil {
				return nil, err
			}
		}
		if t != nil && t.Claim.Live(now) {
			out = append(out, id)
		}
	}
	return out, nil
}

// tailStore is the store the tail folds into: each entity, the first
// time the fold reads, writes or deletes it, is read as it stood at S
// (at, a Source that answers by entity only) and its status then kept.
type tailStore struct {
	project  string
	at       *Source
	sum      *snapstore.Summary
	v        *tailView
	counters projection.Counters // the project's at S: an id past them was not issued yet
}

// unborn reports whether the id of prefix was issued after S: its
// number is past the project's counter then (counters only grow, and
// an id is never reused), so no entity had it at S.
func unborn(prefix, id string, counter int) bool {
	n, ok := projection.IDNumber(prefix, id)
	return ok && n > counter
}

var _ projection.Store = (*tailStore)(nil)

// load reads the entity of bucket with id at S into the view, once.
func load[V any](s *tailStore, project, bucket, id string, get func(*Source) (*V, error), clone func(*V) *V, put func(*V) error) error {
	if project != s.project {
		return errWhole
	}
	k := bucket + "\x00" + id
	if _, ok := s.v.before[k]; ok {
		return nil
	}
	v, err := get(s.at)
	if err != nil {
		return err
	}
	s.v.before[k] = ""
	if v == nil {
		return nil
	}
	v = clone(v)
	s.v.before[k] = indexStatus(v)
	return put(v)
}

func shallow[V any](v *V) *V {
	c := *v
	return &c
}

func (s *tailStore) Project(name string) (*projection.Project, error) {
	if name != s.project {
		return nil, errWhole
	}
	if p := s.v.mem.Projects[name]; p != nil {
		return p, nil
	}
	if s.sum.Project == nil {
		return nil, nil
	}
	p := new(projection.Project)
	if ok, err := projection.DecodeEntity(s.sum.Project, p); err != nil || !ok || p.Name != name {
		return nil, errWhole
	}
	return p, s.v.mem.PutProject(p)
}

func (s *tailStore) Plan(project, id string) (*projection.Plan, error) {
	err := load(s, project, projstore.BucketPlans, id, func(a *Source) (*projection.Plan, error) {
		if unborn(projection.PrefixPlan, id, s.counters.Plans) {
			return nil, nil
		}
		return a.Plan(project, id)
	}, shallow, s.v.mem.PutPlan)
	if err != nil {
		return nil, err
	}
	return s.v.mem.Plan(project, id)
}

func (s *tailStore) Task(project, id string) (*projection.Task, error) {
	err := load(s, project, projstore.BucketTasks, id, func(a *Source) (*projection.Task, error) {
		if unborn(projection.PrefixTask, id, s.counters.Tasks) {
			return nil, nil
		}
		return a.Task(project, id)
	}, (*projection.Task).Clone, s.v.mem.PutTask)
	if err != nil {
		return nil, err
	}
	return s.v.mem.Task(project, id)
}

func (s *tailStore) Approval(project, id string) (*projection.Approval, error) {
	err := load(s, project, projstore.BucketApprovals, id, func(a *Source) (*projection.Approval, error) {
		if unborn(projection.PrefixApproval, id, s.counters.Approvals) {
			return nil, nil
		}
		return a.Approval(project, id)
	}, shallow, s.v.mem.PutApproval)
	if err != nil {
		return nil, err
	}
	return s.v.mem.Approval(project, id)
}

func (s *tailStore) Exec(project, id string) (*projection.Exec, error) {
	err := load(s, project, projstore.BucketExecs, id, func(a *Source) (*projection.Exec, error) {
		if unborn(projection.PrefixExec, id, s.counters.Execs) {
			return nil, nil
		}
		return a.Exec(project, id)
	}, shallow, s.v.mem.PutExec)
	if err != nil {
		return nil, err
	}
	return s.v.mem.Exec(project, id)
}

// Checkpoint reads a checkpoint at S: one never changes once created, so
// it is the one the projections hold when it was created at or below S,
// and none when it was created after. One they do not hold (a rollback
// after the seq removed it) takes the whole state.
func (s *tailStore) Checkpoint(project, id string) (*projection.Checkpoint, error) {
	err := load(s, project, "c", id, func(a *Source) (*projection.Checkpoint, error) {
		if unborn(projection.PrefixCheckpoint, id, s.counters.Checkpoints) {
			return nil, nil
		}
		now, err := a.current()
		if err != nil || now == nil {
			return nil, errors.Join(err, errWhole)
		}
		c, err := now.Checkpoint(project, id)
		switch {
		case err != nil:
			return nil, err
		case c == nil:
			return nil, errWhole
		case c.Seq > a.seq:
			return nil, nil
		}
		return c, nil
	}, shallow, s.v.mem.PutCheckpoint)
	if err != nil {
		return nil, err
	}
	return s.v.mem.Checkpoint(project, id)
}

// The puts and deletes read the entity at S first, so that its status
// then is known whether or not the fold read it.

func (s *tailStore) PutProject(v *projection.Project) error {
	if v.Name != s.project {
		return errWhole
	}
	return s.v.mem.PutProject(v)
}

func (s *tailStore) PutPlan(v *projection.Plan) error {
	if _, err := s.Plan(v.Project, v.ID); err != nil {
		return err
	}
	return s.v.mem.PutPlan(v)
}

func (s *tailStore) PutTask(v *projection.Task) error {
	if _, err := s.Task(v.Project, v.ID); err != nil {
		return err
	}
	return s.v.mem.PutTask(v)
}

func (s *tailStore) PutApproval(v *projection.Approval) error {
	if _, err := s.Approval(v.Project, v.ID); err != nil {
		return err
	}
	return s.v.mem.PutApproval(v)
}

func (s *tailStore) PutExec(v *projection.Exec) error {
	if _, err := s.Exec(v.Project, v.ID); err != nil {
		return err
	}
	return s.v.mem.PutExec(v)
}

func (s *tailStore) PutCheckpoint(v *projection.Checkpoint) error {
	if _, err := s.Checkpoint(v.Project, v.ID); err != nil {
		return err
	}
	return s.v.mem.PutCheckpoint(v)
}

// Delete is a rollback's, which the tail does not fold: the whole state
// answers.
func (s *tailStore) Delete(kind, project, id string) error { return errWhole }
