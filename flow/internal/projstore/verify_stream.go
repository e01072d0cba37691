package projstore

import (
	"cmp"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// A Stream is VerifyProjects fed by one walk of the whole log in seq
// order (the store's own check, which decodes every record anyway)
// rather than by a read of each project's records through the project
// index: the walk lends each record to Add, which copies it into a batch
// for the worker that folds its project. The walk feeds the folds of the
// largest projects up to streamEvents events; the others are folded in
// groups as large, each from a pass over the log of its own beside the
// walk (passes), so that the memory held does not grow with the file. The projects are dealt to up to
// as many workers as asked (a goroutine each, in a transaction view
// begins), so the folds of independent projects run on every core beside
// the walk. An exec never changes after the event that recorded it
// (projection.ExecAt), so a fold sums each exec as it is made and drops
// it (the sum is compared with one of the stored execs once the fold has
// ended), and compares each approval once decided and drops it; a task
// done or cancelled, a plan and a checkpoint are compared with the
// stored ones and dropped once they look settled (settle): what a fold
// holds is its projects' open tasks and pending approvals, however long
// the log.
//
// The Stream only tells a project whose stored keys are all the replay
// makes from one it is not sure of: a difference, an event the fold
// refuses, a rollback (which may restore or remove execs the fold has
// dropped). It compares those with VerifyProjects' own per-project
// replay, which names the difference in the same words. A check of the
// whole that fails (nothingElse) is made again by VerifyProjects too.
type Stream struct {
	route   map[string]*streamWorker // by project
	workers []*streamWorker
	done    chan struct{}

	projects []string
	marks    map[string]DigestMark
	w        *projectWork // warns; the fallback's work is a new one

	// groups are the projects past streamEvents, each folded from a pass
	// of its own over the log (passes), one after another once the
	// walk's fold has ended; passesDone is closed once they have ended, and pass holds
	// what they found.
	groups     [][]string
	passesDone chan struct{}
	pass       struct {
		err     error // a pass could not begin or read the log
		events  uint64
		matched map[string]int
		unsure  []string
	}

	// counts are the keys CountKeys counted, nil before.
	counts []keyCount

	// Set before done is closed, from the workers' own.
	failed   bool // the walk found a problem: nothing is compared
	beginErr error
	events   uint64
	matched  map[string]int
	unsure   map[string]bool
}

// A streamWorker folds some of the Stream's projects from the batches of
// their records.
type streamWorker struct {
	batches chan *recBatch
	free    chan *recBatch
	cur     *recBatch

	projects []string

	// Set by the worker's goroutine before it ends.
	beginErr error
	events   uint64
	matched  map[string]int
	unsure   []string
}

// recBatch is records lent by the walk, copied: their Data in one buffer
// (ends[i] is where record i's ends).
type recBatch struct {
	recs []store.Record
	ends []int
	data []byte
}

const (
	streamBatch   = 512 // records a batch
	streamBatches = 4   // batches in flight, per worker
)

// streamEvents is how many events, by their projects' stored counts, a
// fold from one pass over the log takes: a fold holds its projects' open
// entities until the pass ends, a memory that grows with their events.
// A project's events count in proportion of its tasks that are not done
// or cancelled (heldEvents), those the fold keeps: a project whose tasks
// all ended counts for next to nothing, and flowbench's files of 1M and
// 2M events are checked in the one walk, verify's live heap 20-40 MB at
// either size (116 MB at 1M when a fold held every task).
// The projects are dealt to groups of up to streamEvents events (at least
// one project each), largest first: the first group is folded from the
// walk, the others each from a pass of its own (Tx.Replay) once the
// walk's fold has ended, one group after another. The check's peak
// memory is then that of one group, whatever the file's size; a file of
// more events than a group's costs a pass over the log for each group
// more.
var streamEvents uint64 = 1 << 20

// heldEvents is how many of project p's events count against
// streamEvents: those of the tasks its fold will hold, its tasks that are
// not done or cancelled by the stored status counts (Stream.settle drops
// the others as it goes), in proportion of its tasks; all of its events
// when the counts cannot be read.
func heldEvents(tx store.Tx, p *projection.Project) uint64 {
	tasks := uint64(max(p.Counters.Tasks, 0))
	var ended uint64
	for _, status := range []string{projection.StatusDone, projection.StatusCancelled} {
		k := []byte(summaryCountKey(BucketTasks, p.Name, status))
		v, err := tx.Get(BucketSummaries, k)
		if err != nil {
			return p.Events
		}
		if v == nil {
			continue
		}
		n, err := parseCount(k, v)
		if err != nil {
			return p.Events
		}
		ended += n
	}
	if ended > tasks {
		return p.Events
	}
	return p.Events * (tasks - ended + 1) / (tasks + 1)
}

// SetStreamEvents sets streamEvents, for a test that has small files
// take both ways; restore sets it back.
func SetStreamEvents(n uint64) (restore func()) {
	old := streamEvents
	streamEvents = n
	return func() { streamEvents = old }
}

// NewStream reads the projects and the digest log index's marks in tx and
// starts the Stream's folds, on up to workers goroutines, each in a
// transaction that view begins. The caller must call End once the walk
// has ended, whether it lent records or not.
func NewStream(tx store.Tx, view func(func(store.Tx) error) error, workers int, warn func(format string, args ...any)) (*Stream, error) {
	var projects []string
	events := map[string]uint64{}
	err := store.ScanShared(tx, BucketProjects, nil, func(k, v []byte) error {
		projects = append(projects, string(k))
		if p, err := decodeEntity[projection.Project](tx, BucketProjects, k, v); err == nil {
			events[string(k)] = heldEvents(tx, p) // a damaged one: its comparison tells
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	marks, err := digestMarks(tx)
	if err != nil {
		return nil, err
	}
	s := &Stream{
		route: make(map[string]*streamWorker, len(projects)), done: make(chan struct{}),
		projects: projects, marks: marks, w: newProjectWork(projects, warn),
		matched: map[string]int{}, unsure: map[string]bool{},
	}
	groups := [][]string{projects}
	if view != nil {
		groups = splitProjects(projects, events, streamEvents)
	}
	s.groups, s.passesDone = groups[1:], make(chan struct{})
	s.pass.matched = map[string]int{}
	s.start(groups[0], view, workers)
	if len(s.groups) == 0 {
		close(s.passesDone)
	} else {
		go s.passes(view, workers)
	}
	return s, nil
}

// start starts the folds of projects, a group of the Stream's, on up to
// workers goroutines, each in a transaction view begins.
func (s *Stream) start(projects []string, view func(func(store.Tx) error) error, workers int) {
	s.workers = make([]*streamWorker, max(1, min(workers, len(projects))))
	for i := range s.workers {
		sw := &streamWorker{batches: make(chan *recBatch, streamBatches), free: make(chan *recBatch, streamBatches+2), matched: map[string]int{}}
		for range streamBatches + 2 {
			sw.free <- &recBatch{}
		}
		sw.cur = <-sw.free
		s.workers[i] = sw
	}
	for i, p := range projects {
		sw := s.workers[i%len(s.workers)]
		sw.projects = append(sw.projects, p)
		s.route[p] = sw
	}
	var wg sync.WaitGroup
	for _, sw := range s.workers {
		wg.Go(func() { s.run(view, sw) })
	}
	go func() {
		wg.Wait()
		s.gather()
		close(s.done)
	}()
}

// passes folds each of s.groups from a pass over the log of its own, in
// a transaction view begins, one after another, once the walk's fold has
// ended (its memory then goes); none when the walk found a problem.
func (s *Stream) passes(view func(func(store.Tx) error) error, workers int) {
	defer close(s.passesDone)
	if <-s.done; s.failed {
		return
	}
	for _, group := range s.groups {
		g := &Stream{
			route: make(map[string]*streamWorker, len(group)), done: make(chan struct{}),
			projects: group, marks: s.marks, w: s.w, matched: map[string]int{}, unsure: map[string]bool{},
		}
		g.start(group, view, workers)
		err := view(func(tx store.Tx) error {
			return tx.Replay(1, 0, func(r *store.Record) error { g.Add(r); return nil })
		})
		g.End(err != nil)
		<-g.done
		if err = cmp.Or(err, g.beginErr); err != nil {
			s.pass.err = err
			return
		}
		s.pass.events += g.events
		for b, n := range g.matched {
			s.pass.matched[b] += n
		}
		s.pass.unsure = append(s.pass.unsure, g.Unsure()...)
	}
}

// splitProjects deals projects, of the events counted, to groups of up
// to budget events each (at least one project), largest first, each in
// name order.
func splitProjects(projects []string, events map[string]uint64, budget uint64) [][]string {
	bySize := slices.Clone(projects)
	slices.SortStableFunc(bySize, func(a, b string) int { return cmp.Compare(events[b], events[a]) })
	var groups [][]string
	var sum uint64
	for _, p := range bySize {
		if n := len(groups); n == 0 || sum+events[p] > budget && len(groups[n-1]) > 0 {
			groups, sum = append(groups, nil), 0
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], p)
		sum += events[p]
	}
	if len(groups) == 0 {
		groups = [][]string{nil}
	}
	for _, g := range groups {
		slices.Sort(g)
	}
	return groups
}

// run folds sw's projects in a transaction view begins; when none can
// begin, it takes the batches and drops them.
func (s *Stream) run(view func(func(store.Tx) error) error, sw *streamWorker) {
	ran := false
	err := view(func(tx store.Tx) error {
		ran = true
		s.fold(tx, sw)
		return nil
	})
	if !ran {
		sw.beginErr = err
		for range sw.batches {
		}
	}
}

// gather adds up what the workers found, once they have all ended.
func (s *Stream) gather() {
	for _, sw := range s.workers {
		s.beginErr = cmp.Or(s.beginErr, sw.beginErr)
		s.events += sw.events
		for b, n := range sw.matched {
			s.matched[b] += n
		}
		for _, p := range sw.unsure {
			s.unsure[p] = true
		}
	}
}

// Add copies r, a record the walk has checked, for the fold of its
// project; a record of no project the Stream folds is only counted out
// (Verify then leaves the whole to VerifyProjects).
func (s *Stream) Add(r *store.Record) {
	sw := s.route[r.Project]
	if sw == nil {
		return
	}
	b := sw.cur
	b.data = append(b.data, r.Data...)
	b.recs = append(b.recs, *r)
	b.recs[len(b.recs)-1].Data = nil
	b.ends = append(b.ends, len(b.data))
	if len(b.recs) == streamBatch {
		sw.batches <- b
		sw.cur = <-sw.free
	}
}

// End tells the Stream that the walk has ended; failed, that it found a
// problem in the log (then nothing is compared: that problem is the one
// reported).
func (s *Stream) End(failed bool) {
	if failed {
		s.failed = true // read by the folds only after their channel is closed
	}
	for _, sw := range s.workers {
		if len(sw.cur.recs) > 0 {
			sw.batches <- sw.cur
		}
		sw.cur = nil
		close(sw.batches)
	}
}

// streamProject is a project's fold so far.
type streamProject struct {
	mem     *projection.Memory // nil once unsure
	digest  *digestCheck
	events  uint64
	dropped map[string]int    // execs compared and dropped
	execs   entrySum          // the sealed values of the execs dropped
	sum     entrySum          // their status index entries
	counts  map[string]uint64 // their counts by status
	// gone sums, by bucket, the stored entries of the tasks, plans,
	// approvals and checkpoints compared and dropped (settle, drop): a
	// sum, not a set of their keys, so that what the fold has dropped
	// costs no memory (a key kept would also keep the arena chunk it was
	// carved from: projection's foldArena); plans counts the dropped
	// tasks by plan (total, done), for the plan counts.
	gone  map[string]*entrySum
	plans map[string]*[2]uint64
}

// fold folds sw's batches in tx, then compares what each of its
// projects' fold holds with the project's stored keys.
func (s *Stream) fold(tx store.Tx, sw *streamWorker) {
	v := projectVerifier{tx: tx, w: s.w, matched: sw.matched, sum: newSummarySum()}
	states := make(map[string]*streamProject, len(sw.projects))
	for _, p := range sw.projects {
		states[p] = &streamProject{mem: projection.NewMemory(), digest: newDigestCheck(s.marks, p), counts: map[string]uint64{}, dropped: map[string]int{},
			gone: map[string]*entrySum{BucketTasks: {}, BucketPlans: {}, BucketApprovals: {}, BucketCheckpts: {}}, plans: map[string]*[2]uint64{}}
	}
	for b := range sw.batches {
		start := 0
		for i := range b.recs {
			r := &b.recs[i]
			r.Data, start = b.data[start:b.ends[i]], b.ends[i]
			if ps := states[r.Project]; ps != nil {
				sw.events++
				s.add(&v, r, ps)
			}
		}
		b.recs, b.ends, b.data = b.recs[:0], b.ends[:0], b.data[:0]
		sw.free <- b
	}
	if s.failed {
		return
	}
	for _, p := range sw.projects {
		ps := states[p]
		if ps.mem != nil && !s.same(&v, p, ps) {
			ps.mem = nil
		}
		if ps.mem == nil {
			sw.unsure = append(sw.unsure, p)
		}
		delete(states, p) // its memory goes
	}
}

// add folds r, a record of ps's project, and compares and drops the exec
// it recorded.
func (s *Stream) add(v *projectVerifier, r *store.Record, ps *streamProject) {
	ps.events++
	ps.digest.add(r)
	if ps.mem == nil {
		return
	}
	err := projection.Apply(ps.mem, r)
	switch {
	case errors.Is(err, projection.ErrUnknown):
		s.w.warnSkip(r)
		return
	case err != nil, r.Type == projection.TypeRollbackApplied:
		ps.mem = nil // VerifyProjects' replay tells
		return
	}
	s.settle(v, r, ps)
	switch {
	case r.Type == projection.TypeApprovalDecided:
		// A decided approval is not decided again (a second decision of
		// one the fold dropped is an error: VerifyProjects' replay tells),
		// and no other event but a rollback reads it: compare and drop it.
		// The approvals the fold holds are the pending ones, a few.
		for k, a := range ps.mem.Approvals {
			if a.Seq == r.Seq && !s.drop(v, ps, BucketApprovals, k, a) {
				return
			}
		}
	case len(ps.mem.Execs) == 0:
		return
	case r.Type != projection.TypeExecRecorded || len(ps.mem.Execs) > 1:
		ps.mem = nil
		return
	}
	for k, x := range ps.mem.Execs {
		if !s.drop(v, ps, BucketExecs, k, x) {
			return
		}
	}
}

// settle compares with the stored one, and drops from ps's fold, the
// entity r's fold has made or changed when it looks settled: a task done
// or cancelled by an event of its own stream, a plan by an event of its
// own, a checkpoint once made. What the fold holds is then its open
// tasks and little else, whatever the size of the log. An entity that
// differs from the stored one is kept (a later event may change it yet:
// the comparison once the fold has ended tells); one dropped that a
// later event changes after all makes that event's fold fail (the
// entity does not exist), and ps unsure: VerifyProjects' replay tells.
// Only the stored entries are summed (the stored value's hash, its
// status index entries), for same to find among the project's keys.
func (s *Stream) settle(v *projectVerifier, r *store.Record, ps *streamProject) {
	switch {
	case strings.HasPrefix(r.Stream, projection.KindTask+"/"):
		key := r.Stream[len(projection.KindTask)+1:]
		if t := ps.mem.Tasks[key]; t != nil && t.Seq == r.Seq && (t.Status == projection.StatusDone || t.Status == projection.StatusCancelled) {
			if s.settled(v, ps, BucketTasks, key, t) {
				if entry := planTask(t); entry != nil {
					v.sum.entry(&ps.sum, append(append(v.sum.key[:0], 'T'), key...), entry)
					pk := string(PlanCountKey(t.Project, t.Plan))
					c := ps.plans[pk]
					if c == nil {
						c = new([2]uint64)
						ps.plans[pk] = c
					}
					if c[0]++; t.Status == projection.StatusDone {
						c[1]++
					}
				}
				delete(ps.mem.Tasks, key)
			}
		}
	case strings.HasPrefix(r.Stream, projection.KindPlan+"/"):
		key := r.Stream[len(projection.KindPlan)+1:]
		if pl := ps.mem.Plans[key]; pl != nil && pl.Seq == r.Seq && s.settled(v, ps, BucketPlans, key, pl) {
			delete(ps.mem.Plans, key)
		}
	case r.Type == projection.TypeCheckpointCreated:
		for k, c := range ps.mem.Checkpoints {
			if c.Seq == r.Seq && s.settled(v, ps, BucketCheckpts, k, c) {
				delete(ps.mem.Checkpoints, k)
			}
		}
	}
}

// settled reports whether the entity e under key k of bucket is the
// stored one, and then sums the stored entry into ps.gone and its status
// index entries (a plan's, a task's; a checkpoint has none) into ps.sum.
func (s *Stream) settled(v *projectVerifier, ps *streamProject, bucket, k string, e any) bool {
	key := []byte(k)
	val, err := v.tx.Get(bucket, key)
	if err != nil || val == nil || !v.cmp.same(bucket, key, e, val) {
		return false
	}
	ps.gone[bucket].add(v.sum.hash(key, val))
	if bucket != BucketCheckpts {
		sumEntity(v.sum, &ps.sum, ps.counts, bucket, k, e)
	}
	return true
}

// drop compares the entity e under key k of bucket, which the fold of
// ps will not change again, with the stored one, and drops it from the
// fold; false, and ps is unsure, when they differ. An exec is not read
// here but summed (its sealed value, which same sums from a scan of the
// project's execs in key order): a Get for each exec cost the fold a
// descent of the bucket's tree, in no order.
func (s *Stream) drop(v *projectVerifier, ps *streamProject, bucket, k string, e any) bool {
	key := []byte(k)
	if bucket == BucketExecs {
		body, err := appendBody(v.cmp.want[:0], e)
		if err != nil {
			ps.mem = nil
			return false
		}
		v.cmp.want = body
		v.sum.entry(&ps.execs, key, body)
		sumEntity(v.sum, &ps.sum, ps.counts, bucket, k, e)
		ps.dropped[bucket]++
		delete(ps.mem.Execs, k)
		return true
	}
	val, err := v.tx.Get(bucket, key)
	if err != nil || val == nil || !v.cmp.same(bucket, key, e, val) {
		ps.mem = nil
		return false
	}
	sumEntity(v.sum, &ps.sum, ps.counts, bucket, k, e)
	ps.gone[bucket].add(v.sum.hash(key, val))
	delete(ps.mem.Approvals, k)
	return true
}

// same reports whether project p's stored keys are those its fold ps
// makes, counting them in v.matched when they are.
func (s *Stream) same(v *projectVerifier, p string, ps *streamProject) bool {
	matched := v.matched
	v.matched = map[string]int{}
	defer func() { v.matched = matched }()
	for _, bucket := range EntityBuckets {
		var err error
		switch bucket {
		case BucketExecs:
			// Summed as they were made (drop).
			var got entrySum
			err = v.eachOwned(bucket, p, func(k, val []byte) error {
				got.add(v.sum.hash(k, val))
				return nil
			})
			if err == nil && got != ps.execs {
				return false
			}
		case BucketApprovals:
			// Those dropped were compared when decided (drop).
			err = compareKept(v, bucket, p, ps.mem.Approvals, *ps.gone[bucket])
		case BucketTasks:
			err = compareKept(v, bucket, p, ps.mem.Tasks, *ps.gone[bucket])
		case BucketPlans:
			err = compareKept(v, bucket, p, ps.mem.Plans, *ps.gone[bucket])
		case BucketCheckpts:
			err = compareKept(v, bucket, p, ps.mem.Checkpoints, *ps.gone[bucket])
		default:
			err = v.compareEntities(bucket, p, ps.mem)
		}
		if err != nil {
			return false
		}
	}
	want := v.sum.ofWith(ps.mem, ps.sum, ps.counts, ps.plans)
	var got entrySum
	err := v.eachOwned(BucketSummaries, p, func(k, val []byte) error {
		got.add(v.sum.hash(k, val))
		return nil
	})
	if err != nil || got != want {
		return false
	}
	if ps.digest.finish(v.tx, p) != nil {
		return false
	}
	v.matched[BucketSummaries] += got.n
	for b, n := range ps.dropped {
		v.matched[b] += n
	}
	for b, n := range v.matched {
		matched[b] += n
	}
	return true
}

// errGone is compareKept's finding that the stored keys the fold did not
// hold are not those it dropped.
var errGone = errors.New("the stored entities are not those the fold dropped")

// compareKept compares the keys of bucket that p owns with want, the
// entities the fold of p holds, and gone, the sum of the stored entries
// it dropped once compared (Stream.settle): a stored key the fold does
// not hold must be one of those.
func compareKept[V any](v *projectVerifier, bucket, p string, want map[string]*V, gone entrySum) error {
	var got entrySum
	err := v.compareOwned(bucket, p, len(want)+gone.n, func(k, val []byte) (bool, bool) {
		if e, ok := want[string(k)]; ok {
			return true, v.cmp.same(bucket, k, e, val)
		}
		got.add(v.sum.hash(k, val))
		return true, true
	}, func(func(string) bool) {})
	if err == nil && got != gone {
		err = errGone
	}
	return err
}

// CountKeys counts, in tx, the keys of the buckets that Verify checks
// hold nothing but what the folds make: a scan that needs no fold, for a
// caller to run while the walk goes on rather than after it. Verify's tx
// must be tx (or see the same keys); without CountKeys, Verify counts
// them itself.
func (s *Stream) CountKeys(tx store.Tx) error {
	counts, err := countKeys(tx, s.projects)
	if err == nil {
		s.counts = counts
	}
	return err
}

// Verify is VerifyProjects once the walk has ended (End), with the same
// results: the projects the Stream is not sure of are compared by
// VerifyProjects' replay, in tx and transactions view begins, on up to
// workers goroutines.
func (s *Stream) Verify(tx store.Tx, view func(func(store.Tx) error) error, workers int, warn func(format string, args ...any)) (ok bool, err error) {
	<-s.done
	<-s.passesDone
	if s.beginErr != nil {
		return true, s.beginErr
	}
	if s.failed {
		return true, nil
	}
	if s.pass.err != nil {
		return true, s.pass.err
	}
	s.events += s.pass.events
	for b, n := range s.pass.matched {
		s.matched[b] += n
	}
	for _, p := range s.pass.unsure {
		s.unsure[p] = true
	}
	if unsure := s.Unsure(); len(unsure) > 0 {
		w := newProjectWork(unsure, warn)
		w.skips = s.w.skips // a type the Stream warned of is not warned of again
		if err := w.runAll(tx, view, workers, s.marks); err != nil {
			return true, err
		}
		for b, n := range w.matched {
			s.matched[b] += n
		}
	}
	marks := map[string]DigestMark{}
	for p, m := range s.marks {
		marks[p] = m
	}
	for _, p := range s.projects {
		delete(marks, p)
	}
	if head, _ := tx.Head(); s.events != head || len(marks) > 0 {
		return false, nil
	}
	w := &projectWork{matched: s.matched}
	counts := s.counts
	if counts == nil {
		if counts, err = countKeys(tx, s.projects); err != nil {
			return true, err
		}
	}
	if err := w.nothingElseOf(counts); err != nil {
		// Name the key as the comparison project by project does.
		return VerifyProjects(tx, view, workers, warn)
	}
	return true, nil
}

// runAll compares w's projects on up to workers goroutines (tx's and
// transactions view begins) and returns the first error, in name order.
func (w *projectWork) runAll(tx store.Tx, view func(func(store.Tx) error) error, workers int, marks map[string]DigestMark) error {
	if view == nil {
		workers = 1
	}
	workers = max(1, min(workers, len(w.projects)))
	var wg sync.WaitGroup
	for i := 1; i < workers; i++ {
		wg.Go(func() {
			if err := view(func(tx store.Tx) error { w.run(tx, marks); return nil }); err != nil {
				w.fail(err)
			}
		})
	}
	w.run(tx, marks)
	wg.Wait()
	if err := w.first(); err != nil {
		return err
	}
	return w.beginErr
}

// Unsure is, once the fold has ended, the projects the Stream left to
// VerifyProjects' replay, in name order.
func (s *Stream) Unsure() []string {
	<-s.done
	var out []string
	for _, p := range s.projects {
		if s.unsure[p] {
			out = append(out, p)
		}
	}
	return out
}
