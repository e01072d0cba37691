package flow

import (
	"path/filepath"
	"testing"
	"time"

	// The bbolt backend: Open finds it in the store registry.
	_ "github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow/store"
)

// mustOpen opens a new engine under tb.TempDir() and, on cleanup, checks
// that the whole file verifies before closing it.
func mustOpen(tb testing.TB) *Engine {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), DefaultDir, DefaultFile)
	e, err := Open(path, Options{Create: true, NoSync: true, Actor: "tester", Session: "s1", Now: fixedClock()})
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() {
		if _, err := e.Verify(); err != nil {
			tb.Errorf("Verify on cleanup: %v", err)
		}
		if err := e.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return e
}

// fixedClock returns a clock that starts at a fixed time and ticks one
// second per call, so event times are distinct and predictable.
func fixedClock() func() time.Time {
	t := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	return func() time.Time {
		t = t.Add(time.Second)
		return t
	}
}

func collect(tb testing.TB, e *Engine, f Filter) []Event {
	tb.Helper()
	var out []Event
	if err := e.Events(f, func(ev Event) error { out = append(out, ev); return nil }); err != nil {
		tb.Fatalf("Events(%+v): %v", f, err)
	}
	return out
}

func seqs(events []Event) []uint64 {
	out := make([]uint64, len(events))
	for i, ev := range events {
		out[i] = ev.Seq
	}
	return out
}

// storeHead returns the seq and hash of st's last record.
func storeHead(st store.Store) (seq uint64, hash store.Hash, err error) {
	err = st.View(func(tx store.Tx) error {
		seq, hash = tx.Head()
		return nil
	})
	return seq, hash, err
}
