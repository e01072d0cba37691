package projstore

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"hash/maphash"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// VerifyByProject is Compare with the memory of one project: it replays
// each stored project's events (the log's project index) into memory,
// compares the entities and the status index entries keyed under that
// project with the stored ones, drops them and goes on to the next; then
// it checks that the buckets hold nothing else. It warns once per event
// type it skips, as Replay does. The same replay checks the project's
// digest log index (CheckDigestLog's check, which a settled
// VerifyByProject makes for every project).
//
// It settles the comparison only when the projects' events are all of
// the log's. When they are not (events without a project, or a project
// whose stored entity is missing), it says ok false and the caller
// compares a replay of the whole log (Compare) instead, which names what
// is missing. The first difference is a *store.CorruptionError naming the
// entity: the first one of the first project, in name order, that has
// one.
func VerifyByProject(tx store.Tx, warn func(format string, args ...any)) (ok bool, err error) {
	return VerifyProjects(tx, nil, 1, warn)
}

// VerifyProjects is VerifyByProject on up to workers goroutines, each
// comparing one project at a time: the caller's in tx, the others each in
// a transaction of its own that view begins (nil: the caller's alone).
// The memory it holds is that of workers projects' replays.
func VerifyProjects(tx store.Tx, view func(func(store.Tx) error) error, workers int, warn func(format string, args ...any)) (ok bool, err error) {
	var projects []string
	err = tx.Scan(BucketProjects, nil, func(k, _ []byte) error {
		projects = append(projects, string(k))
		return nil
	})
	if err != nil {
		return false, err
	}
	marks, err := digestMarks(tx)
	if err != nil {
		return false, err
	}
	w := newProjectWork(projects, warn)
	if err := w.runAll(tx, view, workers, marks); err != nil {
		return true, err
	}
	for _, p := range projects {
		delete(marks, p)
	}
	if head, _ := tx.Head(); w.events != head || len(marks) > 0 {
		return false, nil
	}
	return true, w.nothingElse(tx, projects)
}

// projectWork is the projects VerifyProjects compares, handed to its
// workers in name order, and what their comparisons found.
type projectWork struct {
	projects []string
	next     atomic.Int64 // the index of the next project to compare
	errs     []error      // by project; only the first one is reported
	failed   atomic.Int64 // the smallest index of a project that failed, +1 (0: none)

	skips *skipWarn // shared by the works of one check

	mu       sync.Mutex
	events   uint64
	matched  map[string]int
	beginErr error // a transaction view could not begin
}

// skipWarn warns once per event type the replays of a check skip.
type skipWarn struct {
	mu     sync.Mutex
	warn   func(format string, args ...any)
	warned map[string]bool
}

func newProjectWork(projects []string, warn func(format string, args ...any)) *projectWork {
	return &projectWork{projects: projects, errs: make([]error, len(projects)), skips: &skipWarn{warn: warn, warned: map[string]bool{}}, matched: map[string]int{}}
}

// run compares projects in tx until none is left, or one before the
// next has failed.
func (w *projectWork) run(tx store.Tx, marks map[string]DigestMark) {
	v := projectVerifier{tx: tx, w: w, matched: map[string]int{}}
	for {
		i := int(w.next.Add(1) - 1)
		if i >= len(w.projects) {
			break
		}
		if f := w.failed.Load(); f != 0 && int(f-1) < i {
			break // a project before it failed: that is the one reported
		}
		p := w.projects[i]
		d := newDigestCheck(marks, p)
		err := v.project(p, d)
		if err == nil {
			err = d.finish(tx, p)
		}
		if err != nil {
			w.errs[i] = err
			for {
				f := w.failed.Load()
				if f != 0 && int(f-1) < i || w.failed.CompareAndSwap(f, int64(i+1)) {
					break
				}
			}
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events += v.events
	for b, n := range v.matched {
		w.matched[b] += n
	}
}

// fail records that a worker's transaction could not begin.
func (w *projectWork) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.beginErr = cmp.Or(w.beginErr, err)
}

// first is the error of the first project, in name order, that failed.
func (w *projectWork) first() error {
	if f := w.failed.Load(); f != 0 {
		return w.errs[f-1]
	}
	return nil
}

// warnSkip warns once per event type a replay skips.
func (w *projectWork) warnSkip(r *store.Record) {
	k := w.skips
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.warned[r.Type] {
		k.warned[r.Type] = true
		k.warn("skipping events of type %s (schema %d), first at seq %d: this flowctl does not know them", r.Type, r.Schema, r.Seq)
	}
}

// digestMarks reads the marks of the digest log index by project.
func digestMarks(tx store.Tx) (map[string]DigestMark, error) {
	marks := map[string]DigestMark{}
	err := tx.Scan(BucketDigestLog, nil, func(k, v []byte) error {
		project, rest, ok := bytes.Cut(k, []byte{0})
		if ok && bytes.Equal(rest, []byte{0}) {
			m, err := ReadDigestMark(tx, string(project))
			marks[string(project)] = m
			return err
		}
		return nil
	})
	return marks, err
}

// digestCheck is CheckDigestLog's check of one project, fed the
// project's records in seq order.
type digestCheck struct {
	on     bool
	mark   DigestMark // the stored mark
	got    DigestMark // the mark the records so far make
	memory []uint64   // the seqs of the memory notes up to the mark
}

func newDigestCheck(marks map[string]DigestMark, project string) *digestCheck {
	m, ok := marks[project]
	return &digestCheck{on: ok, mark: m}
}

// add counts r, a record of the project.
func (d *digestCheck) add(r *store.Record) {
	if d.on && r.Seq <= d.mark.Seq && d.got.DigestCount(r) {
		d.memory = append(d.memory, r.Seq)
	}
}

// finish compares the stored index with what the records made, as
// CheckDigestLog does.
func (d *digestCheck) finish(tx store.Tx, project string) error {
	if !d.on {
		return nil
	}
	return compareDigest(tx, project, d.mark, d.got, d.memory)
}

// projectVerifier is one worker of VerifyProjects: it counts the events
// it replayed and the stored keys it matched, by bucket.
type projectVerifier struct {
	tx      store.Tx
	w       *projectWork
	events  uint64
	matched map[string]int
	cmp     entityComparer
	sum     *summarySum
}

// project replays project p's events, compares its stored keys and feeds
// d the events.
func (v *projectVerifier) project(p string, d *digestCheck) error {
	mem := projection.NewMemory()
	err := v.tx.ReplayProject(p, 1, func(r *store.Record) error {
		v.events++
		d.add(r)
		err := projection.Apply(mem, r)
		if errors.Is(err, projection.ErrUnknown) {
			v.w.warnSkip(r)
			return nil
		}
		return err
	})
	if err != nil {
		return err
	}
	return v.compareMem(p, mem)
}

// compareMem compares the stored keys project p owns with mem, a replay
// of p's events. The status index is compared by a sum of its entries'
// hashes (summarySum) first, and only when the sums differ entry by entry
// (wantSummaries), to name the first key that differs.
func (v *projectVerifier) compareMem(p string, mem *projection.Memory) error {
	for _, bucket := range EntityBuckets {
		if err := v.compareEntities(bucket, p, mem); err != nil {
			return err
		}
	}
	if v.sum == nil {
		v.sum = newSummarySum()
	}
	want := v.sum.of(mem)
	var got entrySum
	err := v.eachOwned(BucketSummaries, p, func(k, val []byte) error {
		got.add(v.sum.hash(k, val))
		return nil
	})
	if err != nil {
		return err
	}
	if got == want {
		v.matched[BucketSummaries] += got.n
		return nil
	}
	summaries := wantSummaries(mem)
	return v.compareOwned(BucketSummaries, p, len(summaries), func(k, val []byte) (bool, bool) {
		w, ok := summaries[string(k)]
		return ok, ok && string(w) == string(val)
	}, func(yield func(string) bool) {
		for k := range summaries {
			if !yield(k) {
				return
			}
		}
	})
}

// compareEntities compares the keys of the entity bucket that p owns
// with the entities of mem, p's replay, looked up by key.
func (v *projectVerifier) compareEntities(bucket, p string, mem *projection.Memory) error {
	switch bucket {
	case BucketProjects:
		return compareMap(v, bucket, p, mem.Projects)
	case BucketPlans:
		return compareMap(v, bucket, p, mem.Plans)
	case BucketTasks:
		return compareMap(v, bucket, p, mem.Tasks)
	case BucketApprovals:
		return compareMap(v, bucket, p, mem.Approvals)
	case BucketExecs:
		return compareMap(v, bucket, p, mem.Execs)
	case BucketCheckpts:
		return compareMap(v, bucket, p, mem.Checkpoints)
	}
	return nil
}

// compareMap is compareEntities for want, one kind of entity of mem.
func compareMap[V any](v *projectVerifier, bucket, p string, want map[string]*V) error {
	return v.compareOwned(bucket, p, len(want), func(k, val []byte) (bool, bool) {
		e, ok := want[string(k)]
		return ok, ok && v.cmp.same(bucket, k, e, val)
	}, func(yield func(string) bool) {
		for k := range want {
			if !yield(k) {
				return
			}
		}
	})
}

// entityComparer compares a replayed entity with a stored value in
// buffers it reuses.
type entityComparer struct{ stored, want []byte }

// same reports whether the sealed value val stored under key in bucket
// holds the entity e: its seal holds, and its body unpacks to e's
// msgpack (an exec: it is e's reference). Comparing the msgpack rather
// than the packed bytes lets the S2 encoder of another version of its
// library compress the same bytes otherwise, as sameValue does.
func (c *entityComparer) same(bucket string, key []byte, e any, val []byte) bool {
	body, err := Unseal(bucket, key, val)
	if err != nil || len(body) == 0 {
		return false
	}
	if x, ok := e.(*projection.Exec); ok {
		want, err := appendBody(c.want[:0], x)
		c.want = want
		return err == nil && string(body) == string(want)
	}
	if body[0] == valueExecRef {
		return false
	}
	m, err := unpackBody(c.stored[:0], body)
	if err != nil {
		return false
	}
	if body[0] == valuePacked || body[0] == valueS2 {
		c.stored = m // unpacked into c.stored's array; a Format 3 body is its own msgpack
	}
	want, ok := projection.AppendEntity(c.want[:0], e)
	c.want = want
	return ok && string(m) == string(want)
}

// compareOwned compares the keys of bucket that p owns with the n keys
// p's replay makes: match says whether it makes k and whether its value
// is val, keys lists them (to name one missing).
func (v *projectVerifier) compareOwned(bucket, p string, n int, match func(k, val []byte) (made, same bool), keys func(yield func(string) bool)) error {
	seen := 0
	err := v.eachOwned(bucket, p, func(k, val []byte) error {
		switch made, same := match(k, val); {
		case !made:
			return projectionDiff(bucket, string(k), "is stored but a replay of the log does not produce it")
		case !same:
			return projectionDiff(bucket, string(k), mismatch(bucket, k, val))
		}
		seen++
		return nil
	})
	if err != nil {
		return err
	}
	v.matched[bucket] += seen
	if seen == n {
		return nil
	}
	for _, k := range slices.Sorted(keys) {
		if b, _ := v.tx.Get(bucket, []byte(k)); b == nil {
			return projectionDiff(bucket, k, "is missing from the stored projections")
		}
	}
	return projectionDiff(bucket, p, "has entries a replay does not produce")
}

// eachOwned calls fn with each key of bucket that p owns and its value,
// lent (store.ScanShared): valid only during the call.
func (v *projectVerifier) eachOwned(bucket, p string, fn func(k, val []byte) error) error {
	for _, prefix := range ownedPrefixes(bucket, p) {
		err := store.ScanShared(v.tx, bucket, prefix, func(k, val []byte) error {
			if owner, ok := ownerOf(bucket, k); !ok || owner != p {
				return nil // another project's, whose name starts with p's
			}
			return fn(k, val)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// summarySum sums the hashes of the status index entries a replay in
// memory implies: the entries wantSummaries makes, in buffers it reuses
// rather than in a map. verify_test.go checks that the two agree.
type summarySum struct {
	seed     maphash.Seed
	key, val []byte
	buf      []byte
	counts   map[string]uint64
	plans    map[string]*[2]uint64
}

func newSummarySum() *summarySum {
	return &summarySum{seed: maphash.MakeSeed(), counts: map[string]uint64{}, plans: map[string]*[2]uint64{}}
}

// entrySum is a count of entries and the sum of their hashes.
type entrySum struct {
	n int
	h uint64
}

func (e *entrySum) add(h uint64) { e.n, e.h = e.n+1, e.h+h }

// hash is the hash of the entry k, v: k's length, k and v.
func (s *summarySum) hash(k, v []byte) uint64 {
	b := binary.BigEndian.AppendUint32(s.buf[:0], uint32(len(k)))
	b = append(append(b, k...), v...)
	s.buf = b
	return maphash.Bytes(s.seed, b)
}

// entry adds the entry k with the sealed body to e.
func (s *summarySum) entry(e *entrySum, k, body []byte) {
	s.val = Seal(k, append(s.val[:0], body...))
	e.add(s.hash(k, s.val))
}

// of is the sum of the entries of the status index mem implies.
func (s *summarySum) of(mem *projection.Memory) entrySum {
	return s.ofWith(mem, entrySum{}, nil, nil)
}

// ofWith is of for a replay some of whose entities were summed into e
// and counted into counts (sumEntity) and dropped from mem; plans counts
// the tasks dropped by plan (total, done), their plan entries in e.
func (s *summarySum) ofWith(mem *projection.Memory, e entrySum, counts map[string]uint64, plans map[string]*[2]uint64) entrySum {
	clear(s.counts)
	clear(s.plans)
	for k, n := range counts {
		s.counts[k] = n
	}
	for k, c := range plans {
		s.plans[k] = &[2]uint64{c[0], c[1]}
	}
	sumEntities(s, &e, s.counts, BucketPlans, mem.Plans)
	sumEntities(s, &e, s.counts, BucketTasks, mem.Tasks)
	sumEntities(s, &e, s.counts, BucketApprovals, mem.Approvals)
	sumEntities(s, &e, s.counts, BucketExecs, mem.Execs)
	for k, n := range s.counts {
		s.entry(&e, []byte(k), binary.BigEndian.AppendUint64(nil, n))
	}
	for key, t := range mem.Tasks {
		entry := planTask(t)
		if entry == nil {
			continue
		}
		s.entry(&e, append(append(s.key[:0], 'T'), key...), entry)
		pk := string(PlanCountKey(t.Project, t.Plan))
		c := s.plans[pk]
		if c == nil {
			c = new([2]uint64)
			s.plans[pk] = c
		}
		if c[0]++; t.Status == projection.StatusDone {
			c[1]++
		}
	}
	for k, c := range s.plans {
		s.entry(&e, []byte(k), binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, c[0]), c[1]))
	}
	return e
}

// sumEntities adds the entries of the entities m of bucket (summaryKeys)
// to e and counts them by status.
func sumEntities[V any](s *summarySum, e *entrySum, counts map[string]uint64, bucket string, m map[string]*V) {
	for key, v := range m {
		sumEntity(s, e, counts, bucket, key, v)
	}
}

// sumEntity is sumEntities for the entity v under key.
func sumEntity(s *summarySum, e *entrySum, counts map[string]uint64, bucket, key string, v any) {
	sm, _ := indexSummary(v)
	project, id := splitKey(key)
	s.key = append(append(append(append(s.key[:0], 'r'), bucket...), 0), key...)
	s.entry(e, s.key, sm.value())
	s.key = append(append(append(append(append(append(append(s.key[:0], 's'), bucket...), 0), project...), 0), sm.Status...), 0)
	s.entry(e, append(s.key, id...), nil)
	if sm.Lease != 0 {
		s.entry(e, SummaryLeaseKey(project, sm.Lease, id), nil)
	}
	counts[summaryCountKey(bucket, project, sm.Status)]++
}

// nothingElse checks that the buckets hold only the keys the projects'
// comparisons matched: the first other one is named.
func (w *projectWork) nothingElse(tx store.Tx, projects []string) error {
	counts, err := countKeys(tx, projects)
	if err != nil {
		return err
	}
	return w.nothingElseOf(counts)
}

// nothingElseOf is nothingElse with the buckets' keys counted before
// (countKeys, in the same transaction).
func (w *projectWork) nothingElseOf(counts []keyCount) error {
	for _, c := range counts {
		if c.n != w.matched[c.bucket] {
			return projectionDiff(c.bucket, string(c.stray), "is stored but a replay of the log does not produce it")
		}
	}
	return nil
}

// keyCount is how many keys a bucket holds and the first of them that
// no project of the replay owns (nil: none).
type keyCount struct {
	bucket string
	n      int
	stray  []byte
}

// countKeys counts the keys of the entity buckets and the summaries,
// noting the first key of each that none of projects owns.
func countKeys(tx store.Tx, projects []string) ([]keyCount, error) {
	known := map[string]bool{}
	for _, p := range projects {
		known[p] = true
	}
	var out []keyCount
	for _, bucket := range slices.Concat(EntityBuckets, []string{BucketSummaries}) {
		c := keyCount{bucket: bucket}
		err := store.ScanShared(tx, bucket, nil, func(k, _ []byte) error {
			c.n++
			if owner, ok := ownerOf(bucket, k); c.stray == nil && (!ok || !known[owner]) {
				c.stray = bytes.Clone(k)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// ownedPrefixes are the prefixes under which bucket keeps what project p
// owns; a scan of them meets other projects' keys too (a project named
// "a/b" under "a/"), which ownerOf tells apart.
func ownedPrefixes(bucket, p string) [][]byte {
	switch bucket {
	case BucketProjects:
		return [][]byte{[]byte(p)}
	case BucketSummaries:
		out := [][]byte{[]byte("l" + p + "\x00"), PlanCountKey(p, ""), planTaskKey(p + "/")}
		for _, b := range EntityBuckets {
			if summarized[b] {
				out = append(out, SummaryRefKey(b, p+"/"), []byte("s"+b+"\x00"+p+"\x00"), SummaryCountPrefix(b, p))
			}
		}
		return out
	}
	return [][]byte{[]byte(p + "/")}
}

// ownerOf is the project that key k of bucket belongs to, and false for a
// key of a form that no project's comparison reads.
func ownerOf(bucket string, k []byte) (string, bool) {
	switch bucket {
	case BucketProjects:
		return string(k), true
	case BucketSummaries:
		return summaryOwner(k)
	}
	if bytes.IndexByte(k, '/') < 0 {
		return "", false
	}
	p, _ := splitKey(string(k))
	return p, true
}

// summaryOwner is the project of a key of the status index (summary.go's
// layout), and false for a key of no form it knows.
func summaryOwner(k []byte) (string, bool) {
	if len(k) == 0 {
		return "", false
	}
	switch k[0] {
	case 'l', 'P': // the digest log's and plan counts' project + 0x00
		p, _, ok := bytes.Cut(k[1:], []byte{0})
		return string(p), ok
	case 'T': // a planned task's entry: "T" project "/" T-n
		if bytes.IndexByte(k, '/') < 0 {
			return "", false
		}
		p, _ := splitKey(string(k[1:]))
		return p, true
	}
	bucket, rest, ok := bytes.Cut(k[1:], []byte{0})
	if !ok || !summarized[string(bucket)] {
		return "", false
	}
	switch k[0] {
	case 'r':
		if bytes.IndexByte(rest, '/') < 0 {
			return "", false
		}
		p, _ := splitKey(string(rest))
		return p, true
	case 's', 'n':
		p, _, ok := bytes.Cut(rest, []byte{0})
		return string(p), ok
	}
	return "", false
}
