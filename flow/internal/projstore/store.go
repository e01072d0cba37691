package projstore

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// Buckets of the inline projections.
const (
	BucketProjects  = "proj_project"
	BucketPlans     = "proj_plan"
	BucketTasks     = "proj_task"
	BucketApprovals = "proj_approval"
	BucketExecs     = "proj_exec"
	BucketCheckpts  = "proj_checkpoint"
	BucketMeta      = "proj_meta"
)

// Buckets are dropped and refilled by a rebuild.
var Buckets = []string{BucketProjects, BucketPlans, BucketTasks, BucketApprovals, BucketExecs, BucketCheckpts, BucketMeta, BucketSummaries, BucketExecRows, BucketChildren}

// EntityBuckets are the projection buckets that hold entities.
var EntityBuckets = Buckets[:6]

// kindBuckets maps the kinds a rollback removes to their buckets.
var kindBuckets = map[string]string{
	projection.KindPlan:     BucketPlans,
	projection.KindTask:     BucketTasks,
	projection.KindApproval: BucketApprovals,
	projection.KindExec:     BucketExecs,
}

// KeyVersion is proj_meta's key of the stamp of the fold and format
// that built the projections (Current).
var KeyVersion = []byte("version")

// Source is what queries read: the inline projections in a transaction
// (Tx), a replay in memory (Mem), or the engine's view at a point.
type Source interface {
	projection.Store
	Projects() ([]*projection.Project, error)
	Plans(project string) ([]*projection.Plan, error)
	Tasks(project string) ([]*projection.Task, error)
	Approvals(project string) ([]*projection.Approval, error)
	Execs(project string) ([]*projection.Exec, error)
	Checkpoints(project string) ([]*projection.Checkpoint, error)
	// The summary index (summary.go): counts by status, the ids with a
	// status, one entity's status, and the tasks with a live claim.
	SummaryCounts(bucket, project string) (map[string]int, error)
	SummaryIDs(bucket, project, status string) ([]string, error)
	SummaryStatus(bucket, project, id string) (string, error)
	Summaries(bucket, project string) ([]IndexEntry, error)
	ClaimedTaskIDs(project string, now time.Time) ([]string, error)
}

// deleted marks an entity removed in the transaction.
type deleted struct{}

// Tx is the inline projection seen through one transaction. What
// the fold puts stays in memory until flush writes it, so the fold and
// the command that runs it see one consistent state.
type Tx struct {
	// tx serves the status index's queries (summary.go); under a Pending
	// it flushes the pending writes first. raw serves entity reads, which
	// look in dirty first, and every write.
	tx, raw store.Tx
	dirty   map[entityKey]any // nil until the first put
	keys    []entityKey       // dirty keys in the order first put
	// clean holds, by the same keys, entities as they are stored: those
	// a get decoded and those a flush wrote, so that the commands of a
	// batch decode each entity once, however many flushes the batch
	// makes. A write to an entity bucket other than a flush's drops it
	// (Pending.settle). Only a command's Tx (Writer) keeps them: a
	// query's gets each return an entity of its own.
	clean map[entityKey]any
	keep  bool
	enc   encoder // of Flush
	// flushed, when set (OnFlush), hears what Flush writes.
	flushed FlushFunc
	// pending, on a Reader of a Pending, is the batch's shared Tx, whose
	// unflushed entities a get returns copies of.
	pending *Tx
	over    []Unwritten          // ReadOver's layers, read before the store
	encoded map[entityKey][]byte // Encode's values of dirty entities
}

var _ Source = (*Tx)(nil)

// NewTx is the inline projections seen through tx. Through a Pending, it
// reads and writes what the batch's commands flushed and what they hold
// unflushed alike: the Pending flushes before anything else reads or
// writes a projection bucket.
func NewTx(tx store.Tx) *Tx {
	return &Tx{tx: tx, raw: tx}
}

// Writer is the inline projections a command folds into: under a Pending,
// the one its batch's commands share (batched true), whose writes wait
// for the Pending's Flush; else a Tx of its own, which the command
// flushes. Either keeps the entities it reads (get).
func Writer(tx store.Tx) (s *Tx, batched bool) {
	if p, ok := tx.(*Pending); ok {
		return p.s, true
	}
	s = NewTx(tx)
	s.keep = true
	return s, false
}

// Reader is the inline projections a query reads through tx: under a
// Pending, its entities as the batch's commands left them, flushed or not,
// each a copy the query owns; else NewTx(tx).
func Reader(tx store.Tx) *Tx {
	if p, ok := tx.(*Pending); ok {
		return &Tx{tx: p, raw: p.Tx, pending: p.s}
	}
	return NewTx(tx)
}

// Pending is a write transaction whose commands share one Tx, so that the
// entities they fold stay decoded in memory from command to command and
// each is encoded and written once, by Flush, however many events changed
// it. Anything else that touches a projection bucket through the Pending
// (a query, a snapshot, a rebuild) flushes it first, so it sees what a
// flush after every command would have left.
type Pending struct {
	store.Tx
	s *Tx
}

// NewPending wraps tx for a batch of commands.
func NewPending(tx store.Tx) *Pending {
	p := &Pending{Tx: tx}
	p.s = &Tx{tx: p, raw: tx, keep: true}
	return p
}

// FlushFunc hears of an entity a Flush writes: its bucket and key, the
// sealed value put (the store's from then on: never to be changed) and
// the entity's msgpack (projection.AppendEntity; valid during the call
// only), or nil, nil when it removes the entity.
type FlushFunc func(bucket, key string, sealed, msgpack []byte)

// OnFlush makes s tell fn of every entity its flushes write or remove.
func (s *Tx) OnFlush(fn FlushFunc) { s.flushed = fn }

// Notifies reports whether s tells a FlushFunc of what its flushes write.
func (s *Tx) Notifies() bool { return s.flushed != nil }

// OnFlush makes p tell fn of every entity its flushes write or remove.
func (p *Pending) OnFlush(fn FlushFunc) { p.s.flushed = fn }

// Flush writes the entities the batch's commands folded.
func (p *Pending) Flush() error {
	if len(p.s.keys) == 0 {
		return nil
	}
	return p.s.Flush()
}

// FreshRecord is the wrapped transaction's FreshRecord, when it has one
// (eventlog's): the record at seq as it appended it, its payload shared;
// else nil.
func (p *Pending) FreshRecord(seq uint64) *store.Record {
	if f, ok := p.Tx.(interface{ FreshRecord(uint64) *store.Record }); ok {
		return f.FreshRecord(seq)
	}
	return nil
}

// Raw is the transaction the Pending wraps.
func (p *Pending) Raw() store.Tx { return p.Tx }

// settle flushes before bucket is read or written, if it is a projection's
// that a flush writes (proj_meta holds the stamp of a rebuild only).
func (p *Pending) settle(bucket string) error {
	if bucket == BucketMeta || !slices.Contains(Buckets, bucket) {
		return nil
	}
	return p.Flush()
}

// settleWrite is settle before a write to bucket, which leaves the
// entities kept clean stale when bucket holds entities.
func (p *Pending) settleWrite(bucket string) error {
	if slices.Contains(EntityBuckets, bucket) {
		p.s.clean = nil
	}
	return p.settle(bucket)
}

func (p *Pending) Get(bucket string, key []byte) ([]byte, error) {
	if err := p.settle(bucket); err != nil {
		return nil, err
	}
	return p.Tx.Get(bucket, key)
}

func (p *Pending) Put(bucket string, key, value []byte) error {
	if err := p.settleWrite(bucket); err != nil {
		return err
	}
	return p.Tx.Put(bucket, key, value)
}

func (p *Pending) Delete(bucket string, key []byte) error {
	if err := p.settleWrite(bucket); err != nil {
		return err
	}
	return p.Tx.Delete(bucket, key)
}

func (p *Pending) DeleteBucket(bucket string) error {
	if err := p.settleWrite(bucket); err != nil {
		return err
	}
	return p.Tx.DeleteBucket(bucket)
}

func (p *Pending) Scan(bucket string, prefix []byte, fn func(k, v []byte) error) error {
	if err := p.settle(bucket); err != nil {
		return err
	}
	return p.Tx.Scan(bucket, prefix, fn)
}

// ScanShared is Scan without copies, when the transaction p wraps has it
// (store.SharedScanner).
func (p *Pending) ScanShared(bucket string, prefix []byte, fn func(k, v []byte) error) error {
	if err := p.settle(bucket); err != nil {
		return err
	}
	return store.ScanShared(p.Tx, bucket, prefix, fn)
}

func (p *Pending) Last(bucket string, prefix, max []byte) (k, v []byte, err error) {
	if err := p.settle(bucket); err != nil {
		return nil, nil, err
	}
	return p.Tx.Last(bucket, prefix, max)
}

// entityKey names an entity in dirty and clean: its bucket and key.
type entityKey struct{ bucket, key string }

func dirtyKey(bucket, key string) entityKey { return entityKey{bucket, key} }

// get returns the entity under key in bucket: on a command's Tx, the one
// the transaction holds (dirty or clean), else decoded and then kept
// clean; on a Reader of a Pending, a copy of the one the batch holds, else
// decoded; on a query's, decoded.
func get[T any](s *Tx, bucket, key string) (*T, error) {
	dk := dirtyKey(bucket, key)
	if v, ok, err := held[T](s, dk); ok {
		return v, err
	}
	if v, ok := s.overlaid(dk); ok {
		return getOverlaid[T](s, dk, v)
	}
	k := []byte(key)
	b, err := s.raw.Get(bucket, k)
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, s.checkAbsent(bucket, key)
	}
	v, err := decodeEntity[T](s.raw, bucket, k, b)
	if err == nil && s.keep {
		s.keepClean(dk, v)
	}
	return v, err
}

// getAt is get of the entity under projection.Key(project, id) in
// bucket. The key is made, a string of its own, only when the entity is
// not held already (dirty or clean, on this Tx or its Pending's): a
// lookup names it in a buffer on the stack, which nothing keeps.
func getAt[T any](s *Tx, bucket, project, id string) (*T, error) {
	var buf [80]byte
	b := append(append(append(buf[:0], project...), '/'), id...)
	if v, ok, err := held[T](s, entityKey{bucket, unsafe.String(unsafe.SliceData(b), len(b))}); ok {
		return v, err
	}
	return get[T](s, bucket, projection.Key(project, id))
}

// held is get's answer from the entities s holds, when it holds the one
// under dk: ok false when it must look further (overlays, the store). It
// keeps nothing of dk.
func held[T any](s *Tx, dk entityKey) (v *T, ok bool, err error) {
	if v, ok := s.dirty[dk]; ok {
		if _, gone := v.(deleted); gone {
			return nil, true, nil
		}
		return v.(*T), true, nil
	}
	if s.pending != nil {
		if v, ok := s.pending.dirty[dk]; ok {
			if _, gone := v.(deleted); gone {
				return nil, true, nil
			}
			c, err := copyEntity(v.(*T))
			return c, true, err
		}
		if v, ok := s.pending.clean[dk]; ok {
			c, err := copyEntity(v.(*T))
			return c, true, err
		}
	} else if v, ok := s.clean[dk]; ok && s.keep {
		return v.(*T), true, nil
	}
	return nil, false, nil
}

func (s *Tx) keepClean(k entityKey, v any) {
	if !s.keep {
		return
	}
	if s.clean == nil {
		s.clean = map[entityKey]any{}
	}
	s.clean[k] = v
}

// copyEntity is a deep copy of the entity v (its Clone).
func copyEntity[T any](v *T) (*T, error) {
	c, ok := any(v).(interface{ Clone() *T })
	if !ok {
		return nil, fmt.Errorf("flow: %T is not a projected entity", v)
	}
	return c.Clone(), nil
}

// checkAbsent checks that an entity not found under key in bucket is
// absent from what else the file holds of it: the status index's entry of
// a plan, task, approval or exec, a project's stream (projects are never
// removed). When it is there, the entity's record was lost or moved to
// another key (a damaged key), and that is an ErrDamaged rather
// than "not found".
func (s *Tx) checkAbsent(bucket, key string) error {
	switch {
	case bucket == BucketProjects:
		if v, _ := s.raw.StreamVersion(projection.ProjectStream(key)); v == 0 {
			return nil
		}
		return Damaged(bucket, []byte(key), "is missing but the project's events are in the log")
	case summarized[bucket]:
		v, err := s.raw.Get(BucketSummaries, SummaryRefKey(bucket, key))
		if err != nil || v == nil {
			return err
		}
		return Damaged(bucket, []byte(key), "is missing but the status index lists it")
	}
	return nil
}

// decodeEntity checks the sealed value b stored under key in bucket and
// decodes it, reading an exec stored by reference through log (value.go).
// A damaged value is an ErrDamaged.
func decodeEntity[T any](log store.Tx, bucket string, key, b []byte) (*T, error) {
	body, err := Unseal(bucket, key, b)
	if err != nil {
		return nil, err
	}
	return decodeBody[T](log, bucket, key, body)
}

// decodeBody decodes the checked body of the entity under key in bucket
// (value.go).
func decodeBody[T any](log store.Tx, bucket string, key, body []byte) (*T, error) {
	v := new(T)
	if len(body) > 0 && body[0] == valueExecRef {
		if _, ok := any(v).(*projection.Exec); !ok {
			return nil, Damaged(bucket, key, "does not decode: an exec reference")
		}
		x, err := decodeExecRef(log, bucket, key, body)
		if err != nil {
			return nil, err
		}
		return any(x).(*T), nil
	}
	return unpackDecode[T](bucket, key, body, nil)
}

// unpackDecode decodes the body of an entity that is not an exec reference
// unless maybe, given its msgpack, refuses it (nil, nil).
func unpackDecode[T any](bucket string, key, body []byte, maybe func(msgpack []byte) bool) (*T, error) {
	mp := bufPool.Get().(*[]byte)
	defer bufPool.Put(mp)
	m, err := unpackBody((*mp)[:0], body)
	if cap(m) > cap(*mp) {
		*mp = m[:0]
	}
	if err != nil {
		return nil, Damaged(bucket, key, fmt.Sprintf("does not decode: %v", err))
	}
	if maybe != nil && !maybe(m) {
		return nil, nil
	}
	v := new(T)
	ok, err := projection.DecodeEntity(m, v)
	if !ok {
		return nil, fmt.Errorf("flow: %T is not a projected entity", v)
	}
	if err != nil {
		return nil, Damaged(bucket, key, fmt.Sprintf("does not decode: %v", err))
	}
	return v, nil
}

func (s *Tx) put(bucket, key string, v any) error {
	k := dirtyKey(bucket, key)
	if s.dirty == nil {
		s.dirty = map[entityKey]any{}
	}
	if _, ok := s.dirty[k]; !ok {
		s.keys = append(s.keys, k)
	}
	s.dirty[k] = v
	delete(s.clean, k) // v may be it, changed: a flush keeps it clean again
	delete(s.encoded, k)
	return nil
}

// Flush writes every entity put since the last flush.
func (s *Tx) Flush() error {
	var counts flushCounts
	var pre *preEncoded // the entities encoded on a second goroutine (preencode.go)
	if s.flushed != nil && s.encoded == nil && len(s.keys) >= preEncodeMin {
		pre = preEncode(s.keys, s.dirty)
		defer pre.end()
	}
	for i, k := range s.keys {
		bucket, key := k.bucket, k.key
		if err := flushSummary(s.raw, bucket, key, s.dirty[k], &counts); err != nil {
			return err
		}
		if err := flushPlanCounts(s.raw, bucket, key, s.dirty[k], &counts); err != nil {
			return err
		}
		if err := flushExecRow(s.raw, bucket, key, s.dirty[k]); err != nil {
			return err
		}
		if err := flushChildren(s.raw, bucket, key, s.dirty[k]); err != nil {
			return err
		}
		if _, gone := s.dirty[k].(deleted); gone {
			if err := s.raw.Delete(bucket, []byte(key)); err != nil {
				return err
			}
			if s.flushed != nil {
				s.flushed(bucket, key, nil, nil)
			}
			continue
		}
		if pre != nil {
			if err := s.putPreEncoded(bucket, key, pre.value(i)); err != nil {
				return err
			}
		} else if err := s.putEntity(bucket, key, s.dirty[k]); err != nil {
			return err
		}
		s.keepClean(k, s.dirty[k])
	}
	s.dirty, s.keys, s.encoded = nil, nil, nil
	return counts.write(s.raw)
}

// FlushInto is Flush into tx rather than the transaction s was made on,
// which s then reads through too: a fold read in a read transaction
// (which cannot write) is written by a write transaction after it.
func (s *Tx) FlushInto(tx store.Tx) error {
	s.tx, s.raw = tx, tx
	return s.Flush()
}

// putEntity writes the entity v, sealed, under key in bucket.
func (s *Tx) putEntity(bucket, key string, v any) error {
	// A value Encode made is put as it is, unless a FlushFunc must hear
	// the entity's msgpack too (a batch's Tx, which Encode never serves).
	if b, ok := s.encoded[dirtyKey(bucket, key)]; ok && s.flushed == nil {
		return s.raw.Put(bucket, []byte(key), b)
	}
	b, err := s.enc.encode(key, v)
	if err != nil {
		return err
	}
	if err := s.raw.Put(bucket, []byte(key), b); err != nil {
		return err
	}
	if s.flushed != nil {
		m := s.enc.mp
		if m == nil { // an exec, stored by reference
			m, _ = projection.AppendEntity(s.enc.xp[:0], v)
			s.enc.xp = m
		}
		s.flushed(bucket, key, b, m)
	}
	return nil
}

// putPreEncoded is putEntity of a value the second goroutine of a
// Flush encoded (preEncode), which a FlushFunc hears.
func (s *Tx) putPreEncoded(bucket, key string, v preValue) error {
	if v.err != nil {
		return v.err
	}
	if err := s.raw.Put(bucket, []byte(key), v.sealed); err != nil {
		return err
	}
	s.flushed(bucket, key, v.sealed, v.msgpack)
	return nil
}

// encodeEntity encodes a projected entity's stored body (value.go) and
// seals it for key (checksum.go).
func encodeEntity(key string, v any) ([]byte, error) {
	var e encoder
	return e.encode(key, v)
}

// encoder encodes entities into scratch buffers it reuses, so that each
// value is allocated once, at its size, rather than grown field by field.
type encoder struct {
	buf []byte
	mp  []byte // the msgpack of the last entity encoded; nil for an exec
	xp  []byte // scratch of an exec's msgpack (putEntity)
	mb  []byte // mp's array, kept when mp is nil
}

// encode is encodeEntity: a value of its own, which the store may keep.
func (e *encoder) encode(key string, v any) ([]byte, error) {
	if e.mp != nil {
		e.mb = e.mp
	}
	b, m, err := appendBodyMsgpack(e.buf[:0], e.mb[:0], v)
	if err != nil {
		return nil, err
	}
	e.buf, e.mp = b, m
	return Seal([]byte(key), append(make([]byte, 0, len(b)+SealSize), b...)), nil
}

func (s *Tx) Project(name string) (*projection.Project, error) {
	return get[projection.Project](s, BucketProjects, name)
}
func (s *Tx) Plan(p, id string) (*projection.Plan, error) {
	return getAt[projection.Plan](s, BucketPlans, p, id)
}
func (s *Tx) Task(p, id string) (*projection.Task, error) {
	return getAt[projection.Task](s, BucketTasks, p, id)
}
func (s *Tx) Approval(p, id string) (*projection.Approval, error) {
	return getAt[projection.Approval](s, BucketApprovals, p, id)
}
func (s *Tx) Exec(p, id string) (*projection.Exec, error) {
	return getAt[projection.Exec](s, BucketExecs, p, id)
}
func (s *Tx) Checkpoint(p, id string) (*projection.Checkpoint, error) {
	return getAt[projection.Checkpoint](s, BucketCheckpts, p, id)
}
func (s *Tx) PutProject(v *projection.Project) error { return s.put(BucketProjects, v.Name, v) }
func (s *Tx) PutCheckpoint(v *projection.Checkpoint) error {
	return s.put(BucketCheckpts, projection.Key(v.Project, v.ID), v)
}

// Delete removes an entity of kind; the removal is written by Flush.
func (s *Tx) Delete(kind, project, id string) error {
	bucket, ok := kindBuckets[kind]
	if !ok {
		return fmt.Errorf("flow: cannot delete an entity of kind %q", kind)
	}
	return s.put(bucket, projection.Key(project, id), deleted{})
}
func (s *Tx) PutPlan(v *projection.Plan) error {
	return s.put(BucketPlans, projection.Key(v.Project, v.ID), v)
}
func (s *Tx) PutTask(v *projection.Task) error {
	return s.put(BucketTasks, projection.Key(v.Project, v.ID), v)
}
func (s *Tx) PutApproval(v *projection.Approval) error {
	return s.put(BucketApprovals, projection.Key(v.Project, v.ID), v)
}
func (s *Tx) PutExec(v *projection.Exec) error {
	return s.put(BucketExecs, projection.Key(v.Project, v.ID), v)
}

// list decodes every entity of bucket under prefix, in key order, with
// what is dirty taking precedence, and what a command's Tx keeps clean
// not decoded again. Callers sort by id number.
func list[T any](s *Tx, bucket, prefix string) ([]*T, error) {
	if s.pending != nil && len(s.pending.keys) > 0 {
		if err := s.pending.Flush(); err != nil { // a Reader lists what is stored
			return nil, err
		}
	}
	var out []*T
	seen := map[string]bool{}
	err := s.raw.Scan(bucket, []byte(prefix), func(k, v []byte) error {
		seen[string(k)] = true
		dk := dirtyKey(bucket, string(k))
		if d, ok := s.dirty[dk]; ok {
			if v, live := d.(*T); live {
				out = append(out, v)
			}
			return nil
		}
		if c, ok := s.clean[dk]; ok && s.keep {
			out = append(out, c.(*T))
			return nil
		}
		e, err := decodeEntity[T](s.raw, bucket, k, v)
		if err == nil {
			out = append(out, e)
		}
		return err
	})
	for _, k := range s.keys {
		b, key := k.bucket, k.key
		if v, live := s.dirty[k].(*T); live && b == bucket && strings.HasPrefix(key, prefix) && !seen[key] {
			out = append(out, v)
		}
	}
	return out, err
}

func (s *Tx) Projects() ([]*projection.Project, error) {
	return list[projection.Project](s, BucketProjects, "")
}
func (s *Tx) Plans(p string) ([]*projection.Plan, error) {
	return sortByID(list[projection.Plan](s, BucketPlans, p+"/"))
}
func (s *Tx) Tasks(p string) ([]*projection.Task, error) {
	return sortByID(list[projection.Task](s, BucketTasks, p+"/"))
}
func (s *Tx) Approvals(p string) ([]*projection.Approval, error) {
	return sortByID(list[projection.Approval](s, BucketApprovals, p+"/"))
}
func (s *Tx) Execs(p string) ([]*projection.Exec, error) {
	return sortByID(list[projection.Exec](s, BucketExecs, p+"/"))
}
func (s *Tx) Checkpoints(p string) ([]*projection.Checkpoint, error) {
	return sortByID(list[projection.Checkpoint](s, BucketCheckpts, p+"/"))
}

// Mem adapts a replay in memory to a Source.
type Mem struct{ *projection.Memory }

var _ Source = Mem{}

func (m Mem) Projects() ([]*projection.Project, error) {
	return sortProjects(m.Memory.Projects), nil
}
func (m Mem) Plans(p string) ([]*projection.Plan, error) { return m.PlansOf(p), nil }
func (m Mem) Tasks(p string) ([]*projection.Task, error) { return m.TasksOf(p), nil }
func (m Mem) Approvals(p string) ([]*projection.Approval, error) {
	return m.ApprovalsOf(p), nil
}
func (m Mem) Execs(p string) ([]*projection.Exec, error) { return m.ExecsOf(p), nil }
func (m Mem) Checkpoints(p string) ([]*projection.Checkpoint, error) {
	return m.CheckpointsOf(p), nil
}

// sortByID orders entities of one kind by id number (T-2 before T-10),
// as projection.CompareIDs does, parsing each id once.
func sortByID[T interface{ EntityID() string }](items []T, err error) ([]T, error) {
	type keyed struct {
		prefix, id string
		n          int
		v          T
	}
	ks := make([]keyed, len(items))
	for i, v := range items {
		id := v.EntityID()
		prefix, num, _ := strings.Cut(id, "-")
		n, _ := strconv.Atoi(num)
		ks[i] = keyed{prefix, id, n, v}
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		if c := strings.Compare(a.prefix, b.prefix); c != 0 {
			return c
		}
		if a.n != b.n {
			return a.n - b.n // as CompareIDs
		}
		return strings.Compare(a.id, b.id)
	})
	for i := range ks {
		items[i] = ks[i].v
	}
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
