package pgstore

import (
	"fmt"
	"time"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/jackc/pgx/v5"
)

var _ store.BulkAppender = (*Tx)(nil)

// AppendBulk is store.BulkAppender's: each event as Append(e.Stream,
// Exact(e.Version-1), e.Event) would, in a few statements for the whole
// call: one query for the ids already stored (with their records, to
// compare contents), one for the heads of the streams, a COPY of the new
// records and one upsert of the stream heads. Errors are a
// *store.BulkError naming the event; the transaction must be rolled back.
func (t *Tx) AppendBulk(events []store.BulkEvent) (store.BulkAppended, error) {
	out := store.BulkAppended{Seqs: make([]uint64, len(events)), Duplicate: make([]bool, len(events))}
	if !t.writable {
		return out, store.ErrReadOnly
	}
	fail := func(i int, err error) (store.BulkAppended, error) { return out, &store.BulkError{Index: i, Err: err} }
	evs := make([]store.Event, len(events))
	ids := make([][]byte, len(events))
	var streams []string
	seenStream := map[string]bool{}
	for i := range events {
		e := events[i].Event
		if e.Time.IsZero() {
			e.Time = t.s.now()
		}
		if e.ID.IsZero() {
			e.ID = store.NewID(e.Time)
		}
		if err := checkText("stream", events[i].Stream, store.MaxStreamLen, true); err != nil {
			return fail(i, err)
		}
		if err := checkEvent(&e); err != nil {
			return fail(i, err)
		}
		evs[i], ids[i] = e, e.ID[:]
		if !seenStream[events[i].Stream] {
			seenStream[events[i].Stream] = true
			streams = append(streams, events[i].Stream)
		}
	}
	stored, err := t.recordsByID(ids)
	if err != nil {
		return out, err
	}
	heads, err := t.streamHeads(streams)
	if err != nil {
		return out, err
	}
	seq, prev, last := t.head, t.headHash, time.Unix(0, t.headTime)
	if seq == 0 {
		last = time.Time{}
	}
	here := make(map[store.ID]int, len(events))
	var rows [][]any
	for i := range events {
		e, ev := &events[i], &evs[i]
		if j, ok := here[ev.ID]; ok {
			if !sameContent(&store.Record{Stream: events[j].Stream, Event: evs[j]}, e.Stream, ev) {
				return fail(i, fmt.Errorf("%w: event id %s was already used for different content (seq %d)", store.ErrConflict, ev.ID, out.Seqs[j]))
			}
			out.Seqs[i], out.Duplicate[i] = out.Seqs[j], true
			continue
		}
		if r := stored[ev.ID]; r != nil {
			if !sameContent(r, e.Stream, ev) {
				return fail(i, fmt.Errorf("%w: event id %s was already used for different content (seq %d)", store.ErrConflict, ev.ID, r.Seq))
			}
			out.Seqs[i], out.Duplicate[i] = r.Seq, true
			continue
		}
		if version := heads[e.Stream]; e.Version == 0 || version != e.Version-1 {
			return fail(i, &store.VersionConflict{Stream: e.Stream, Expected: e.Version - 1, Actual: version})
		}
		seq++
		r := store.Record{Seq: seq, Stream: e.Stream, Version: e.Version, Event: *ev, Prev: prev}
		if r.Time.Before(last) {
			r.Time = last
		}
		last = r.Time
		r.Hash = store.ChainHash(&r)
		rows = append(rows, []any{int64(r.Seq), r.ID[:], r.Stream, int64(r.Version), r.Type, int64(r.Schema), r.Time.UnixNano(),
			r.Actor, r.Session, r.Project, store.OptionalID(r.Correlation), store.OptionalID(r.Causation), r.Data, r.Prev[:], r.Hash[:]})
		heads[e.Stream], here[ev.ID], out.Seqs[i], prev = e.Version, i, seq, r.Hash
	}
	if len(rows) == 0 {
		return out, nil
	}
	t.copied += len(rows)
	if err := t.writeBulk(rows, heads); err != nil {
		t.fail(err)
		return out, err
	}
	var b pgx.Batch
	b.Queue(`UPDATE flow_head SET seq = $1, hash = $2, time_ns = $3`, int64(seq), prev[:], last.UnixNano())
	queueNotify(&b, seq) // notify.go
	if err := t.q.SendBatch(t.ctx, &b).Close(); err != nil {
		err = t.s.wrap(err)
		t.fail(err)
		return out, err
	}
	t.head, t.headHash, t.headTime = seq, prev, last.UnixNano()
	return out, nil
}

// columns are the columns of flow_events, for COPY.
var columns = []string{"seq", "id", "stream", "version", "type", "schema", "time_ns", "actor", "session", "project",
	"correlation", "causation", "data", "prev", "hash"}

// writeBulk copies rows into flow_events and sets the stream heads.
func (t *Tx) writeBulk(rows [][]any, heads map[string]uint64) error {
	if _, err := t.q.CopyFrom(t.ctx, pgx.Identifier{"flow_events"}, columns, pgx.CopyFromRows(rows)); err != nil {
		return t.s.wrap(err)
	}
	names := make([]string, 0, len(heads))
	versions := make([]int64, 0, len(heads))
	for name, v := range heads {
		names, versions = append(names, name), append(versions, int64(v))
	}
	// The seq of a stream's last event is the highest of its records.
	_, err := t.q.Exec(t.ctx, `INSERT INTO flow_streams (stream, version, seq)
		SELECT h.stream, h.version, e.seq FROM unnest($1::text[], $2::bigint[]) AS h(stream, version)
		JOIN flow_events e ON e.stream = h.stream AND e.version = h.version
		ON CONFLICT (stream) DO UPDATE SET version = excluded.version, seq = excluded.seq`, names, versions)
	return t.s.wrap(err)
}

// recordsByID returns the stored records of ids, by id.
func (t *Tx) recordsByID(ids [][]byte) (map[store.ID]*store.Record, error) {
	rows, err := t.q.Query(t.ctx, `SELECT `+recordColumns+` FROM flow_events WHERE id = ANY($1::bytea[])`, ids)
	if err != nil {
		return nil, t.s.wrap(err)
	}
	defer rows.Close()
	out := map[store.ID]*store.Record{}
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, err
		}
		out[r.ID] = r
	}
	return out, t.s.wrap(rows.Err())
}

// streamHeads returns the versions of streams, 0 for a new one.
func (t *Tx) streamHeads(streams []string) (map[string]uint64, error) {
	rows, err := t.q.Query(t.ctx, `SELECT stream, version FROM flow_streams WHERE stream = ANY($1::text[])`, streams)
	if err != nil {
		return nil, t.s.wrap(err)
	}
	defer rows.Close()
	out := make(map[string]uint64, len(streams))
	for rows.Next() {
		var name string
		var v int64
		if err := rows.Scan(&name, &v); err != nil {
			return nil, t.s.wrap(err)
		}
		out[name] = uint64(v)
	}
	return out, t.s.wrap(rows.Err())
}
