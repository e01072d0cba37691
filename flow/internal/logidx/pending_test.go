package logidx

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/flowctl/flowctl/flow/store"
	"pgregory.net/rapid"
)

// TestWriter_PendingAcrossBoundaries: whatever the transactions that
// list the log (sizes crossing multiples of PendingSpan or not, listed
// at once or on a goroutine of their own), after
// each one the index is the bytes a rebuild writes (Compare), the
// Checker of verify passes, and every walk and the session lists read
// what the log says; an entry damaged in either bucket fails both checks.
func TestWriter_PendingAcrossBoundaries(t *testing.T) {
	types := []string{"task.created", "note.added", "x.other"}
	rapid.Check(t, func(rt *rapid.T) {
		st := openStore(t)
		if err := st.Update(Reset); err != nil {
			rt.Fatal(err)
		}
		var log []store.Event // by seq-1
		txs := rapid.IntRange(1, 6).Draw(rt, "transactions")
		for range txs {
			n := rapid.IntRange(1, 3*PendingSpan/2).Draw(rt, "events")
			seed := rapid.Uint64().Draw(rt, "seed")
			draw := func(i int, salt uint64, of int) int {
				h := (seed ^ uint64(i)*0x9E3779B97F4A7C15 ^ salt*0xBF58476D1CE4E5B9)
				h ^= h >> 31
				h *= 0x94D049BB133111EB
				h ^= h >> 29
				return int(h % uint64(of))
			}
			evs := make([]store.Event, n)
			for i := range evs {
				evs[i] = store.Event{Type: types[draw(i, 1, len(types))],
					Project: []string{"", "p", "q"}[draw(i, 2, 3)],
					Actor:   []string{"", "a", "b"}[draw(i, 3, 3)],
					Session: []string{"", "s1", "s2", fmt.Sprintf("s-%d", draw(i, 4, 50))}[draw(i, 5, 4)]}
			}
			async := rapid.Bool().Draw(rt, "async") // listed on a goroutine of its own
			err := st.Update(func(tx store.Tx) error {
				app, err := tx.Append("s", store.Any, evs...)
				if err != nil {
					return err
				}
				var w Writer
				if async {
					w.Async()
					defer w.Stop()
				}
				for i, seq := range app.Seqs {
					w.Add(seq, &evs[i])
				}
				return w.Flush(tx)
			})
			if err != nil {
				rt.Fatal(err)
			}
			log = append(log, evs...)
			if err := st.View(func(tx store.Tx) error { return checkIndex(tx, log) }); err != nil {
				rt.Fatal(err)
			}
		}
		// Damage one entry of either bucket: both checks fail.
		bucket := rapid.SampledFrom([]string{Bucket, PendingBucket}).Draw(rt, "damaged bucket")
		var keys [][]byte
		err := st.View(func(tx store.Tx) error {
			return tx.Scan(bucket, nil, func(k, _ []byte) error {
				if k[0] != kindMeta {
					keys = append(keys, k)
				}
				return nil
			})
		})
		if err != nil || len(keys) == 0 {
			return
		}
		k := rapid.SampledFrom(keys).Draw(rt, "damaged key")
		drop := rapid.Bool().Draw(rt, "drop")
		err = st.Update(func(tx store.Tx) error {
			if drop {
				return tx.Delete(bucket, k)
			}
			v, err := tx.Get(bucket, k)
			if err != nil {
				return err
			}
			return tx.Put(bucket, k, append(slices.Clone(v), 1))
		})
		if err != nil {
			rt.Fatal(err)
		}
		err = st.View(func(tx store.Tx) error {
			if err := Compare(tx); !errors.Is(err, store.ErrCorrupt) {
				return fmt.Errorf("Compare of a damaged %s: %v, want ErrCorrupt", bucket, err)
			}
			c := NewChecker()
			for i := range log {
				c.Add(uint64(i+1), &log[i])
			}
			if err := c.Check(tx); !errors.Is(err, store.ErrCorrupt) {
				return fmt.Errorf("Checker of a damaged %s: %v, want ErrCorrupt", bucket, err)
			}
			return nil
		})
		if err != nil {
			rt.Fatal(err)
		}
	})
}

// checkIndex checks the index in tx against log, its events by seq-1.
func checkIndex(tx store.Tx, log []store.Event) error {
	if err := Compare(tx); err != nil {
		return fmt.Errorf("Compare: %w", err)
	}
	c := NewChecker()
	for i := range log {
		c.Add(uint64(i+1), &log[i])
	}
	if err := c.Check(tx); err != nil {
		return fmt.Errorf("Checker: %w", err)
	}
	queries := []Query{
		{Types: func(string) bool { return true }},
		{Types: func(typ string) bool { return typ == "note.added" }},
		{Types: func(typ string) bool { return typ != "note.added" }, Project: "p"},
		{Actor: "a"},
		{Session: "s1"},
		{Actor: "b", Session: "s2", Types: func(typ string) bool { return typ == "x.other" }},
	}
	for qi, q := range queries {
		cur, err := Open(tx, q)
		if err != nil {
			return err
		}
		var got, want []uint64
		for x := uint64(len(log)) + 3; ; {
			seq, err := cur.Le(x)
			if err != nil {
				return err
			}
			if seq == 0 {
				break
			}
			got, x = append(got, seq), seq-1
		}
		for i := len(log) - 1; i >= 0; i-- {
			ev := &log[i]
			if (q.Types == nil || (q.Types(ev.Type) && (q.Project == "" || ev.Project == q.Project))) &&
				(q.Actor == "" || ev.Actor == q.Actor) && (q.Session == "" || ev.Session == q.Session) {
				want = append(want, uint64(i+1))
			}
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("query %d walks %d seqs %v..., want %d", qi, len(got), got[:min(5, len(got))], len(want))
		}
	}
	lists, err := Sessions(tx)
	if err != nil {
		return err
	}
	want := map[string]SessionList{}
	for i := range log {
		s := log[i].Session
		if s == "" {
			continue
		}
		l, ok := want[s]
		if !ok {
			l = SessionList{Session: s, First: uint64(i + 1)}
		}
		l.Last, l.Events = uint64(i+1), l.Events+1
		want[s] = l
	}
	if len(lists) != len(want) {
		return fmt.Errorf("%d sessions listed, want %d", len(lists), len(want))
	}
	for i, l := range lists {
		if want[l.Session] != l || (i > 0 && lists[i-1].Session >= l.Session) {
			return fmt.Errorf("session %+v, want %+v, in name order", l, want[l.Session])
		}
	}
	return nil
}
