package projstore

import (
	"bytes"
	"errors"
	"slices"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// VerifyByProject is Compare with the memory of one project: it replays
// each stored project's events (the log's project index) into memory,
// compares the entities and the status index entries keyed under that
// project byte for byte with the stored ones, drops them and goes on to
// the next; then it checks that the buckets hold nothing else. It warns
// once per event type it skips, as Replay does. The same replay checks
// the project's digest log index (CheckDigestLog's check, which a
// settled VerifyByProject makes for every project).
//
// It settles the comparison only when the projects' events are all of
// the log's. When they are not (events without a project, or a project
// whose stored entity is missing), it says ok false and the caller
// compares a replay of the whole log (Compare) instead, which names what
// is missing. The first difference is a *store.CorruptionError naming the
// entity.
func VerifyByProject(tx store.Tx, warn func(format string, args ...any)) (ok bool, err error) {
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
	v := projectVerifier{tx: tx, warn: warn, warned: map[string]bool{}, matched: map[string]int{}}
	for _, p := range projects {
		d := newDigestCheck(marks, p)
		if err := v.project(p, d); err != nil {
			return true, err
		}
		if err := d.finish(tx, p); err != nil {
			return true, err
		}
		delete(marks, p)
	}
	if head, _ := tx.Head(); v.events != head || len(marks) > 0 {
		return false, nil
	}
	return true, v.nothingElse(projects)
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

// projectVerifier carries what VerifyByProject learns from project to
// project: events replayed, stored keys matched by bucket.
type projectVerifier struct {
	tx      store.Tx
	warn    func(format string, args ...any)
	warned  map[string]bool
	events  uint64
	matched map[string]int
}

// project replays project p's events, compares its stored keys and feeds
// d the events.
func (v *projectVerifier) project(p string, d *digestCheck) error {
	mem := projection.NewMemory()
	err := v.tx.ReplayProject(p, 1, func(r *store.Record) error {
		v.events++
		d.add(r)
		return applyWarn(mem, r, v.warned, v.warn)
	})
	if err != nil {
		return err
	}
	return v.compareMem(p, mem)
}

// applyWarn folds r into mem, warning once per event type it skips.
func applyWarn(mem *projection.Memory, r *store.Record, warned map[string]bool, warn func(string, ...any)) error {
	err := projection.Apply(mem, r)
	if errors.Is(err, projection.ErrUnknown) {
		if !warned[r.Type] {
			warned[r.Type] = true
			warn("skipping events of type %s (schema %d), first at seq %d: this flowctl does not know them", r.Type, r.Schema, r.Seq)
		}
		return nil
	}
	return err
}

// compareMem compares the stored keys project p owns with mem, a replay
// of p's events.
func (v *projectVerifier) compareMem(p string, mem *projection.Memory) error {
	var err error
	want := map[string]map[string][]byte{BucketSummaries: wantSummaries(mem)}
	eachMemEntity(mem, func(bucket, key string, e any) {
		b, merr := encodeEntity(key, e)
		if want[bucket] == nil {
			want[bucket] = map[string][]byte{}
		}
		want[bucket][key] = b
		err = errors.Join(err, merr)
	})
	if err != nil {
		return err
	}
	for _, bucket := range slices.Concat(EntityBuckets, []string{BucketSummaries}) {
		if err := v.compareOwned(bucket, p, want[bucket]); err != nil {
			return err
		}
	}
	return nil
}

// compareOwned compares the keys of bucket that p owns with want.
func (v *projectVerifier) compareOwned(bucket, p string, want map[string][]byte) error {
	seen := 0
	for _, prefix := range ownedPrefixes(bucket, p) {
		err := v.tx.Scan(bucket, prefix, func(k, val []byte) error {
			if owner, ok := ownerOf(bucket, k); !ok || owner != p {
				return nil // another project's, whose name starts with p's
			}
			w, ok := want[string(k)]
			switch {
			case !ok:
				return projectionDiff(bucket, string(k), "is stored but a replay of the log does not produce it")
			case !sameValue(bucket, k, w, val):
				return projectionDiff(bucket, string(k), mismatch(bucket, k, val))
			}
			seen++
			return nil
		})
		if err != nil {
			return err
		}
	}
	v.matched[bucket] += seen
	if seen == len(want) {
		return nil
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range want {
			if !yield(k) {
				return
			}
		}
	}) {
		if b, _ := v.tx.Get(bucket, []byte(k)); b == nil {
			return projectionDiff(bucket, k, "is missing from the stored projections")
		}
	}
	return projectionDiff(bucket, p, "has entries a replay does not produce")
}

// nothingElse checks that the buckets hold only the keys the projects'
// comparisons matched: the first other one is named.
func (v *projectVerifier) nothingElse(projects []string) error {
	known := map[string]bool{}
	for _, p := range projects {
		known[p] = true
	}
	for _, bucket := range slices.Concat(EntityBuckets, []string{BucketSummaries}) {
		n := 0
		var stray []byte
		err := v.tx.Scan(bucket, nil, func(k, _ []byte) error {
			n++
			if owner, ok := ownerOf(bucket, k); stray == nil && (!ok || !known[owner]) {
				stray = k
			}
			return nil
		})
		if err != nil {
			return err
		}
		if n != v.matched[bucket] {
			return projectionDiff(bucket, string(stray), "is stored but a replay of the log does not produce it")
		}
	}
	return nil
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
