package eventlog

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestLog_Property appends random batches to a few streams, with fresh
// events, retries of earlier batches (idempotent), reused ids with other
// content, partly stored batches and every kind of expected version, and
// checks after every step that the log holds exactly what a simple model
// says: gap-free seqs, stream versions, the chain and a clean Verify.
func TestLog_Property(t *testing.T) {
	dir := t.TempDir()
	var files atomic.Int64
	rapid.Check(t, func(rt *rapid.T) {
		path := filepath.Join(dir, fmt.Sprintf("prop-%d.db", files.Add(1)))
		l, err := Open(path, Options{Create: true, NoSync: true, Now: func() time.Time { return testClock }, createFormat: testFormat})
		if err != nil {
			rt.Fatalf("Open: %v", err)
		}
		defer os.Remove(path)
		defer l.Close()
		m := &model{l: l, versions: map[string]uint64{}}
		rt.Repeat(map[string]func(*rapid.T){
			"append":  m.appendNew,
			"retry":   m.retry,
			"reuse":   m.reuseChanged,
			"partial": m.partial,
			"":        m.check,
		})
	})
}

// model is what the log should hold.
type model struct {
	l        *Log
	records  []Record          // index seq-1; Seq, Stream, Version, Event
	versions map[string]uint64 // stream -> head version
	batches  [][]uint64        // seqs of each stored batch
	nextID   uint64
}

var propStreams = []string{"s1", "s2", "s3", "task/01J"}

func (m *model) genEvent(rt *rapid.T) Event {
	e := Event{
		Type:    rapid.SampledFrom([]string{"a", "b"}).Draw(rt, "type"),
		Project: rapid.SampledFrom([]string{"", "p", "q"}).Draw(rt, "project"),
		Data:    rapid.SliceOfN(rapid.Byte(), 0, 16).Draw(rt, "data"),
	}
	if rapid.IntRange(0, 4).Draw(rt, "assignID") > 0 {
		m.nextID++
		e.ID = testID(m.nextID)
	}
	return e
}

// genExpect draws an expected version for stream and returns the conflict
// it must cause, or nil.
func (m *model) genExpect(rt *rapid.T, stream string) (Expect, *VersionConflict) {
	cur := m.versions[stream]
	switch rapid.IntRange(0, 3).Draw(rt, "expect") {
	case 0:
		return Any, nil
	case 1:
		if cur != 0 {
			return NoStream, &VersionConflict{Stream: stream, Expected: 0, Actual: cur}
		}
		return NoStream, nil
	case 2:
		return Exact(cur), nil
	}
	v := rapid.Uint64Range(0, cur+2).Filter(func(v uint64) bool { return v != cur }).Draw(rt, "stale")
	return Exact(v), &VersionConflict{Stream: stream, Expected: v, Actual: cur}
}

func (m *model) appendNew(rt *rapid.T) {
	stream := rapid.SampledFrom(propStreams).Draw(rt, "stream")
	events := make([]Event, rapid.IntRange(1, 3).Draw(rt, "n"))
	for i := range events {
		events[i] = m.genEvent(rt)
	}
	exp, conflict := m.genExpect(rt, stream)
	got, err := m.l.Append(stream, exp, events...)
	if conflict != nil {
		var vc *VersionConflict
		if !errors.As(err, &vc) || *vc != *conflict {
			rt.Fatalf("Append(%s, %v): err = %v, want %v", stream, exp, err, conflict)
		}
		return
	}
	if err != nil {
		rt.Fatalf("Append(%s, %v): %v", stream, exp, err)
	}
	head := uint64(len(m.records))
	if want := seqRange(head+1, head+uint64(len(events))); !equalSeqs(got.Seqs, want) || got.Duplicate {
		rt.Fatalf("Append = %+v, want new seqs %v", got, want)
	}
	if want := m.versions[stream] + uint64(len(events)); got.Version != want {
		rt.Fatalf("Append: version %d, want %d", got.Version, want)
	}
	for i, e := range events {
		m.versions[stream]++
		if e.ID.IsZero() { // assigned by the log: learn it
			err := m.l.View(func(tx *Tx) error {
				r, err := tx.Record(got.Seqs[i])
				if err == nil {
					e.ID = r.ID
				}
				return err
			})
			if err != nil || e.ID.IsZero() {
				rt.Fatalf("reading assigned id: %v", err)
			}
		}
		e.Time = testClock
		m.records = append(m.records, Record{Seq: got.Seqs[i], Stream: stream, Version: m.versions[stream], Event: e})
	}
	m.batches = append(m.batches, got.Seqs)
}

// retry re-appends a stored batch, or part of it, with the same content:
// a duplicate, whatever the expected version.
func (m *model) retry(rt *rapid.T) {
	if len(m.batches) == 0 {
		rt.Skip("nothing to retry")
	}
	batch := rapid.SampledFrom(m.batches).Draw(rt, "batch")
	from := rapid.IntRange(0, len(batch)-1).Draw(rt, "from")
	seqs := batch[from:]
	events := make([]Event, len(seqs))
	for i, seq := range seqs {
		events[i] = m.records[seq-1].Event
		events[i].Time, events[i].Actor = testClock.Add(time.Hour), "retrier"
	}
	stream := m.records[seqs[0]-1].Stream
	exp, _ := m.genExpect(rt, stream)
	got, err := m.l.Append(stream, exp, events...)
	if err != nil || !got.Duplicate || !equalSeqs(got.Seqs, seqs) || got.Version != m.versions[stream] {
		rt.Fatalf("retry of seqs %v = %+v, %v; want a duplicate at version %d", seqs, got, err, m.versions[stream])
	}
}

// reuseChanged appends a stored event's id with other content.
func (m *model) reuseChanged(rt *rapid.T) {
	if len(m.records) == 0 {
		rt.Skip("no events")
	}
	r := rapid.SampledFrom(m.records).Draw(rt, "record")
	e, stream := r.Event, r.Stream
	if rapid.Bool().Draw(rt, "otherStream") {
		stream = rapid.SampledFrom(propStreams).Filter(func(s string) bool { return s != r.Stream }).Draw(rt, "stream")
	} else {
		e.Data = append(bytes.Clone(e.Data), 'x')
	}
	exp, _ := m.genExpect(rt, stream)
	_, err := m.l.Append(stream, exp, e)
	var vc *VersionConflict
	if !errors.Is(err, ErrConflict) || errors.As(err, &vc) {
		rt.Fatalf("reused id %s with other content: err = %v, want an id conflict", e.ID, err)
	}
}

// partial appends a batch of a stored event and a new one.
func (m *model) partial(rt *rapid.T) {
	if len(m.records) == 0 {
		rt.Skip("no events")
	}
	r := rapid.SampledFrom(m.records).Draw(rt, "record")
	fresh := m.genEvent(rt)
	events := []Event{r.Event, fresh}
	if rapid.Bool().Draw(rt, "freshFirst") {
		events[0], events[1] = events[1], events[0]
	}
	_, err := m.l.Append(r.Stream, Any, events...)
	if !errors.Is(err, ErrConflict) {
		rt.Fatalf("partly stored batch: err = %v, want ErrConflict", err)
	}
}

// check compares the log with the model.
func (m *model) check(rt *rapid.T) {
	var got []*Record
	if err := m.l.ReadRange(0, 0, func(r *Record) error { got = append(got, r); return nil }); err != nil {
		rt.Fatalf("ReadRange: %v", err)
	}
	if len(got) != len(m.records) {
		rt.Fatalf("log has %d records, model %d", len(got), len(m.records))
	}
	var prev Hash
	for i, r := range got {
		want := m.records[i]
		want.Prev, want.Hash = prev, r.Hash
		if diff := sameRecord(r, &want); diff != "" {
			rt.Fatalf("record %d: %s", i+1, diff)
		}
		prev = r.Hash
	}
	for _, stream := range propStreams {
		m.checkIndex(rt, "stream "+stream, func(r *Record) bool { return r.Stream == stream },
			func(fn func(*Record) error) error { return m.l.ReadStream(stream, 0, fn) })
	}
	for _, project := range []string{"p", "q"} {
		m.checkIndex(rt, "project "+project, func(r *Record) bool { return r.Project == project },
			func(fn func(*Record) error) error { return m.l.ReadProject(project, 0, fn) })
	}
	rep, err := m.l.Verify()
	if err != nil {
		rt.Fatalf("Verify: %v", err)
	}
	if rep.HeadSeq != uint64(len(m.records)) || rep.HeadHash != prev || rep.Streams != len(m.versions) {
		rt.Fatalf("Verify report %+v, want head %d and %d streams", rep, len(m.records), len(m.versions))
	}
}

// checkIndex compares the seqs an index read returns with the model's
// records that match.
func (m *model) checkIndex(rt *rapid.T, what string, match func(*Record) bool, read func(func(*Record) error) error) {
	var got, want []uint64
	if err := read(func(r *Record) error { got = append(got, r.Seq); return nil }); err != nil {
		rt.Fatalf("reading %s: %v", what, err)
	}
	for i := range m.records {
		if match(&m.records[i]) {
			want = append(want, m.records[i].Seq)
		}
	}
	if !equalSeqs(got, want) {
		rt.Fatalf("%s: read seqs %v, want %v", what, got, want)
	}
}
