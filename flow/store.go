package flow

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// Buckets of the inline projections and the engine's own indexes.
const (
	bucketProjects  = "proj_project"
	bucketPlans     = "proj_plan"
	bucketTasks     = "proj_task"
	bucketApprovals = "proj_approval"
	bucketExecs     = "proj_exec"
	bucketCheckpts  = "proj_checkpoint"
	bucketProjMeta  = "proj_meta"
	bucketIdem      = "idem"
)

// projectionBuckets are dropped and refilled by a rebuild.
var projectionBuckets = []string{bucketProjects, bucketPlans, bucketTasks, bucketApprovals, bucketExecs, bucketCheckpts, bucketProjMeta, bucketSummaries}

// entityBuckets are the projection buckets that hold entities.
var entityBuckets = projectionBuckets[:6]

// kindBuckets maps the kinds a rollback removes to their buckets.
var kindBuckets = map[string]string{
	projection.KindPlan:     bucketPlans,
	projection.KindTask:     bucketTasks,
	projection.KindApproval: bucketApprovals,
	projection.KindExec:     bucketExecs,
}

var keyProjectionVersion = []byte("version")

// source is what queries read: the inline projections in a transaction,
// or a replay in memory.
type source interface {
	projection.Store
	Projects() ([]*projection.Project, error)
	Plans(project string) ([]*projection.Plan, error)
	Tasks(project string) ([]*projection.Task, error)
	Approvals(project string) ([]*projection.Approval, error)
	Execs(project string) ([]*projection.Exec, error)
	Checkpoints(project string) ([]*projection.Checkpoint, error)
	// The summary index (summary.go): counts by status, the ids with a
	// status, one entity's status, and the tasks with a live claim.
	summaryCounts(bucket, project string) (map[string]int, error)
	summaryIDs(bucket, project, status string) ([]string, error)
	summaryStatus(bucket, project, id string) (string, error)
	summaries(bucket, project string) ([]IndexEntry, error)
	claimedTaskIDs(project string, now time.Time) ([]string, error)
}

// deleted marks an entity removed in the transaction.
type deleted struct{}

// txStore is the inline projection seen through one transaction. What
// the fold puts stays in memory until flush writes it, so the fold and
// the command that runs it see one consistent state.
type txStore struct {
	tx    store.Tx
	dirty map[string]any // bucket + "\x00" + key -> entity
	keys  []string       // dirty keys in the order first put
}

var _ source = (*txStore)(nil)

func newTxStore(tx store.Tx) *txStore {
	return &txStore{tx: tx, dirty: map[string]any{}}
}

func dirtyKey(bucket, key string) string { return bucket + "\x00" + key }

func get[T any](s *txStore, bucket, key string) (*T, error) {
	if v, ok := s.dirty[dirtyKey(bucket, key)]; ok {
		if _, gone := v.(deleted); gone {
			return nil, nil
		}
		return v.(*T), nil
	}
	k := []byte(key)
	b, err := s.tx.Get(bucket, k)
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, s.checkAbsent(bucket, key)
	}
	return decodeEntity[T](bucket, k, b)
}

// checkAbsent checks that an entity not found under key in bucket is
// absent from what else the file holds of it: the status index's entry of
// a plan, task, approval or exec, a project's stream (projects are never
// removed). When it is there, the entity's record was lost or moved to
// another key (a damaged key), and that is an ErrDamagedProjection rather
// than "not found".
func (s *txStore) checkAbsent(bucket, key string) error {
	switch {
	case bucket == bucketProjects:
		if v, _ := s.tx.StreamVersion(projection.ProjectStream(key)); v == 0 {
			return nil
		}
		return damaged(bucket, []byte(key), "is missing but the project's events are in the log")
	case summarized[bucket]:
		v, err := s.tx.Get(bucketSummaries, summaryRefKey(bucket, key))
		if err != nil || v == nil {
			return err
		}
		return damaged(bucket, []byte(key), "is missing but the status index lists it")
	}
	return nil
}

// decodeEntity checks the sealed value b stored under key in bucket and
// decodes it. A damaged value is an ErrDamagedProjection.
func decodeEntity[T any](bucket string, key, b []byte) (*T, error) {
	body, err := unseal(bucket, key, b)
	if err != nil {
		return nil, err
	}
	v := new(T)
	ok, err := projection.DecodeEntity(body, v)
	if !ok {
		return nil, fmt.Errorf("flow: %T is not a projected entity", v)
	}
	if err != nil {
		return nil, damaged(bucket, key, fmt.Sprintf("does not decode: %v", err))
	}
	return v, nil
}

func (s *txStore) put(bucket, key string, v any) error {
	k := dirtyKey(bucket, key)
	if _, ok := s.dirty[k]; !ok {
		s.keys = append(s.keys, k)
	}
	s.dirty[k] = v
	return nil
}

// flush writes every entity put since the last flush.
func (s *txStore) flush() error {
	for _, k := range s.keys {
		bucket, key, _ := strings.Cut(k, "\x00")
		if err := flushSummary(s.tx, bucket, key, s.dirty[k]); err != nil {
			return err
		}
		if _, gone := s.dirty[k].(deleted); gone {
			if err := s.tx.Delete(bucket, []byte(key)); err != nil {
				return err
			}
			continue
		}
		if err := s.putEntity(bucket, key, s.dirty[k]); err != nil {
			return err
		}
	}
	s.dirty, s.keys = map[string]any{}, nil
	return nil
}

// putEntity writes the entity v, sealed, under key in bucket.
func (s *txStore) putEntity(bucket, key string, v any) error {
	b, err := encodeEntity(key, v)
	if err != nil {
		return err
	}
	return s.tx.Put(bucket, []byte(key), b)
}

// encodeEntity encodes a projected entity as marshal would (by hand:
// projection.AppendEntity) and seals it for key (checksum.go).
func encodeEntity(key string, v any) ([]byte, error) {
	b, ok := projection.AppendEntity(nil, v)
	if !ok {
		return nil, fmt.Errorf("flow: %T is not a projected entity", v)
	}
	return seal([]byte(key), b), nil
}

// flushFresh is flush for a rebuild into empty buckets: the entities in
// key order and then the summary index, whole and in key order. bbolt
// appends to a node when keys come in order but shifts the node's whole
// array for a key that lands in the middle, so a rebuild in map order
// took minutes at a million events.
func (s *txStore) flushFresh(summaries map[string][]byte) error {
	slices.Sort(s.keys)
	for _, k := range s.keys {
		bucket, key, _ := strings.Cut(k, "\x00")
		if err := s.putEntity(bucket, key, s.dirty[k]); err != nil {
			return err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(summaries)) {
		if err := s.tx.Put(bucketSummaries, []byte(k), summaries[k]); err != nil {
			return err
		}
	}
	s.dirty, s.keys = map[string]any{}, nil
	return nil
}

func (s *txStore) Project(name string) (*projection.Project, error) {
	return get[projection.Project](s, bucketProjects, name)
}
func (s *txStore) Plan(p, id string) (*projection.Plan, error) {
	return get[projection.Plan](s, bucketPlans, projection.Key(p, id))
}
func (s *txStore) Task(p, id string) (*projection.Task, error) {
	return get[projection.Task](s, bucketTasks, projection.Key(p, id))
}
func (s *txStore) Approval(p, id string) (*projection.Approval, error) {
	return get[projection.Approval](s, bucketApprovals, projection.Key(p, id))
}
func (s *txStore) Exec(p, id string) (*projection.Exec, error) {
	return get[projection.Exec](s, bucketExecs, projection.Key(p, id))
}
func (s *txStore) Checkpoint(p, id string) (*projection.Checkpoint, error) {
	return get[projection.Checkpoint](s, bucketCheckpts, projection.Key(p, id))
}
func (s *txStore) PutProject(v *projection.Project) error { return s.put(bucketProjects, v.Name, v) }
func (s *txStore) PutCheckpoint(v *projection.Checkpoint) error {
	return s.put(bucketCheckpts, projection.Key(v.Project, v.ID), v)
}

// Delete removes an entity of kind; the removal is written by flush.
func (s *txStore) Delete(kind, project, id string) error {
	bucket, ok := kindBuckets[kind]
	if !ok {
		return fmt.Errorf("flow: cannot delete an entity of kind %q", kind)
	}
	return s.put(bucket, projection.Key(project, id), deleted{})
}
func (s *txStore) PutPlan(v *projection.Plan) error {
	return s.put(bucketPlans, projection.Key(v.Project, v.ID), v)
}
func (s *txStore) PutTask(v *projection.Task) error {
	return s.put(bucketTasks, projection.Key(v.Project, v.ID), v)
}
func (s *txStore) PutApproval(v *projection.Approval) error {
	return s.put(bucketApprovals, projection.Key(v.Project, v.ID), v)
}
func (s *txStore) PutExec(v *projection.Exec) error {
	return s.put(bucketExecs, projection.Key(v.Project, v.ID), v)
}

// list decodes every entity of bucket under prefix, in key order, with
// what is dirty taking precedence. Callers sort by id number.
func list[T any](s *txStore, bucket, prefix string) ([]*T, error) {
	var out []*T
	seen := map[string]bool{}
	err := s.tx.Scan(bucket, []byte(prefix), func(k, v []byte) error {
		seen[string(k)] = true
		if d, ok := s.dirty[dirtyKey(bucket, string(k))]; ok {
			if v, live := d.(*T); live {
				out = append(out, v)
			}
			return nil
		}
		e, err := decodeEntity[T](bucket, k, v)
		if err == nil {
			out = append(out, e)
		}
		return err
	})
	for _, k := range s.keys {
		b, key, _ := strings.Cut(k, "\x00")
		if v, live := s.dirty[k].(*T); live && b == bucket && strings.HasPrefix(key, prefix) && !seen[key] {
			out = append(out, v)
		}
	}
	return out, err
}

func (s *txStore) Projects() ([]*projection.Project, error) {
	return list[projection.Project](s, bucketProjects, "")
}
func (s *txStore) Plans(p string) ([]*projection.Plan, error) {
	return sortByID(list[projection.Plan](s, bucketPlans, p+"/"))
}
func (s *txStore) Tasks(p string) ([]*projection.Task, error) {
	return sortByID(list[projection.Task](s, bucketTasks, p+"/"))
}
func (s *txStore) Approvals(p string) ([]*projection.Approval, error) {
	return sortByID(list[projection.Approval](s, bucketApprovals, p+"/"))
}
func (s *txStore) Execs(p string) ([]*projection.Exec, error) {
	return sortByID(list[projection.Exec](s, bucketExecs, p+"/"))
}
func (s *txStore) Checkpoints(p string) ([]*projection.Checkpoint, error) {
	return sortByID(list[projection.Checkpoint](s, bucketCheckpts, p+"/"))
}

// memSource adapts a replay in memory to a source.
type memSource struct{ *projection.Memory }

func (m memSource) Projects() ([]*projection.Project, error) {
	return sortProjects(m.Memory.Projects), nil
}
func (m memSource) Plans(p string) ([]*projection.Plan, error) { return m.PlansOf(p), nil }
func (m memSource) Tasks(p string) ([]*projection.Task, error) { return m.TasksOf(p), nil }
func (m memSource) Approvals(p string) ([]*projection.Approval, error) {
	return m.ApprovalsOf(p), nil
}
func (m memSource) Execs(p string) ([]*projection.Exec, error) { return m.ExecsOf(p), nil }
func (m memSource) Checkpoints(p string) ([]*projection.Checkpoint, error) {
	return m.CheckpointsOf(p), nil
}

// sortByID orders entities of one kind by id number (T-2 before T-10).
func sortByID[T interface{ EntityID() string }](items []T, err error) ([]T, error) {
	slices.SortFunc(items, func(a, b T) int { return projection.CompareIDs(a.EntityID(), b.EntityID()) })
	return items, err
}

func sortProjects(m map[string]*projection.Project) []*projection.Project {
	out := make([]*projection.Project, 0, len(m))
	for _, p := range m {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *projection.Project) int { return strings.Compare(a.Name, b.Name) })
	return out
}
