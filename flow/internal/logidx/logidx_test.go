package logidx

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow/internal/searchidx"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

func openStore(t testing.TB) store.Store {
	t.Helper()
	l, err := eventlog.Open(filepath.Join(t.TempDir(), "flow.db"), eventlog.Options{Create: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	st := l.Store()
	t.Cleanup(func() { st.Close() })
	return st
}

// write lists seqs 1..n as events of actor "a" when keep(seq), flushing
// after every batch seqs.
func write(t *testing.T, st store.Store, n, batch uint64, keep func(uint64) bool) {
	t.Helper()
	for from := uint64(1); from <= n; from += batch {
		err := st.Update(func(tx store.Tx) error {
			var w Writer
			for seq := from; seq < from+batch && seq <= n; seq++ {
				if keep(seq) {
					w.Add(seq, &store.Event{Type: "t.x", Actor: "a"})
				}
			}
			return w.Flush(tx)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// dump is the log index's buckets, key by key.
func dump(t *testing.T, st store.Store) []byte { return dumpBuckets(t, st, Bucket, PendingBucket) }

// dumpBuckets is the keys and values of buckets, in order.
func dumpBuckets(t interface{ Fatal(...any) }, st store.Store, buckets ...string) []byte {
	var out []byte
	err := st.View(func(tx store.Tx) error {
		for _, b := range buckets {
			out = fmt.Appendf(out, "%s:\n", b)
			err := tx.Scan(b, nil, func(k, v []byte) error {
				out = fmt.Appendf(out, "%x=%x\n", k, v)
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWriter_Canonical: the chunks are the same whatever the
// transactions that wrote them, and a cursor finds every seq.
func TestWriter_Canonical(t *testing.T) {
	keep := func(seq uint64) bool { return seq%3 != 0 || seq%7 == 0 }
	const n = 2*PendingSpan + 1000
	one := openStore(t)
	write(t, one, n, n, keep)
	for _, batch := range []uint64{7, 64, 65, 1000, PendingSpan + 1} {
		st := openStore(t)
		write(t, st, n, batch, keep)
		if !bytes.Equal(dump(t, st), dump(t, one)) {
			t.Errorf("batches of %d: the index differs from one written at once", batch)
		}
	}
	err := one.View(func(tx store.Tx) error {
		cur, err := Open(tx, Query{Actor: "a", Types: func(typ string) bool { return typ == "t.x" }})
		if err != nil {
			return err
		}
		var got, want []uint64
		for x := uint64(n + 5); ; {
			seq, err := cur.Le(x)
			if err != nil || seq == 0 {
				break
			}
			got, x = append(got, seq), seq-1
		}
		for seq := uint64(n); seq >= 1; seq-- {
			if keep(seq) {
				want = append(want, seq)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("walk back = %v,\nwant %v", got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCursor_Malformed: a chunk that does not decode is corruption.
func TestCursor_Malformed(t *testing.T) {
	for _, c := range []struct {
		name   string
		bucket string
		key    []byte
		at     uint64 // the seq looked for
	}{
		{"Chunk", Bucket, chunkKey(listPrefix(kindActor, "a"), 65), 90},
		{"Pending", PendingBucket, listPrefix(kindActor, "a"), PendingSpan + 50},
	} {
		st := openStore(t)
		write(t, st, PendingSpan+100, 1000, func(uint64) bool { return true })
		err := st.Update(func(tx store.Tx) error {
			return tx.Put(c.bucket, c.key, []byte{0x80})
		})
		if err != nil {
			t.Fatal(err)
		}
		err = st.View(func(tx store.Tx) error {
			cur, err := Open(tx, Query{Actor: "a"})
			if err != nil {
				return err
			}
			_, err = cur.Le(c.at)
			return err
		})
		if !errors.Is(err, store.ErrCorrupt) {
			t.Errorf("%s: Le over a malformed entry: %v, want ErrCorrupt", c.name, err)
		}
	}
}

// TestWriter_Lists: Add lists an event under the prefixes the readers
// look up (listPrefix), each list's seqs in order.
func TestWriter_Lists(t *testing.T) {
	var w Writer
	evs := []store.Event{
		{Type: "task.created", Project: "p", Actor: "a", Session: "s"},
		{Type: "task.created", Project: "pq", Actor: "a"},
		{Type: "note.added", Project: "p", Session: "s"},
		{Type: "task.created", Project: "p", Actor: "b", Session: "s"},
	}
	for i := range evs {
		w.Add(uint64(i+1), &evs[i])
	}
	want := map[string][]uint64{
		string(listPrefix(kindType, "task.created")):                           {1, 2, 4},
		string(listPrefix(kindType, "note.added")):                             {3},
		string(listPrefix(kindProjectType, projectTerm("p", "task.created"))):  {1, 4},
		string(listPrefix(kindProjectType, projectTerm("pq", "task.created"))): {2},
		string(listPrefix(kindProjectType, projectTerm("p", "note.added"))):    {3},
		string(listPrefix(kindActor, "a")):                                     {1, 2},
		string(listPrefix(kindActor, "b")):                                     {4},
		string(listPrefix(kindSession, "s")):                                   {1, 3, 4},
	}
	if len(w.lists) != len(want) || len(w.order) != len(want) {
		t.Fatalf("%d lists, %d in order; want %d", len(w.lists), len(w.order), len(want))
	}
	for p, seqs := range want {
		if got := w.lists[p]; got == nil || !slices.Equal(*got, seqs) {
			t.Errorf("list %q = %v, want %v", p, got, seqs)
		}
	}
}

// TestWriter_AsyncSame: a Writer that lists on a goroutine of its own
// (Async) writes the bytes of one that lists at once, full-text index
// included, whether it hands over whole chunks of events or a part of
// one, and a Stop without a Flush writes nothing.
func TestWriter_AsyncSame(t *testing.T) {
	texts := []string{"alpha beta", "beta gamma delta", "Gamma", ""}
	run := func(async bool, n uint64, flushAt uint64) []byte {
		st := openStore(t)
		err := st.Update(func(tx store.Tx) error {
			var w Writer
			if async {
				w.Async()
				defer w.Stop()
			}
			for seq := uint64(1); seq <= n; seq++ {
				data, ok := projection.AppendPayload(nil, projection.NoteAdded{Task: "T-1", Text: texts[seq%4], Kind: "info"})
				if !ok {
					t.Fatal("no encoder for NoteAdded")
				}
				w.Add(seq, &store.Event{Type: projection.TypeNoteAdded, Schema: projection.SchemaVersion,
					Project: fmt.Sprint("p", seq%3), Actor: "a", Session: fmt.Sprint("s", seq%5), Data: data})
				if seq == flushAt {
					if err := w.Flush(tx); err != nil {
						return err
					}
				}
			}
			return w.Flush(tx)
		})
		if err != nil {
			t.Fatal(err)
		}
		return dumpBuckets(t, st, Bucket, PendingBucket, searchidx.Bucket, searchidx.PendingBucket)
	}
	for _, c := range []struct{ n, flushAt uint64 }{{1, 0}, {asyncChunk, 0}, {3*asyncChunk + 7, 0}, {PendingSpan + 300, 1000}} {
		got, want := run(true, c.n, c.flushAt), run(false, c.n, c.flushAt)
		if !bytes.Equal(got, want) {
			t.Errorf("%d events, flushed at %d: async wrote\n%s\nwant\n%s", c.n, c.flushAt, got, want)
		}
		if _, search, _ := bytes.Cut(want, []byte(searchidx.Bucket+":\n")); !bytes.Contains(search, []byte("=")) {
			t.Errorf("%d events: nothing in the full-text index", c.n)
		}
	}
	var w Writer
	w.Async()
	w.Add(1, &store.Event{Type: "t.x", Actor: "a"})
	w.Stop()
	if w.async != nil || w.last != 1 {
		t.Errorf("after Stop: async %v, last %d; want nil, 1", w.async, w.last)
	}
}
