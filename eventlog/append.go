package eventlog

import (
	"bytes"
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/flowctl/flowctl/flow/store"
)

// Limits on the metadata of an event, in bytes.
const (
	MaxStreamLen = store.MaxStreamLen
	MaxTypeLen   = store.MaxTypeLen
	MaxFieldLen  = store.MaxFieldLen // actor, session, project
)

type (
	// Expect is the expected-version condition of an append.
	Expect = store.Expect
	// VersionConflict is returned when a stream is not at the expected
	// version. errors.Is(err, ErrConflict) is true for it.
	VersionConflict = store.VersionConflict
	// Appended reports the outcome of an append.
	Appended = store.Appended
)

var (
	// Any appends whatever the stream's version.
	Any = store.Any
	// NoStream appends only if the stream does not exist yet.
	NoStream = store.NoStream
)

// Exact appends only if the stream is at version v (0: does not exist).
func Exact(v uint64) Expect { return store.Exact(v) }

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
	b, err := prepare(stream, events, tx.log.opts.Now)
	if err != nil {
		return Appended{}, err
	}
	return tx.appendBatch(b, exp)
}

// batch is an append checked and completed, ready for a transaction: what
// does not depend on the log's state is done before it, outside the
// commit that concurrent callers share (Log.Append).
type batch struct {
	stream string
	events []Event // copies, with ids and times filled in
	// newIDs: every id was made by prepare (NewID), none given by the
	// caller, so the batch cannot be a retry of a stored one.
	newIDs bool
}

// appendBatch appends b if the stream's version matches exp.
func (tx *Tx) appendBatch(b *batch, exp Expect) (Appended, error) {
	if !b.newIDs { // a new UUIDv7, with 74 random bits, is in no index
		if dup, ok, err := tx.duplicate(b); err != nil || ok {
			return dup, err
		}
	}
	version, _, err := tx.streamHead(b.stream)
	if err != nil {
		return Appended{}, err
	}
	if !exp.Allows(version) {
		return Appended{}, &VersionConflict{Stream: b.stream, Expected: exp.Version(), Actual: version}
	}
	return tx.write(b, version)
}

// prepare validates the batch and fills in missing ids and times (from
// now). It copies events so the caller's slice is never modified.
func prepare(stream string, in []Event, now func() time.Time) (*batch, error) {
	if len(in) == 0 {
		return nil, fmt.Errorf("%w: empty batch", ErrInvalid)
	}
	if err := checkText("stream", stream, MaxStreamLen, true); err != nil {
		return nil, err
	}
	b := &batch{stream: stream, events: make([]Event, len(in)), newIDs: true}
	var seen map[ID]bool // a single event needs none
	if len(in) > 1 {
		seen = make(map[ID]bool, len(in))
	}
	for i, e := range in {
		if e.Time.IsZero() {
			e.Time = now()
		}
		if e.ID.IsZero() {
			e.ID = NewID(e.Time)
		} else {
			b.newIDs = false
		}
		if err := checkEvent(&e); err != nil {
			return nil, err
		}
		if seen[e.ID] {
			return nil, fmt.Errorf("%w: event id %s appears twice in one batch", ErrInvalid, e.ID)
		}
		if seen != nil {
			seen[e.ID] = true
		}
		b.events[i] = e
	}
	return b, nil
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

// sameContent reports whether r says what e, appended to stream, says:
// the stream, type, schema, project, correlation, causation and payload.
// The time, actor and session of a retry may differ; they are not
// compared.
func sameContent(r *Record, stream string, e *Event) bool {
	return r.Stream == stream && r.Type == e.Type && r.Schema == e.Schema && r.Project == e.Project &&
		r.Correlation == e.Correlation && r.Causation == e.Causation && bytes.Equal(r.Data, e.Data)
}

// duplicate reports whether the whole batch is already stored (ok), or
// fails if it is partly stored or an id is reused with other content: the
// stored record is compared with the event (sameContent).
func (tx *Tx) duplicate(b *batch) (Appended, bool, error) {
	var seqs []uint64
	for i := range b.events {
		seq, err := tx.idLookup(b.events[i].ID)
		if err != nil {
			return Appended{}, false, err
		}
		if seq == 0 {
			continue
		}
		r, err := tx.Record(seq)
		switch {
		case err != nil:
			return Appended{}, false, err
		case r == nil || r.ID != b.events[i].ID:
			return Appended{}, false, corruptf(seq, "the index of event ids lists %s at seq %d, which holds another event", b.events[i].ID, seq)
		case !sameContent(r, b.stream, &b.events[i]):
			return Appended{}, false, fmt.Errorf("%w: event id %s was already used for different content (seq %d)",
				ErrConflict, b.events[i].ID, seq)
		}
		seqs = append(seqs, seq)
	}
	switch len(seqs) {
	case 0:
		return Appended{}, false, nil
	case len(b.events):
		version, _ := tx.StreamVersion(b.stream)
		return Appended{Seqs: seqs, Version: version, Duplicate: true}, true, nil
	}
	return Appended{}, false, fmt.Errorf("%w: %d of the %d events of the batch were already appended",
		ErrConflict, len(seqs), len(b.events))
}

// How full bbolt leaves a page of each index when it splits it
// (Bucket.FillPercent, 0.5 by default; it holds for one transaction, so
// every transaction that appends sets it). Measured with 200-byte
// payloads, one event per commit and 1000 per commit (doc.go):
const (
	// fillLog: seqs only ever grow, a split page is never written again.
	fillLog = 1.0
	// fillStreamIdx: each stream grows at the end of its own key range,
	// so new chunks land all over the bucket, and chunks grow in place.
	// With an entry per version, a page split full split again at the
	// next insert into it (1.0 gave 128 B/event, 0.7 60); with chunks
	// 0.5 gives 16 B/event, 0.7 11, 1.0 13 (1000 per commit).
	fillStreamIdx = 0.7
	// fillIDs: UUIDv7 ids grow with time but are random within a
	// millisecond (1.0 gave 100 B/event, 0.9 81).
	fillIDs = 0.9
	// fillProjIdx: like stream_idx, but over few projects. With an entry
	// per event, one project: 1.0 gave 32 B/event, 0.9 35; five: 1.0 37,
	// 0.9 33. With chunks, 0.9 gives 11-13.
	fillProjIdx = 0.9
	// fillCaller: the caller's buckets (Tx.Put). The engine's keys, like
	// "p3/T-1234", sort their numbers as text, so its inserts land all
	// over a project's range, and it rewrites values in place. On the
	// 1M-event file of flowbench gen, against bbolt's 0.5: proj_exec 103
	// -> 69 MB (pages 0.53 -> 0.79 full), proj_summary 40 -> 29,
	// proj_approval 27 -> 19, proj_task 73 -> 73 (values of ~1.3 KB, a
	// few a page). At 200k events 1.0 gave a file 1.4% smaller than 0.9:
	// proj_task 11.1 MB against 14.8, but proj_summary 7.7 against 6.1
	// (full pages split again at the next insert into them).
	fillCaller = 0.9
)

// write stores the validated batch: its records, their index entries
// (tx.index) and the log head (flushed to meta when the transaction
// commits).
func (tx *Tx) write(b *batch, version uint64) (Appended, error) {
	logB := tx.bucket(bucketLog)
	logB.FillPercent = fillLog
	seq, prev := tx.Head()
	last, err := tx.HeadTime()
	if err != nil {
		return Appended{}, err
	}
	out := Appended{Seqs: make([]uint64, len(b.events))}
	entries := make([]indexEntry, len(b.events))
	for i := range b.events {
		seq++
		version++
		r := Record{Seq: seq, Stream: b.stream, Version: version, Event: b.events[i], Prev: prev}
		r.Time = notBefore(r.Time, last)
		last = r.Time
		if err := logB.Put(seqKey(seq), tx.log.format.encode(&r)); err != nil {
			return Appended{}, err
		}
		entries[i] = indexEntry{seq: seq, id: r.ID, stream: b.stream, version: version, project: r.Project}
		out.Seqs[i], prev = seq, r.Hash
		tx.keepFresh(&r)
	}
	if err := tx.index(entries); err != nil {
		return Appended{}, err
	}
	tx.headSeq, tx.headHash, tx.headDirty, tx.wrote = seq, prev, true, true
	tx.headTime, tx.timeLoaded = last, true
	out.Version = version
	return out, nil
}

// notBefore is t, or prev when t is earlier: a record's time is never
// before the time of the record at seq-1 (the clock of one machine can
// step back, and processes on other clocks share the file), so that
// times follow seqs and a time names a prefix of the log.
func notBefore(t, prev time.Time) time.Time {
	if t.Before(prev) {
		return prev
	}
	return t
}
