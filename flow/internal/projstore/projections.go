package projstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// Format is the format of the engine's stored projection records: 1,
// sealed with a CRC32C of key and value (checksum.go); 2, the status index
// holds titles too (summary.go), for completion; 3, it holds the task
// counts of each plan too (digestsum.go); 4, an entity's value is packed
// and compressed msgpack, an exec's a reference to its event (value.go);
// 5, the children index (children.go).
// Files of earlier flowctl
// hold unsealed records and no format. It is kept apart from
// projection.Version, which every snapshot carries too: how flow frames
// its records is no part of a snapshot, so a new format leaves the
// snapshots of a file readable.
const Format = 5

// stamp is what proj_meta's version holds for projections this binary
// built: projection.Version and Format, uint32 BE each. Stored projections
// with another stamp (an older file has only the version) are rebuilt on a
// writable open and read around (a replay in memory) by a read-only one.
var stamp = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, projection.Version), Format)

// Current reports whether the stored projections were built by this
// binary's fold in this binary's format.
func Current(tx store.Tx) (bool, error) {
	b, err := tx.Get(BucketMeta, KeyVersion)
	if err != nil {
		return false, err
	}
	return bytes.Equal(b, stamp), nil
}

// Report says what a replay (and so a rebuild) did.
type Report struct {
	Events  uint64 `json:"events"`
	Skipped int    `json:"skipped"` // events of unknown types or schemas
}

// progressEvery is how many events a replay folds between progress reports.
const progressEvery = 10000

// Replay folds the whole log into memory, warning once per unknown event
// type and reporting progress, when asked (progress not nil), every
// progressEvery events and at the end. On more than one CPU, a log of
// more than parallelMin events is folded by a goroutine per CPU
// (ReplayOn).
func Replay(tx store.Tx, warn func(format string, args ...any), progress func(done, total uint64)) (*projection.Memory, Report, error) {
	workers := 1
	if head, _ := tx.Head(); head > parallelMin {
		workers = runtime.GOMAXPROCS(0)
	}
	return ReplayOn(tx, workers, warn, progress)
}

// parallelMin is the fewest events a Replay folds in parallel: below it,
// starting goroutines and merging their states costs more than it saves.
const parallelMin = 20000

// ReplayOn is Replay on workers goroutines besides the caller's, which
// reads the log once and hands each project's events, in seq order, to
// the one worker that folds that project: projects are independent folds
// (an event changes entities of its own project only), so the state is
// the one a fold on one goroutine makes, entity for entity. workers <= 1
// folds on the caller's goroutine.
func ReplayOn(tx store.Tx, workers int, warn func(format string, args ...any), progress func(done, total uint64)) (*projection.Memory, Report, error) {
	total, _ := tx.Head()
	size := newSized(sizeHint(tx))
	if s, ok := tx.(splitter); ok && workers > 1 {
		return replaySplit(s, total, workers, size, warn, progress)
	}
	read := func(fn func(*store.Record) error) error { return tx.Replay(1, 0, fn) }
	return replay(read, total, workers, size, warn, progress)
}

// sized makes the state of worker i of n of a replay: the first, which
// the others' are merged into, with room for the whole state, the
// others for their share of it.
type sized func(i, n int) *projection.Memory

// newSized is the sized of a replay whose state holds about projects
// projects and the entities c counts (sizeHint).
func newSized(projects int, c projection.Counters) sized {
	return func(i, n int) *projection.Memory {
		if i == 0 {
			return projection.NewMemorySized(projects, c)
		}
		return projection.NewMemorySized(projects, share(c, n))
	}
}

// ReplayProject folds the events of project into memory, read through
// the project index, as Replay folds the whole log; total is what
// progress hears as the events to fold.
func ReplayProject(tx store.Tx, project string, total uint64, warn func(format string, args ...any), progress func(done, total uint64)) (*projection.Memory, Report, error) {
	read := func(fn func(*store.Record) error) error { return tx.ReplayProject(project, 1, fn) }
	var c projection.Counters
	if p, err := NewTx(tx).Project(project); err == nil && p != nil { // a hint only, as sizeHint's
		c = p.Counters
	}
	return replay(read, total, 1, newSized(1, clampHint(c)), warn, progress)
}

// replay folds the records read hands it, on workers goroutines.
func replay(read func(fn func(*store.Record) error) error, total uint64, workers int, size sized, warn func(format string, args ...any), progress func(done, total uint64)) (*projection.Memory, Report, error) {
	var rep Report
	if progress != nil {
		progress(0, total)
		defer func() { progress(rep.Events, total) }()
	}
	var fold func(r *store.Record) error
	var done func() (*projection.Memory, error)
	if workers <= 1 {
		mem := size(0, 1)
		fold = func(r *store.Record) error { return projection.Apply(mem, r) }
		done = func() (*projection.Memory, error) { return mem, nil }
	} else {
		p := newParallelFold(workers, size)
		fold, done = p.fold, p.wait
	}
	warned := map[string]bool{}
	err := read(func(r *store.Record) error {
		rep.Events++
		if progress != nil && rep.Events%progressEvery == 0 {
			progress(rep.Events, total)
		}
		if schema, ok := projection.Schema(r.Type); !ok || r.Schema != schema {
			rep.Skipped++
			if !warned[r.Type] {
				warned[r.Type] = true
				warn("skipping events of type %s (schema %d), first at seq %d: this flowctl does not know them", r.Type, r.Schema, r.Seq)
			}
			return nil
		}
		return fold(r)
	})
	mem, ferr := done()
	if ferr != nil { // a fold's error comes before any the read met later
		return nil, rep, ferr
	}
	return mem, rep, err
}

// parallelFold folds the records handed to fold on one goroutine per
// worker, each project on one of them, in batches of foldBatch records.
type parallelFold struct {
	workers []*foldWorker
	owner   map[string]*foldWorker // project -> the worker folding it
	last    string                 // the project of the record before,
	lastW   *foldWorker            // and its worker: most records follow one of their project
	next    int                    // the worker the next new project goes to
	free    chan *foldBatch        // batches the workers are done with
	failed  atomic.Bool            // a worker met an error: stop reading
	wg      sync.WaitGroup
}

// foldBatch is records copied out of a replay, their payloads in data,
// the i-th ending at ends[i].
type foldBatch struct {
	recs []store.Record
	data []byte
	ends []int
}

// foldBatchLen is how many records go to a worker at a time, and
// foldAhead how many batches a worker's channel holds: the reading runs
// up to foldAhead batches ahead of a worker, so that a run of one
// project's records (an import's, say) keeps the other workers busy
// with what came before it rather than waiting for the reading.
const (
	foldBatchLen = 512
	foldAhead    = 8
)

type foldWorker struct {
	mem   *projection.Memory
	in    chan *foldBatch
	batch *foldBatch // being filled
	err   error
	seq   uint64 // of the record whose fold failed
}

func newParallelFold(n int, size sized) *parallelFold {
	p := &parallelFold{owner: map[string]*foldWorker{}, free: make(chan *foldBatch, (foldAhead+2)*n)}
	for i := range n {
		w := &foldWorker{mem: size(i, n), in: make(chan *foldBatch, foldAhead)}
		p.workers = append(p.workers, w)
		p.wg.Add(1)
		go p.run(w)
	}
	return p
}

// run folds w's batches until its channel closes; after an error it only
// hands batches back.
func (p *parallelFold) run(w *foldWorker) {
	defer p.wg.Done()
	for b := range w.in {
		for i := range b.recs {
			if w.err != nil {
				break
			}
			if err := projection.Apply(w.mem, &b.recs[i]); err != nil {
				w.err, w.seq = err, b.recs[i].Seq
				p.failed.Store(true)
			}
		}
		select {
		case p.free <- b:
		default:
		}
	}
}

// fold copies r (lent by the replay) into the batch of its project's
// worker, handing the batch over when it is full.
func (p *parallelFold) fold(r *store.Record) error {
	w := p.lastW
	if w == nil || r.Project != p.last {
		w = p.workerOf(r.Project)
	}
	if w.batch == nil {
		select {
		case w.batch = <-p.free:
			w.batch.recs, w.batch.data, w.batch.ends = w.batch.recs[:0], w.batch.data[:0], w.batch.ends[:0]
		default:
			w.batch = &foldBatch{recs: make([]store.Record, 0, foldBatchLen)}
		}
	}
	b := w.batch
	// The payloads share one buffer, which may move as it grows: the
	// records' Data are cut from it when the batch is sent.
	b.recs = append(b.recs, *r)
	b.data = append(b.data, r.Data...)
	b.ends = append(b.ends, len(b.data))
	if len(b.recs) == foldBatchLen {
		p.send(w)
		if p.failed.Load() {
			return store.ErrStop
		}
	}
	return nil
}

// workerOf returns the worker folding project, giving a new project to
// the next worker in turn.
func (p *parallelFold) workerOf(project string) *foldWorker {
	w := p.owner[project]
	if w == nil {
		w = p.workers[p.next%len(p.workers)]
		p.next++
		p.owner[project] = w
	}
	p.last, p.lastW = project, w
	return w
}

// send hands w its batch, first pointing each record's Data into the
// batch's buffer.
func (p *parallelFold) send(w *foldWorker) {
	b := w.batch
	start := 0
	for i, end := range b.ends {
		b.recs[i].Data = b.data[start:end:end]
		start = end
	}
	w.in <- b
	w.batch = nil
}

// wait hands over the last batches, waits for the workers and returns
// their states merged, or the error of the earliest record whose fold
// failed.
func (p *parallelFold) wait() (*projection.Memory, error) {
	for _, w := range p.workers {
		if w.batch != nil && len(w.batch.recs) > 0 {
			p.send(w)
		}
		close(w.in)
	}
	p.wg.Wait()
	var first *foldWorker
	for _, w := range p.workers {
		if w.err != nil && (first == nil || w.seq < first.seq) {
			first = w
		}
	}
	if first != nil {
		return nil, first.err
	}
	mems := make([]*projection.Memory, len(p.workers))
	for i, w := range p.workers {
		mems[i] = w.mem
	}
	return mergeMemories(mems), nil
}

// mergeMemories puts the entities of the workers' states, which hold
// different projects, into the first one's, each kind of entity on a
// goroutine of its own (the maps are apart): the merge is the one part of
// a parallel replay that nothing else runs beside.
func mergeMemories(mems []*projection.Memory) *projection.Memory {
	out := mems[0]
	if len(mems) == 1 {
		return out
	}
	var wg sync.WaitGroup
	merge := func(copyFrom func(m *projection.Memory)) {
		wg.Go(func() {
			for _, m := range mems[1:] {
				copyFrom(m)
			}
		})
	}
	merge(func(m *projection.Memory) { maps.Copy(out.Execs, m.Execs) })
	merge(func(m *projection.Memory) { maps.Copy(out.Tasks, m.Tasks) })
	merge(func(m *projection.Memory) {
		maps.Copy(out.Projects, m.Projects)
		maps.Copy(out.Plans, m.Plans)
		maps.Copy(out.Approvals, m.Approvals)
		maps.Copy(out.Checkpoints, m.Checkpoints)
	})
	wg.Wait()
	return out
}

// WriteMemory stores a replayed state as the inline projections, in the
// empty buckets a rebuild leaves.
func WriteMemory(tx store.Tx, mem *projection.Memory) error {
	if err := writeFresh(tx, mem); err != nil {
		return err
	}
	return tx.Put(BucketMeta, KeyVersion, stamp)
}

// record is one key and value to put into a bucket.
type record struct {
	bucket string
	key    string
	value  []byte
}

// writeChunk is how many records a producer of writeFresh hands over at a
// time.
const writeChunk = 256

// writeFresh writes mem's entities, then its status index, each bucket in
// key order: bbolt appends to a node when keys come in order but shifts
// the node's whole array for a key that lands in the middle. Two
// goroutines sort and encode the entities and the index while the
// caller's puts them (a Tx is for its own goroutine only).
func writeFresh(tx store.Tx, mem *projection.Memory) error {
	entities := make(chan []record, 8)
	summaries := make(chan []record, 8)
	stop := make(chan struct{})
	var encErr error // of the entities' producer, read after entities closes
	go func() {
		defer close(entities)
		encErr = produceEntities(mem, entities, stop)
	}()
	go func() {
		defer close(summaries)
		produceSummaries(mem, summaries, stop)
	}()
	err := putAll(tx, entities)
	if err == nil {
		err = encErr
	}
	if err == nil {
		err = putAll(tx, summaries)
	}
	if err == nil {
		err = writeChildren(tx, mem)
	}
	close(stop)
	for range entities { // let the producers end
	}
	for range summaries {
	}
	return err
}

// putAll puts the records from in until it closes or a put fails.
func putAll(tx store.Tx, in <-chan []record) error {
	for chunk := range in {
		for _, r := range chunk {
			if err := tx.Put(r.bucket, []byte(r.key), r.value); err != nil {
				return err
			}
		}
	}
	return nil
}

// send hands chunk to out unless stop closes first.
func send(out chan<- []record, stop <-chan struct{}, chunk []record) bool {
	select {
	case out <- chunk:
		return true
	case <-stop:
		return false
	}
}

// produceEntities sends mem's entities, sealed, bucket by bucket in key
// order.
func produceEntities(mem *projection.Memory, out chan<- []record, stop <-chan struct{}) error {
	c := &chunker{out: out, stop: stop}
	for _, produce := range []func() error{
		func() error { return produceMap(c, BucketProjects, mem.Projects) },
		func() error { return produceMap(c, BucketPlans, mem.Plans) },
		func() error { return produceMap(c, BucketTasks, mem.Tasks) },
		func() error { return produceMap(c, BucketApprovals, mem.Approvals) },
		func() error { return produceMap(c, BucketExecs, mem.Execs) },
		func() error { return produceMap(c, BucketCheckpts, mem.Checkpoints) },
	} {
		if err := produce(); err != nil || c.stopped {
			return err
		}
	}
	c.flush()
	return nil
}

// produceMap sends the entities of m, sealed, in key order.
func produceMap[V any](c *chunker, bucket string, m map[string]*V) error {
	var enc encoder
	for _, key := range slices.Sorted(maps.Keys(m)) {
		b, err := enc.encode(key, m[key])
		if err != nil {
			return err
		}
		if c.add(record{bucket, key, b}); c.stopped {
			return nil
		}
	}
	return nil
}

// chunker hands records over writeChunk at a time.
type chunker struct {
	out     chan<- []record
	stop    <-chan struct{}
	chunk   []record
	stopped bool // stop closed: the writer wants no more
}

func (c *chunker) add(r record) {
	if c.chunk = append(c.chunk, r); len(c.chunk) == writeChunk {
		c.flush()
	}
}

func (c *chunker) flush() {
	if len(c.chunk) > 0 && !c.stopped {
		c.stopped = !send(c.out, c.stop, c.chunk)
	}
	c.chunk = make([]record, 0, writeChunk)
}

// produceSummaries sends the status index mem implies, in key order.
func produceSummaries(mem *projection.Memory, out chan<- []record, stop <-chan struct{}) {
	want := wantSummaries(mem)
	c := &chunker{out: out, stop: stop}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if c.add(record{BucketSummaries, k, want[k]}); c.stopped {
			return
		}
	}
	produceExecRows(mem, c)
	c.flush()
}

// DropProject deletes project's entities and its entries in the status
// index, for WriteMemory to write them anew from a replay of its events.
func DropProject(tx store.Tx, project string) error {
	if err := tx.Delete(BucketProjects, []byte(project)); err != nil {
		return err
	}
	for _, bucket := range EntityBuckets[1:] {
		if err := deletePrefix(tx, bucket, []byte(project+"/"), func(k []byte) bool {
			p, _ := splitKey(string(k))
			return p == project
		}); err != nil {
			return err
		}
	}
	// The index's keys of project: its entries, ids by status, counts
	// and claims (summary.go).
	for _, bucket := range EntityBuckets[1:] {
		if !summarized[bucket] {
			continue
		}
		ref := SummaryRefKey(bucket, project+"/")
		if err := deletePrefix(tx, BucketSummaries, ref, func(k []byte) bool {
			p, _ := splitKey(string(k[len(ref)-len(project)-1:]))
			return p == project
		}); err != nil {
			return err
		}
		byStatus := []byte("s" + bucket + "\x00" + project + "\x00") // SummaryStatusPrefix of every status
		for _, prefix := range [][]byte{byStatus, SummaryCountPrefix(bucket, project)} {
			if err := deletePrefix(tx, BucketSummaries, prefix, nil); err != nil {
				return err
			}
		}
	}
	if err := dropExecRows(tx, project); err != nil {
		return err
	}
	if err := dropChildren(tx, project); err != nil {
		return err
	}
	return deletePrefix(tx, BucketSummaries, []byte("l"+project+"\x00"), nil)
}

// deletePrefix deletes the keys of bucket under prefix that keep allows
// (nil: all).
func deletePrefix(tx store.Tx, bucket string, prefix []byte, keep func(k []byte) bool) error {
	var keys [][]byte
	err := tx.Scan(bucket, prefix, func(k, _ []byte) error {
		if keep == nil || keep(k) {
			keys = append(keys, bytes.Clone(k))
		}
		return nil
	})
	for _, k := range keys {
		if err == nil {
			err = tx.Delete(bucket, k)
		}
	}
	return err
}

// WriteProject stores a replay of one project's events as its inline
// projections, in the buckets DropProject emptied of it.
func WriteProject(tx store.Tx, mem *projection.Memory) error {
	return writeFresh(tx, mem)
}

// Compare compares mem, a replay of the log, byte for byte with the
// stored projections. The first difference is returned as a
// *store.CorruptionError naming the entity.
func Compare(tx store.Tx, mem *projection.Memory) error {
	var err error
	want := map[string]map[string][]byte{}
	eachMemEntity(mem, func(bucket, key string, v any) {
		b, merr := encodeEntity(key, v)
		if want[bucket] == nil {
			want[bucket] = map[string][]byte{}
		}
		want[bucket][key] = b
		if err == nil {
			err = merr
		}
	})
	if err != nil {
		return err
	}
	want[BucketSummaries] = wantSummaries(mem)
	for _, bucket := range slices.Concat(EntityBuckets, []string{BucketSummaries}) {
		if err := compareBucket(tx, bucket, want[bucket]); err != nil {
			return err
		}
	}
	return compareChildren(tx, mem)
}

// eachMemEntity calls fn with every entity of mem, its bucket and its key.
func eachMemEntity(mem *projection.Memory, fn func(bucket, key string, v any)) {
	for k, v := range mem.Projects {
		fn(BucketProjects, k, v)
	}
	for k, v := range mem.Plans {
		fn(BucketPlans, k, v)
	}
	for k, v := range mem.Tasks {
		fn(BucketTasks, k, v)
	}
	for k, v := range mem.Approvals {
		fn(BucketApprovals, k, v)
	}
	for k, v := range mem.Execs {
		fn(BucketExecs, k, v)
	}
	for k, v := range mem.Checkpoints {
		fn(BucketCheckpts, k, v)
	}
}

func compareBucket(tx store.Tx, bucket string, want map[string][]byte) error {
	seen := 0
	err := tx.Scan(bucket, nil, func(k, v []byte) error {
		w, ok := want[string(k)]
		switch {
		case !ok:
			return projectionDiff(bucket, string(k), "is stored but a replay of the log does not produce it")
		case !sameValue(bucket, k, w, v):
			return projectionDiff(bucket, string(k), mismatch(bucket, k, v))
		}
		seen++
		return nil
	})
	if err != nil || seen == len(want) {
		return err
	}
	for k := range want {
		if b, _ := tx.Get(bucket, []byte(k)); b == nil {
			return projectionDiff(bucket, k, "is missing from the stored projections")
		}
	}
	return nil
}

// mismatch says how the stored value v under k differs from a replay's:
// damaged on disk (its checksum fails) or written wrong.
func mismatch(bucket string, k, v []byte) string {
	if _, err := Unseal(bucket, k, v); err != nil {
		return "fails its checksum (damaged on disk)"
	}
	return "differs from a replay of the log"
}

func projectionDiff(bucket, key, what string) error {
	return &store.CorruptionError{Reason: fmt.Sprintf("projection %s %q %s (run 'flowctl rebuild' to rebuild it from the log)", bucket, key, what)}
}
