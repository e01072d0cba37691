package eventlog

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"time"
	"unicode/utf8"
)

// Limits on the metadata of an event, in bytes.
const (
	MaxStreamLen = 1024
	MaxTypeLen   = 256
	MaxFieldLen  = 1024 // actor, session, project
)

// Expect is the expected-version condition of an append.
type Expect struct {
	version uint64
	any     bool
}

// Any appends whatever the stream's version.
var Any = Expect{any: true}

// NoStream appends only if the stream does not exist yet.
var NoStream = Expect{}

// Exact appends only if the stream is at version v (0: does not exist).
func Exact(v uint64) Expect { return Expect{version: v} }

func (e Expect) String() string {
	if e.any {
		return "any"
	}
	return fmt.Sprint(e.version)
}

// VersionConflict is returned when a stream is not at the expected
// version. errors.Is(err, ErrConflict) is true for it.
type VersionConflict struct {
	Stream   string
	Expected uint64
	Actual   uint64
}

func (e *VersionConflict) Error() string {
	return fmt.Sprintf("eventlog: conflict: stream %q is at version %d, expected %d", e.Stream, e.Actual, e.Expected)
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *VersionConflict) Is(target error) bool { return target == ErrConflict }

// Appended reports the outcome of an append.
type Appended struct {
	Seqs      []uint64 // the seq of each event, in order
	Version   uint64   // the stream's version after the last event
	Duplicate bool     // every event was already stored: nothing was appended
}

// Append adds events to stream as one contiguous run of versions, if the
// stream's version matches exp. A batch whose event ids are all already
// stored with the same content is a no-op returning the original seqs; an id
// stored with different content, or a batch partly stored, is ErrConflict.
//
// Errors: ErrInvalid, ErrTooLarge, ErrConflict (*VersionConflict for a
// version mismatch), ErrReadOnly.
func (tx *Tx) Append(stream string, exp Expect, events ...Event) (Appended, error) {
	if !tx.btx.Writable() {
		return Appended{}, ErrReadOnly
	}
	events, hashes, err := tx.prepare(stream, events)
	if err != nil {
		return Appended{}, err
	}
	if dup, ok, err := tx.duplicate(stream, events, hashes); err != nil || ok {
		return dup, err
	}
	version, _ := tx.StreamVersion(stream)
	if !exp.any && exp.version != version {
		return Appended{}, &VersionConflict{Stream: stream, Expected: exp.version, Actual: version}
	}
	return tx.write(stream, version, events, hashes)
}

// prepare validates the batch and fills in missing ids and times. It
// copies events so the caller's slice is never modified.
func (tx *Tx) prepare(stream string, in []Event) ([]Event, []Hash, error) {
	if len(in) == 0 {
		return nil, nil, fmt.Errorf("%w: empty batch", ErrInvalid)
	}
	if err := checkText("stream", stream, MaxStreamLen, true); err != nil {
		return nil, nil, err
	}
	events := make([]Event, len(in))
	hashes := make([]Hash, len(in))
	seen := make(map[ID]bool, len(in))
	for i, e := range in {
		if e.Time.IsZero() {
			e.Time = tx.log.opts.Now()
		}
		if e.ID.IsZero() {
			e.ID = NewID(e.Time)
		}
		if err := checkEvent(&e); err != nil {
			return nil, nil, err
		}
		if seen[e.ID] {
			return nil, nil, fmt.Errorf("%w: event id %s appears twice in one batch", ErrInvalid, e.ID)
		}
		seen[e.ID] = true
		events[i], hashes[i] = e, contentHash(stream, &e)
	}
	return events, hashes, nil
}

// minTime and maxTime bound the times a record can hold: it stores
// unix nanoseconds in an int64.
var minTime, maxTime = time.Unix(0, math.MinInt64), time.Unix(0, math.MaxInt64)

func checkEvent(e *Event) error {
	if len(e.Data) > MaxPayload {
		return fmt.Errorf("%w: %s payload is %d bytes, the limit is %d", ErrTooLarge, e.Type, len(e.Data), MaxPayload)
	}
	if e.Time.Before(minTime) || e.Time.After(maxTime) {
		return fmt.Errorf("%w: time %s is outside the years 1678 to 2262", ErrInvalid, e.Time.Format(time.RFC3339))
	}
	for _, f := range []struct {
		name, value string
		limit       int
		required    bool
	}{
		{"event type", e.Type, MaxTypeLen, true},
		{"actor", e.Actor, MaxFieldLen, false},
		{"session", e.Session, MaxFieldLen, false},
		{"project", e.Project, MaxFieldLen, false},
	} {
		if err := checkText(f.name, f.value, f.limit, f.required); err != nil {
			return err
		}
	}
	return nil
}

func checkText(name, s string, limit int, required bool) error {
	switch {
	case required && s == "":
		return fmt.Errorf("%w: %s is empty", ErrInvalid, name)
	case len(s) > limit:
		return fmt.Errorf("%w: %s is %d bytes, the limit is %d", ErrInvalid, name, len(s), limit)
	case !utf8.ValidString(s):
		return fmt.Errorf("%w: %s is not valid UTF-8", ErrInvalid, name)
	}
	return nil
}

// contentHash identifies what an event says, for idempotency: the stream,
// type, schema, project, correlation, causation and payload. The time,
// actor and session of a retry may differ; they are not part of it.
func contentHash(stream string, e *Event) Hash {
	h := sha256.New()
	field := func(b []byte) {
		h.Write(binary.BigEndian.AppendUint32(nil, uint32(len(b))))
		h.Write(b)
	}
	field([]byte(stream))
	field([]byte(e.Type))
	field(binary.BigEndian.AppendUint32(nil, e.Schema))
	field([]byte(e.Project))
	field(e.Correlation[:])
	field(e.Causation[:])
	field(e.Data)
	var out Hash
	h.Sum(out[:0])
	return out
}

// duplicate reports whether the whole batch is already stored (ok), or
// fails if it is partly stored or an id is reused with other content.
func (tx *Tx) duplicate(stream string, events []Event, hashes []Hash) (Appended, bool, error) {
	ids := tx.bucket(bucketIDs)
	var seqs []uint64
	for i := range events {
		v := ids.Get(events[i].ID[:])
		if v == nil {
			continue
		}
		if len(v) != 8+len(Hash{}) {
			return Appended{}, false, corruptf(0, "id index entry for %s is malformed", events[i].ID)
		}
		if !bytes.Equal(v[8:], hashes[i][:]) {
			return Appended{}, false, fmt.Errorf("%w: event id %s was already used for different content (seq %d)",
				ErrConflict, events[i].ID, binary.BigEndian.Uint64(v[:8]))
		}
		seqs = append(seqs, binary.BigEndian.Uint64(v[:8]))
	}
	switch len(seqs) {
	case 0:
		return Appended{}, false, nil
	case len(events):
		version, _ := tx.StreamVersion(stream)
		return Appended{Seqs: seqs, Version: version, Duplicate: true}, true, nil
	}
	return Appended{}, false, fmt.Errorf("%w: %d of the %d events of the batch were already appended",
		ErrConflict, len(seqs), len(events))
}

// write stores the validated batch: records, indexes, stream head, and
// the log head (flushed to meta when the transaction commits).
func (tx *Tx) write(stream string, version uint64, events []Event, hashes []Hash) (Appended, error) {
	logB := tx.bucket(bucketLog)
	logB.FillPercent = 1.0 // keys only ever grow: pack pages full
	streamIdx, ids, projIdx := tx.bucket(bucketStreamIdx), tx.bucket(bucketIDs), tx.bucket(bucketProjIdx)
	seq, prev := tx.Head()
	out := Appended{Seqs: make([]uint64, len(events))}
	for i := range events {
		seq++
		version++
		r := Record{Seq: seq, Stream: stream, Version: version, Event: events[i], Prev: prev}
		if err := logB.Put(seqKey(seq), encodeRecord(&r)); err != nil {
			return Appended{}, err
		}
		if err := streamIdx.Put(streamIdxKey(stream, version), seqKey(seq)); err != nil {
			return Appended{}, err
		}
		if err := ids.Put(bytes.Clone(r.ID[:]), append(seqKey(seq), hashes[i][:]...)); err != nil {
			return Appended{}, err
		}
		if r.Project != "" {
			if err := projIdx.Put(binary.BigEndian.AppendUint64(streamPrefix(r.Project), seq), nil); err != nil {
				return Appended{}, err
			}
		}
		out.Seqs[i], prev = seq, r.Hash
	}
	head := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, version), seq)
	if err := tx.bucket(bucketStreams).Put([]byte(stream), head); err != nil {
		return Appended{}, err
	}
	tx.headSeq, tx.headHash, tx.headDirty, tx.wrote = seq, prev, true, true
	out.Version = version
	return out, nil
}
