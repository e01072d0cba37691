package projstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// Format is the format of the engine's stored projection records: 1,
// sealed with a CRC32C of key and value (checksum.go); 2, the status index
// holds titles too (summary.go), for completion; 3, it holds the task
// counts of each plan too (digestsum.go). Files of earlier flowctl
// hold unsealed records and no format. It is kept apart from
// projection.Version, which every snapshot carries too: how flow frames
// its records is no part of a snapshot, so a new format leaves the
// snapshots of a file readable.
const Format = 3

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
// progressEvery events and at the end.
func Replay(tx store.Tx, warn func(format string, args ...any), progress func(done, total uint64)) (*projection.Memory, Report, error) {
	mem := projection.NewMemory()
	var rep Report
	warned := map[string]bool{}
	total, _ := tx.Head()
	if progress != nil {
		progress(0, total)
		defer func() { progress(rep.Events, total) }()
	}
	err := tx.Replay(1, 0, func(r *store.Record) error {
		rep.Events++
		if progress != nil && rep.Events%progressEvery == 0 {
			progress(rep.Events, total)
		}
		err := projection.Apply(mem, r)
		if errors.Is(err, projection.ErrUnknown) {
			rep.Skipped++
			if !warned[r.Type] {
				warned[r.Type] = true
				warn("skipping events of type %s (schema %d), first at seq %d: this flowctl does not know them", r.Type, r.Schema, r.Seq)
			}
			return nil
		}
		return err
	})
	return mem, rep, err
}

// WriteMemory stores a replayed state as the inline projections, in the
// empty buckets a rebuild leaves.
func WriteMemory(tx store.Tx, mem *projection.Memory) error {
	s := NewTx(tx)
	if err := mem.PutAll(s); err != nil {
		return err
	}
	if err := s.flushFresh(wantSummaries(mem)); err != nil {
		return err
	}
	return tx.Put(BucketMeta, KeyVersion, stamp)
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
	return nil
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
		case !bytes.Equal(w, v):
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
