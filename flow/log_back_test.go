package flow

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow/internal/logidx"
	"github.com/flowctl/flowctl/flow/store"
	"pgregory.net/rapid"
)

// backEvent is one event of a random history: types the fold does not
// know (it skips them), so any mix of fields is a valid history.
type backEvent struct {
	stream, typ, actor, session, project string
}

var (
	backTypes    = []string{"task.x", "task.y", "note.a", "plan.b"}
	backActors   = []string{"", "ann", "bob"}
	backSessions = []string{"", "s1", "s2"}
	backProjects = []string{"", "p", "q"}
	backStreams  = []string{"a/1", "a/2", "b/1"}
)

// appendBack appends batches of events, each batch one transaction, and
// lists them in the log index as the engine's writer does, but for the
// batches from unindexed on, which it appends as a flowctl without the
// log index would.
func appendBack(tb testing.TB, e *Engine, batches [][]backEvent, unindexed int) {
	tb.Helper()
	for i, batch := range batches {
		err := e.update(func(tx store.Tx) error {
			var idx logidx.Writer
			for j, b := range batch {
				ev := store.Event{Type: b.typ, Schema: 1, Actor: b.actor, Session: b.session, Project: b.project,
					Time: e.opts.Now().UTC(), Data: []byte(fmt.Sprintf("\xa1%d", (i+j)%10))}
				res, err := tx.Append(b.stream, eventlog.Any, ev)
				if err != nil {
					return err
				}
				if i < unindexed {
					idx.Add(res.Seqs[0], &ev)
				}
			}
			return idx.Flush(tx)
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
}

func drawBackEvent(t *rapid.T) backEvent {
	return backEvent{
		stream:  rapid.SampledFrom(backStreams).Draw(t, "stream"),
		typ:     rapid.SampledFrom(backTypes).Draw(t, "type"),
		actor:   rapid.SampledFrom(backActors).Draw(t, "actor"),
		session: rapid.SampledFrom(backSessions).Draw(t, "session"),
		project: rapid.SampledFrom(backProjects).Draw(t, "project"),
	}
}

func drawFilter(t *rapid.T, head uint64) Filter {
	return Filter{
		Stream:   rapid.SampledFrom(append([]string{"", "", "none"}, backStreams...)).Draw(t, "f.stream"),
		Project:  rapid.SampledFrom(append([]string{"", "none"}, backProjects[1:]...)).Draw(t, "f.project"),
		Type:     rapid.SampledFrom([]string{"", "", "task.*", "task.x", "note.a", "*", "nope", "plan.*"}).Draw(t, "f.type"),
		Actor:    rapid.SampledFrom(append([]string{"", "carl"}, backActors...)).Draw(t, "f.actor"),
		Session:  rapid.SampledFrom(append([]string{"", "s9"}, backSessions...)).Draw(t, "f.session"),
		SinceSeq: rapid.Uint64Range(0, head+1).Draw(t, "f.since"),
		UntilSeq: rapid.SampledFrom([]uint64{0, 0, head / 2, head, head + 3}).Draw(t, "f.until"),
	}
}

// backOf returns EventsBack's seqs for f.
func backOf(tb testing.TB, e *Engine, f Filter) []uint64 {
	tb.Helper()
	var out []uint64
	if err := e.EventsBack(f, func(ev Event) error { out = append(out, ev.Seq); return nil }); err != nil {
		tb.Fatalf("EventsBack(%+v): %v", f, err)
	}
	return out
}

// TestEngine_EventsBack_Property: for random histories and filters,
// EventsBack is Events reversed, Events with a Limit is the last Limit
// of Events without, EventsBack with a Limit is the first Limit of
// EventsBack without, also when the last batches were appended without
// the log index (an older flowctl); and the log index is the log's after
// Sync lists those, and after a rebuild.
func TestEngine_EventsBack_Property(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		e := mustOpen(t)
		batches := rapid.SliceOfN(rapid.SliceOfN(rapid.Custom(drawBackEvent), 1, 30), 1, 12).Draw(rt, "batches")
		unindexed := rapid.IntRange(0, len(batches)+1).Draw(rt, "unindexed")
		appendBack(t, e, batches, unindexed)
		if _, err := e.Verify(); err != nil {
			rt.Fatalf("Verify: %v", err)
		}
		head := uint64(0)
		for _, b := range batches {
			head += uint64(len(b))
		}
		for range 10 {
			f := drawFilter(rt, head)
			all := seqs(collect(t, e, f))
			back := backOf(t, e, f)
			if !slices.Equal(back, reversed(all)) {
				rt.Fatalf("filter %+v: EventsBack %v, Events reversed %v", f, back, reversed(all))
			}
			f.Limit = rapid.IntRange(1, 6).Draw(rt, "f.limit")
			if got, want := seqs(collect(t, e, f)), all[max(0, len(all)-f.Limit):]; !slices.Equal(got, want) {
				rt.Fatalf("filter %+v: Events %v, want the last of %v", f, got, all)
			}
			if got, want := backOf(t, e, f), back[:min(len(back), f.Limit)]; !slices.Equal(got, want) {
				rt.Fatalf("filter %+v: EventsBack %v, want %v", f, got, want)
			}
		}
		if err := logidx.Sync(e.log, 0); err != nil {
			rt.Fatal(err)
		}
		if _, err := e.Verify(); err != nil {
			rt.Fatalf("Verify after Sync: %v", err)
		}
		before := dumpBucket(t, e, logidx.Bucket)
		if _, err := e.Rebuild(); err != nil {
			rt.Fatal(err)
		}
		if after := dumpBucket(t, e, logidx.Bucket); !bytes.Equal(before, after) {
			rt.Fatalf("the log index differs after a rebuild")
		}
	})
}

// dumpBucket returns bucket's keys and values, concatenated.
func dumpBucket(tb testing.TB, e *Engine, bucket string) []byte {
	var out []byte
	err := e.view(func(tx store.Tx) error {
		return tx.Scan(bucket, nil, func(k, v []byte) error {
			out = fmt.Appendf(out, "%x=%x\n", k, v)
			return nil
		})
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// TestEngine_EventsBack_Pages walks back over more than two pages of
// records, through each path, each page in its own transaction.
func TestEngine_EventsBack_Pages(t *testing.T) {
	e := mustOpen(t)
	const n = 2*pageSize + 17
	batch := make([]backEvent, n)
	for i := range batch {
		batch[i] = backEvent{stream: backStreams[i%3], typ: backTypes[i%4], actor: backActors[i%3], session: "s1", project: backProjects[1+i%2]}
	}
	appendBack(t, e, [][]backEvent{batch}, 1)
	for _, f := range []Filter{{}, {Stream: "a/2"}, {Project: "q"}, {Session: "s1"}, {Type: "task.*", Project: "p"}, {Actor: "bob", SinceSeq: 100}} {
		all := seqs(collect(t, e, f))
		if back := backOf(t, e, f); !slices.Equal(back, reversed(all)) || len(all) < 100 {
			t.Errorf("filter %+v: EventsBack gave %d events, Events %d", f, len(back), len(all))
		}
		stops := 0
		err := e.EventsBack(f, func(Event) error {
			if stops++; stops == pageSize+3 {
				return ErrStop
			}
			return nil
		})
		if err != nil || stops != min(pageSize+3, len(all)) {
			t.Errorf("filter %+v: ErrStop after %d events: %v", f, stops, err)
		}
	}
}

func reversed(s []uint64) []uint64 {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}

// TestEngine_EventsBack_InBatch: a Batch's commands list their events in
// the log index at its end, and a walk inside the batch sees them.
func TestEngine_EventsBack_InBatch(t *testing.T) {
	e := mustOpen(t)
	err := e.Batch(func(b *Engine) error {
		if _, err := b.CreateProject(NewProject{Name: "p"}); err != nil {
			return err
		}
		for range 3 {
			if _, err := b.AddTask(NewTask{Project: "p", Title: "t"}); err != nil {
				return err
			}
		}
		got := backOf(t, b, Filter{Type: "task.created", Project: "p"})
		if len(got) != 3 {
			t.Errorf("inside the batch: %v, want 3 tasks", got)
		}
		_, err := b.AddTask(NewTask{Project: "p", Title: "t"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := backOf(t, e, Filter{Type: "task.*", Actor: "tester", Session: "s1"}); len(got) != 4 {
		t.Errorf("after the batch: %v, want 4 tasks", got)
	}
}

// TestOpen_CatchesUpLogIndex: a writable open lists the events a flowctl
// without the log index appended, and nothing else changes.
func TestOpen_CatchesUpLogIndex(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flow.db")
	opts := Options{Create: true, NoSync: true, Actor: "tester", Now: fixedClock()}
	e, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	appendBack(t, e, [][]backEvent{{{stream: "a/1", typ: "task.x", actor: "ann"}}, {{stream: "a/1", typ: "task.y", actor: "bob"}}}, 1)
	current := func(e *Engine) (ok bool) {
		if err := e.view(func(tx store.Tx) (err error) { ok, err = logidx.Current(tx); return err }); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if current(e) {
		t.Fatal("the log index is current after an unindexed append")
	}
	e.Close()
	if e, err = Open(path, opts); err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if !current(e) {
		t.Fatal("a writable open left the log index behind")
	}
	if _, err := e.Verify(); err != nil {
		t.Fatal(err)
	}
	if got := backOf(t, e, Filter{Actor: "bob"}); !slices.Equal(got, []uint64{2}) {
		t.Errorf("actor bob: %v, want [2]", got)
	}
}
