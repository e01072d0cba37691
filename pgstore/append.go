package pgstore

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/jackc/pgx/v5"
)

// Append is store.Tx's: the checks and the duplicate rule of package
// eventlog, then the records, the stream head and the head row, sent as
// one pipelined batch in the transaction that holds the head row.
func (t *Tx) Append(stream string, exp store.Expect, events ...store.Event) (store.Appended, error) {
	if !t.writable {
		return store.Appended{}, store.ErrReadOnly
	}
	evs, newIDs, err := prepare(stream, events, t.s.now)
	if err != nil {
		return store.Appended{}, err
	}
	if !newIDs { // a new UUIDv7, with 74 random bits, is stored nowhere
		if dup, ok, err := t.duplicate(stream, evs); err != nil || ok {
			return dup, err
		}
	}
	version, _, err := t.streamHead(stream)
	if err != nil {
		return store.Appended{}, t.s.wrap(err)
	}
	if !exp.Allows(version) {
		return store.Appended{}, &store.VersionConflict{Stream: stream, Expected: exp.Version(), Actual: version}
	}
	return t.write(stream, evs, version)
}

// write stores evs as versions version+1.. of stream.
func (t *Tx) write(stream string, evs []store.Event, version uint64) (store.Appended, error) {
	seq, prev, last := t.head, t.headHash, time.Unix(0, t.headTime)
	if seq == 0 {
		last = time.Time{}
	}
	out := store.Appended{Seqs: make([]uint64, len(evs))}
	var b pgx.Batch
	for i := range evs {
		seq++
		version++
		r := store.Record{Seq: seq, Stream: stream, Version: version, Event: evs[i], Prev: prev}
		if r.Time.Before(last) {
			r.Time = last
		}
		last = r.Time
		r.Hash = store.ChainHash(&r)
		b.Queue(`INSERT INTO flow_events (`+recordColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
			int64(r.Seq), r.ID[:], r.Stream, int64(r.Version), r.Type, int64(r.Schema), r.Time.UnixNano(),
			r.Actor, r.Session, r.Project, store.OptionalID(r.Correlation), store.OptionalID(r.Causation), r.Data, r.Prev[:], r.Hash[:])
		out.Seqs[i], prev = seq, r.Hash
	}
	b.Queue(`INSERT INTO flow_streams (stream, version, seq) VALUES ($1, $2, $3)
		ON CONFLICT (stream) DO UPDATE SET version = excluded.version, seq = excluded.seq`, stream, int64(version), int64(seq))
	b.Queue(`UPDATE flow_head SET seq = $1, hash = $2, time_ns = $3`, int64(seq), prev[:], last.UnixNano())
	queueNotify(&b, seq) // notify.go
	if err := t.q.SendBatch(t.ctx, &b).Close(); err != nil {
		err = t.s.wrap(err)
		t.fail(err) // PostgreSQL aborted the transaction: nothing more commits
		return store.Appended{}, err
	}
	t.head, t.headHash, t.headTime = seq, prev, last.UnixNano()
	out.Version = version
	return out, nil
}

// duplicate reports whether the whole batch is stored already (ok), or
// fails if part of it is, or an id is stored with other content.
func (t *Tx) duplicate(stream string, evs []store.Event) (store.Appended, bool, error) {
	var seqs []uint64
	for i := range evs {
		seq := t.SeqOf(evs[i].ID)
		if t.err != nil {
			return store.Appended{}, false, t.s.wrap(t.err)
		}
		if seq == 0 {
			continue
		}
		r, err := t.Record(seq)
		switch {
		case err != nil:
			return store.Appended{}, false, err
		case r == nil || r.ID != evs[i].ID:
			return store.Appended{}, false, &store.CorruptionError{Seq: seq, Reason: fmt.Sprintf("the id index lists %s at seq %d, which holds another event", evs[i].ID, seq)}
		case !sameContent(r, stream, &evs[i]):
			return store.Appended{}, false, fmt.Errorf("%w: event id %s was already used for different content (seq %d)",
				store.ErrConflict, evs[i].ID, seq)
		}
		seqs = append(seqs, seq)
	}
	switch len(seqs) {
	case 0:
		return store.Appended{}, false, nil
	case len(evs):
		version, _, err := t.streamHead(stream)
		if err != nil {
			return store.Appended{}, false, t.s.wrap(err)
		}
		return store.Appended{Seqs: seqs, Version: version, Duplicate: true}, true, nil
	}
	return store.Appended{}, false, fmt.Errorf("%w: %d of the %d events of the batch were already appended",
		store.ErrConflict, len(seqs), len(evs))
}

// sameContent is eventlog's: the time, actor and session of a retry may
// differ.
func sameContent(r *store.Record, stream string, e *store.Event) bool {
	return r.Stream == stream && r.Type == e.Type && r.Schema == e.Schema && r.Project == e.Project &&
		r.Correlation == e.Correlation && r.Causation == e.Causation && bytes.Equal(r.Data, e.Data)
}

// prepare checks the batch and fills in ids and times, on copies of the
// events. newIDs: every id was made here.
func prepare(stream string, in []store.Event, now func() time.Time) (evs []store.Event, newIDs bool, err error) {
	if len(in) == 0 {
		return nil, false, fmt.Errorf("%w: empty batch", store.ErrInvalid)
	}
	if err := checkText("stream", stream, store.MaxStreamLen, true); err != nil {
		return nil, false, err
	}
	evs, newIDs = make([]store.Event, len(in)), true
	seen := make(map[store.ID]bool, len(in))
	for i, e := range in {
		if e.Time.IsZero() {
			e.Time = now()
		}
		if e.ID.IsZero() {
			e.ID = store.NewID(e.Time)
		} else {
			newIDs = false
		}
		if err := checkEvent(&e); err != nil {
			return nil, false, err
		}
		if seen[e.ID] {
			return nil, false, fmt.Errorf("%w: event id %s appears twice in one batch", store.ErrInvalid, e.ID)
		}
		seen[e.ID] = true
		evs[i] = e
	}
	return evs, newIDs, nil
}

var minTime, maxTime = time.Unix(0, math.MinInt64), time.Unix(0, math.MaxInt64)

func checkEvent(e *store.Event) error {
	if len(e.Data) > store.MaxPayload {
		return fmt.Errorf("%w: %s payload is %d bytes, the limit is %d", store.ErrTooLarge, e.Type, len(e.Data), store.MaxPayload)
	}
	if e.Time.Before(minTime) || e.Time.After(maxTime) {
		return fmt.Errorf("%w: time %s is outside the years 1678 to 2262", store.ErrInvalid, e.Time.Format(time.RFC3339))
	}
	for _, f := range []struct {
		name, value string
		limit       int
		required    bool
	}{
		{"event type", e.Type, store.MaxTypeLen, true},
		{"actor", e.Actor, store.MaxFieldLen, false},
		{"session", e.Session, store.MaxFieldLen, false},
		{"project", e.Project, store.MaxFieldLen, false},
	} {
		if err := checkText(f.name, f.value, f.limit, f.required); err != nil {
			return err
		}
	}
	return nil
}

// checkText is eventlog's, and refuses a NUL byte, which a PostgreSQL
// text value cannot hold.
func checkText(name, s string, limit int, required bool) error {
	switch {
	case required && s == "":
		return fmt.Errorf("%w: %s is empty", store.ErrInvalid, name)
	case len(s) > limit:
		return fmt.Errorf("%w: %s is %d bytes, the limit is %d", store.ErrInvalid, name, len(s), limit)
	case !utf8.ValidString(s):
		return fmt.Errorf("%w: %s is not valid UTF-8", store.ErrInvalid, name)
	case strings.IndexByte(s, 0) >= 0:
		return fmt.Errorf("%w: %s holds a NUL byte", store.ErrInvalid, name)
	}
	return nil
}
