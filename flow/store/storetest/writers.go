package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/flowctl/flowctl/flow/store"
)

// A writer is one of the concurrent writers of the Goroutines and
// Processes tests. Each round it appends to its own stream (Exact) and
// to "all" (Any) in one Update, to "shared" by reading the version in one
// transaction and appending Exact in the next, again after a conflict,
// and every fourth round it runs an Update that fails.
type writer struct {
	name    string // its stream is "own/"+name
	version uint64 // its stream's version
	// with runs fn with the store: a shared one, or one opened for the
	// call and closed after it.
	with func(fn func(store.Store) error) error
	// The writer reports each acknowledged append, each conflict and
	// the ids of each failed Update.
	ack      func(id store.ID, seq uint64)
	conflict func(expected, actual uint64)
	lost     func(id store.ID)
}

func (w *writer) run(rounds int) error {
	for i := range rounds {
		if err := w.round(i); err != nil {
			return fmt.Errorf("writer %s, round %d: %w", w.name, i, err)
		}
	}
	return nil
}

func (w *writer) round(i int) error {
	own, every := ev("w.own", fmt.Sprintf("%s/%d", w.name, i)), ev("w.all", w.name)
	var a, b store.Appended
	err := w.with(func(st store.Store) error {
		return st.Update(func(tx store.Tx) (err error) {
			if a, err = tx.Append("own/"+w.name, store.Exact(w.version), own); err != nil {
				return err
			}
			if b, err = tx.Append("all", store.Any, every); err != nil {
				return err
			}
			return tx.Put("workers", []byte(w.name), fmt.Append(nil, i))
		})
	})
	if err != nil {
		return err
	}
	w.version = a.Version
	w.ack(own.ID, a.Seqs[0])
	w.ack(every.ID, b.Seqs[0])
	if err := w.shared(i); err != nil {
		return err
	}
	if i%4 == 3 {
		return w.fail()
	}
	return nil
}

// shared appends to "shared" with the version read in a transaction
// before, as a command that reads, decides and writes does. A conflict
// must be real: the stream moved on since the read.
func (w *writer) shared(i int) error {
	e := ev("w.shared", fmt.Sprintf("%s/%d", w.name, i))
	for range 10000 {
		var v uint64
		err := w.with(func(st store.Store) error {
			return st.View(func(tx store.Tx) error { v, _ = tx.StreamVersion("shared"); return nil })
		})
		if err != nil {
			return err
		}
		var got store.Appended
		err = w.with(func(st store.Store) error {
			return st.Update(func(tx store.Tx) (err error) { got, err = tx.Append("shared", store.Exact(v), e); return err })
		})
		var vc *store.VersionConflict
		switch {
		case err == nil:
			w.ack(e.ID, got.Seqs[0])
			return nil
		case !errors.As(err, &vc):
			return err
		case vc.Stream != "shared" || vc.Expected != v || vc.Actual <= v:
			return fmt.Errorf("a conflict that is none: read version %d, then %+v", v, *vc)
		}
		w.conflict(v, vc.Actual)
	}
	return errors.New("10000 conflicts in a row")
}

// fail runs an Update that appends and puts, then fails.
func (w *writer) fail() error {
	lost := []store.Event{ev("w.lost", w.name), ev("w.lost", w.name)}
	err := w.with(func(st store.Store) error {
		return st.Update(func(tx store.Tx) error {
			if _, err := tx.Append("own/"+w.name, store.Exact(w.version), lost[0]); err != nil {
				return err
			}
			if _, err := tx.Append("all", store.Any, lost[1]); err != nil {
				return err
			}
			if err := tx.Put("workers", []byte(w.name), []byte("lost")); err != nil {
				return err
			}
			return errFail
		})
	})
	if !errors.Is(err, errFail) {
		return fmt.Errorf("a failing Update returned %v, want fn's error", err)
	}
	w.lost(lost[0].ID)
	w.lost(lost[1].ID)
	return nil
}

// tally collects what writers report; it is safe for concurrent use.
type tally struct {
	mu        sync.Mutex
	acked     map[store.ID]uint64
	lost      []store.ID
	conflicts int
	dups      []store.ID // ids acknowledged twice
}

func newTally() *tally { return &tally{acked: map[store.ID]uint64{}} }

func (y *tally) writer(name string, with func(fn func(store.Store) error) error) *writer {
	return &writer{name: name, with: with, ack: y.ack, conflict: y.conflict, lost: y.lose}
}

func (y *tally) ack(id store.ID, seq uint64) {
	y.mu.Lock()
	defer y.mu.Unlock()
	if _, ok := y.acked[id]; ok {
		y.dups = append(y.dups, id)
	}
	y.acked[id] = seq
}

func (y *tally) conflict(_, _ uint64) {
	y.mu.Lock()
	defer y.mu.Unlock()
	y.conflicts++
}

func (y *tally) lose(id store.ID) {
	y.mu.Lock()
	defer y.mu.Unlock()
	y.lost = append(y.lost, id)
}

// check fails t unless st holds exactly what the writers named names
// acknowledged in rounds each: seqs gap-free, the chain whole, every
// stream's versions contiguous, each writer's events in its order, and
// nothing of a failed Update.
func (y *tally) check(t *testing.T, st store.Store, names []string, rounds int) {
	t.Helper()
	n := uint64(3 * len(names) * rounds)
	recs := all(t, st)
	if got := seqs(recs); !slices.Equal(got, span(1, n)) {
		t.Fatalf("%d records, seqs %v; want 1..%d", len(got), got, n)
	}
	if len(y.acked) != int(n) || len(y.dups) != 0 {
		t.Errorf("%d appends acknowledged (ids twice: %v), want %d", len(y.acked), y.dups, n)
	}
	var prev store.Hash
	for _, r := range recs {
		if seq, ok := y.acked[r.ID]; !ok || seq != r.Seq {
			t.Errorf("seq %d holds %s, acknowledged at %d (%v)", r.Seq, r.ID, seq, ok)
		}
		if r.Prev != prev {
			t.Errorf("seq %d: prev %x, want %x", r.Seq, r.Prev, prev)
		}
		prev = r.Hash
	}
	view(t, st, func(tx store.Tx) error {
		for _, id := range y.lost {
			if seq := tx.SeqOf(id); seq != 0 {
				t.Errorf("%s of a failed Update is at seq %d", id, seq)
			}
		}
		for _, name := range names {
			if v, err := tx.Get("workers", []byte(name)); err != nil || string(v) != fmt.Sprint(rounds-1) {
				t.Errorf("workers/%s = %q, %v; want %d", name, v, err, rounds-1)
			}
		}
		return nil
	})
	for _, name := range names {
		checkStream(t, st, "own/"+name, rounds, name)
	}
	checkStream(t, st, "all", len(names)*rounds, "")
	checkStream(t, st, "shared", len(names)*rounds, "")
	switches := 0 // how often consecutive records come from different writers
	for i := 1; i < len(recs); i++ {
		if writerOf(recs[i]) != writerOf(recs[i-1]) {
			switches++
		}
	}
	t.Logf("%d writers, %d records, %d conflicts on the shared stream, writers interleaved %d times",
		len(names), n, y.conflicts, switches)
}

// checkStream fails t unless stream holds versions 1..n; with name, the
// data of version v is name/v-1.
func checkStream(t *testing.T, st store.Store, stream string, n int, name string) {
	t.Helper()
	recs := collect(t, st, func(tx store.Tx, fn func(*store.Record) error) error { return tx.ReadStream(stream, 0, fn) })
	if len(recs) != n {
		t.Errorf("stream %s has %d records, want %d", stream, len(recs), n)
	}
	for i, r := range recs {
		if r.Version != uint64(i+1) || (name != "" && string(r.Data) != fmt.Sprintf("%s/%d", name, i)) {
			t.Errorf("stream %s: seq %d is version %d with %q, want version %d", stream, r.Seq, r.Version, r.Data, i+1)
			return
		}
	}
}

func (s *suite) testGoroutines(t *testing.T) {
	const workers, rounds = 8, 16
	st, _ := s.fresh(t)
	y := newTally()
	names := make([]string, workers)
	errs := make(chan error, workers)
	for i := range names {
		names[i] = fmt.Sprint("g", i)
		w := y.writer(names[i], func(fn func(store.Store) error) error { return fn(st) })
		go func() { errs <- w.run(rounds) }()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if !t.Failed() {
		y.check(t, st, names, rounds)
	}
}

// writerOf returns the name of the writer that appended r.
func writerOf(r *store.Record) string {
	name, _, _ := strings.Cut(string(r.Data), "/")
	return name
}
