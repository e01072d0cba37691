package pgstore_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/internal/pgtest"
	"github.com/flowctl/flowctl/pgstore"
)

// The benchmarks run on FLOWCTL_PG_URL's server or pgtest's throwaway
// cluster, which runs with fsync off: their figures compare this
// backend's work with itself and with bbolt's, not disks.

func benchStore(b *testing.B) store.Store {
	b.Helper()
	st, err := pgstore.Driver{}.Open(pgtest.DSN(b), store.Options{Create: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}

var payload = make([]byte, 200)

// BenchmarkAppend: one event per Update, as a command appends.
func BenchmarkAppend(b *testing.B) {
	st := benchStore(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := st.Update(func(tx store.Tx) error {
			_, err := tx.Append(fmt.Sprintf("s/%d", i%100), store.Any, store.Event{Type: "t.a", Project: "p", Data: payload})
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppendParallel: 8 writers sharing the store, one event per
// Update each.
func BenchmarkAppendParallel(b *testing.B) {
	st := benchStore(b)
	var n atomic.Int64
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			if err := st.Update(func(tx store.Tx) error {
				_, err := tx.Append(fmt.Sprintf("s/%d", i%100), store.Any, store.Event{Type: "t.a", Project: "p", Data: payload})
				return err
			}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkReplay: records read in seq order, hash checked, per event.
func BenchmarkReplay(b *testing.B) {
	st := benchStore(b)
	const events = 10000
	for done := 0; done < events; done += 1000 {
		if err := st.Update(func(tx store.Tx) error {
			for i := 0; i < 1000; i++ {
				if _, err := tx.Append(fmt.Sprintf("s/%d", i%100), store.Any, store.Event{Type: "t.a", Project: "p", Data: payload}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; {
		err := st.View(func(tx store.Tx) error {
			return tx.Replay(1, 0, func(*store.Record) error {
				i++
				if i >= b.N {
					return store.ErrStop
				}
				return nil
			})
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
