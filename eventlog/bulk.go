package eventlog

import (
	"fmt"

	"github.com/flowctl/flowctl/flow/store"
)

type (
	// BulkEvent is one event of Tx.AppendBulk.
	BulkEvent = store.BulkEvent
	// BulkAppended reports what Tx.AppendBulk did with each event.
	BulkAppended = store.BulkAppended
)

// AppendBulk appends events in order, each as Append(e.Stream,
// Exact(e.Version-1), e.Event) would (store.BulkAppender), without what
// an Append costs each event: the index tail is merged first, so that an
// id or a stream head is read from the indexes with one lookup; the
// heads of the streams and the ids of the events appended are kept in
// memory; and the index entries of every event go into the indexes in one
// merge at the end, in seq order, not through the tail. Errors are a
// *store.BulkError naming the event, and the transaction must be rolled
// back (Update's callback returns the error).
func (tx *Tx) AppendBulk(events []BulkEvent) (BulkAppended, error) {
	out := BulkAppended{Seqs: make([]uint64, len(events)), Duplicate: make([]bool, len(events))}
	if !tx.btx.Writable() {
		return out, ErrReadOnly
	}
	if err := tx.mergeTail(); err != nil {
		return out, err
	}
	logB := tx.bucket(bucketLog)
	logB.FillPercent = fillLog
	seq, prev := tx.Head()
	last, err := tx.HeadTime()
	if err != nil {
		return out, err
	}
	heads := map[string]uint64{} // stream -> version, of the streams appended to
	here := make(map[ID]int, len(events))
	entries := make([]indexEntry, 0, len(events))
	fail := func(i int, err error) (BulkAppended, error) { return out, &store.BulkError{Index: i, Err: err} }
	for i := range events {
		e := &events[i]
		ev := e.Event
		if ev.Time.IsZero() {
			ev.Time = tx.log.opts.Now()
		}
		if ev.ID.IsZero() {
			ev.ID = NewID(ev.Time)
		}
		if err := checkText("stream", e.Stream, MaxStreamLen, true); err != nil {
			return fail(i, err)
		}
		if err := checkEvent(&ev); err != nil {
			return fail(i, err)
		}
		if j, ok := here[ev.ID]; ok {
			if !sameContent(&Record{Stream: events[j].Stream, Event: events[j].Event}, e.Stream, &ev) {
				return fail(i, conflictf(ev.ID, out.Seqs[j]))
			}
			out.Seqs[i], out.Duplicate[i] = out.Seqs[j], true
			continue
		}
		if dup, err := tx.bulkDuplicate(e.Stream, &ev); err != nil {
			return fail(i, err)
		} else if dup != 0 {
			out.Seqs[i], out.Duplicate[i] = dup, true
			continue
		}
		version, ok := heads[e.Stream]
		if !ok {
			if version, _, err = tx.streamHeadIdxOnly(e.Stream); err != nil {
				return fail(i, err)
			}
		}
		if e.Version == 0 || version != e.Version-1 {
			return fail(i, &VersionConflict{Stream: e.Stream, Expected: e.Version - 1, Actual: version})
		}
		seq++
		r := Record{Seq: seq, Stream: e.Stream, Version: e.Version, Event: ev, Prev: prev}
		r.Time = notBefore(r.Time, last)
		last = r.Time
		if err := logB.Put(seqKey(seq), tx.log.format.encode(&r)); err != nil {
			return out, err
		}
		entries = append(entries, indexEntry{seq: seq, id: r.ID, stream: e.Stream, version: e.Version, project: r.Project})
		heads[e.Stream], here[ev.ID], out.Seqs[i], prev = e.Version, i, seq, r.Hash
	}
	if len(entries) == 0 {
		return out, nil
	}
	if err := tx.merge(entries); err != nil {
		return out, err
	}
	tx.headSeq, tx.headHash, tx.headDirty, tx.wrote = seq, prev, true, true
	tx.headTime, tx.timeLoaded = last, true
	return out, nil
}

// bulkDuplicate is duplicate for one event while the tail is empty: the
// seq of its stored copy when it has one with the same content, 0 when
// there is none.
func (tx *Tx) bulkDuplicate(stream string, ev *Event) (uint64, error) {
	v := tx.bucket(bucketIDs).Get(ev.ID[:])
	if v == nil {
		return 0, nil
	}
	seq, ok := tx.log.format.parseIDValue(v)
	if !ok {
		return 0, corruptf(0, "id index entry for %s is malformed", ev.ID)
	}
	r, err := tx.Record(seq)
	switch {
	case err != nil:
		return 0, err
	case r == nil || r.ID != ev.ID:
		return 0, corruptf(seq, "the index of event ids lists %s at seq %d, which holds another event", ev.ID, seq)
	case !sameContent(r, stream, ev):
		return 0, conflictf(ev.ID, seq)
	}
	return seq, nil
}

// streamHeadIdxOnly is streamHead while the tail is empty.
func (tx *Tx) streamHeadIdxOnly(stream string) (version, seq uint64, err error) {
	version, seq, _, err = tx.streamHeadIdx(stream)
	return version, seq, err
}

func conflictf(id ID, seq uint64) error {
	return fmt.Errorf("%w: event id %s was already used for different content (seq %d)", ErrConflict, id, seq)
}
