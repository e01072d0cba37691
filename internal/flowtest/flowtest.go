// Package flowtest has the test helpers of the packages built on the
// engine's exported API (digest, legacy): an engine on a new file with a
// predictable clock, checked when the test ends, and its events.
package flowtest

import (
	"path/filepath"
	"testing"
	"time"

	_ "github.com/flowctl/flowctl/eventlog" // the bbolt backend flow.Open finds by the path
	"github.com/flowctl/flowctl/flow"
	_ "github.com/flowctl/flowctl/pgstore" // the PostgreSQL backend, for a postgres:// URL
)

// Open opens a new engine under tb.TempDir() with actor "tester", session
// "s1" and Clock, and on cleanup checks that the whole file verifies
// before closing it.
func Open(tb testing.TB) *flow.Engine {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), flow.DefaultDir, flow.DefaultFile)
	e, err := flow.Open(path, flow.Options{Create: true, NoSync: true, Actor: "tester", Session: "s1", Now: Clock()})
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

// Clock returns a clock that starts at a fixed time and ticks one second
// per call, so event times are distinct and predictable.
func Clock() func() time.Time {
	t := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	return func() time.Time {
		t = t.Add(time.Second)
		return t
	}
}

// Events returns the events f selects.
func Events(tb testing.TB, e *flow.Engine, f flow.Filter) []flow.Event {
	tb.Helper()
	var out []flow.Event
	if err := e.Events(f, func(ev flow.Event) error { out = append(out, ev); return nil }); err != nil {
		tb.Fatalf("Events(%+v): %v", f, err)
	}
	return out
}

// Seqs returns the seqs of events, in order.
func Seqs(events []flow.Event) []uint64 {
	out := make([]uint64, len(events))
	for i, ev := range events {
		out[i] = ev.Seq
	}
	return out
}
