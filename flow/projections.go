package flow

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/flowctl/flowctl/flow/internal/history"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// ProjectionFormat is the format of the engine's stored projection
// records: 1, sealed with a CRC32C of key and value (checksum.go); 2, the
// status index holds titles too (summary.go), for completion. Files
// of earlier flowctl hold unsealed records and no format. It is kept apart
// from projection.Version, which every snapshot carries too: how flow
// frames its records is no part of a snapshot, so a new format leaves the
// snapshots of a file readable.
const ProjectionFormat = 2

// projectionStamp is what proj_meta's version holds for projections this
// binary built: projection.Version and ProjectionFormat, uint32 BE each.
// Stored projections with another stamp (an older file has only the
// version) are rebuilt on a writable open and read around (a replay in
// memory) by a read-only one.
var projectionStamp = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, projection.Version), ProjectionFormat)

// projectionsCurrent reports whether the stored projections were built by
// this binary's fold in this binary's format.
func projectionsCurrent(tx store.Tx) (bool, error) {
	b, err := tx.Get(bucketProjMeta, keyProjectionVersion)
	if err != nil {
		return false, err
	}
	return bytes.Equal(b, projectionStamp), nil
}

// syncProjections rebuilds the projections of a writable engine whose
// stored version is not this binary's.
func (e *Engine) syncProjections() error {
	if e.opts.ReadOnly {
		return nil
	}
	var current bool
	if err := e.log.View(func(tx store.Tx) error {
		var err error
		current, err = projectionsCurrent(tx)
		return err
	}); err != nil || current {
		return err
	}
	_, err := e.Rebuild()
	return err
}

// RebuildReport says what a rebuild did.
type RebuildReport struct {
	Events  uint64 `json:"events"`
	Skipped int    `json:"skipped"` // events of unknown types or schemas
}

// Rebuild drops the projections and folds the whole log into new ones, in
// one transaction.
func (e *Engine) Rebuild() (RebuildReport, error) {
	var rep RebuildReport
	err := e.update(func(tx store.Tx) error {
		mem, r, err := replayWith(tx, e.warn, e.opts.Progress)
		if err != nil {
			return err
		}
		rep = r
		// The rollback index is derived from the log too: dropped here,
		// it is filled again by the next command (and read around until).
		for _, b := range append(slices.Clone(projectionBuckets), history.BucketRollbacks) {
			if err := tx.DeleteBucket(b); err != nil {
				return err
			}
		}
		return writeMemory(tx, mem)
	})
	return rep, err
}

// replay folds the whole log into memory, warning once per event type
// the fold does not know.
func (e *Engine) replay(tx store.Tx) (*projection.Memory, RebuildReport, error) {
	return replayWith(tx, e.warn, nil)
}

// progressEvery is how many events a replay folds between progress reports.
const progressEvery = 10000

// replayWith folds the whole log into memory, warning once per unknown
// event type and reporting progress, when asked, every progressEvery
// events and at the end.
func replayWith(tx store.Tx, warn func(format string, args ...any), progress func(done, total uint64)) (*projection.Memory, RebuildReport, error) {
	mem := projection.NewMemory()
	var rep RebuildReport
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

// writeMemory stores a replayed state as the inline projections, in the
// empty buckets a rebuild leaves.
func writeMemory(tx store.Tx, mem *projection.Memory) error {
	s := newTxStore(tx)
	if err := mem.PutAll(s); err != nil {
		return err
	}
	if err := s.flushFresh(wantSummaries(mem)); err != nil {
		return err
	}
	return tx.Put(bucketProjMeta, keyProjectionVersion, projectionStamp)
}

// compareProjections replays the log and compares the result, byte for
// byte, with the stored projections. The first difference is returned as
// a *store.CorruptionError naming the entity.
func (e *Engine) compareProjections(tx store.Tx) error {
	mem, _, err := e.replay(tx)
	if err != nil {
		return err
	}
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
	want[bucketSummaries] = wantSummaries(mem)
	for _, bucket := range slices.Concat(entityBuckets, []string{bucketSummaries}) {
		if err := compareBucket(tx, bucket, want[bucket]); err != nil {
			return err
		}
	}
	return nil
}

// eachMemEntity calls fn with every entity of mem, its bucket and its key.
func eachMemEntity(mem *projection.Memory, fn func(bucket, key string, v any)) {
	for k, v := range mem.Projects {
		fn(bucketProjects, k, v)
	}
	for k, v := range mem.Plans {
		fn(bucketPlans, k, v)
	}
	for k, v := range mem.Tasks {
		fn(bucketTasks, k, v)
	}
	for k, v := range mem.Approvals {
		fn(bucketApprovals, k, v)
	}
	for k, v := range mem.Execs {
		fn(bucketExecs, k, v)
	}
	for k, v := range mem.Checkpoints {
		fn(bucketCheckpts, k, v)
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
	if _, err := unseal(bucket, k, v); err != nil {
		return "fails its checksum (damaged on disk)"
	}
	return "differs from a replay of the log"
}

func projectionDiff(bucket, key, what string) error {
	return &store.CorruptionError{Reason: fmt.Sprintf("projection %s %q %s (run 'flowctl rebuild' to rebuild it from the log)", bucket, key, what)}
}
