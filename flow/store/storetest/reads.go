package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/flowctl/flowctl/flow/store"
)

// readsStore returns a store of 30 records over three streams and three
// projects (one of them ""), appended in batches of 1 to 4.
func (s *suite) readsStore(t *testing.T) (store.Store, []*store.Record) {
	st, _ := s.fresh(t)
	n := 0
	for batch := 0; n < 30; batch++ {
		stream := []string{"s/a", "s/b", "s/c"}[batch%3]
		events := make([]store.Event, min(1+batch%4, 30-n))
		for i := range events {
			n++
			events[i] = ev("t.a", fmt.Sprint("payload ", n))
			events[i].Project = []string{"p", "q", ""}[n%3]
		}
		appendOne(t, st, stream, store.Any, events...)
	}
	return st, all(t, st)
}

// A read is one of Tx's six reads, bound to its arguments, and the
// records it must hand over.
type read struct {
	name string
	lent bool // Replay*: the record is lent, valid only during fn
	fn   func(tx store.Tx, fn visit) error
	want []*store.Record
}

// visit is the callback of a read.
type visit = func(*store.Record) error

// reads returns the six reads, of the range from..to, of stream from
// version from, and of project from seq from, with their records out of
// recs.
func reads(recs []*store.Record, stream, project string, from, to uint64) []read {
	inRange := filter(recs, func(r *store.Record) bool { return r.Seq >= from && (to == 0 || r.Seq <= to) })
	ofStream := filter(recs, func(r *store.Record) bool { return r.Stream == stream && r.Version >= from })
	ofProject := filter(recs, func(r *store.Record) bool { return r.Project == project && r.Seq >= from })
	rng := fmt.Sprintf("(%d, %d)", from, to)
	str := fmt.Sprintf("(%s, %d)", stream, from)
	prj := fmt.Sprintf("(%s, %d)", project, from)
	return []read{
		{"ReadRange" + rng, false, func(tx store.Tx, f visit) error { return tx.ReadRange(from, to, f) }, inRange},
		{"Replay" + rng, true, func(tx store.Tx, f visit) error { return tx.Replay(from, to, f) }, inRange},
		{"ReadStream" + str, false, func(tx store.Tx, f visit) error { return tx.ReadStream(stream, from, f) }, ofStream},
		{"ReplayStream" + str, true, func(tx store.Tx, f visit) error { return tx.ReplayStream(stream, from, f) }, ofStream},
		{"ReadProject" + prj, false, func(tx store.Tx, f visit) error { return tx.ReadProject(project, from, f) }, ofProject},
		{"ReplayProject" + prj, true, func(tx store.Tx, f visit) error { return tx.ReplayProject(project, from, f) }, ofProject},
	}
}

func filter(recs []*store.Record, keep func(*store.Record) bool) []*store.Record {
	var out []*store.Record
	for _, r := range recs {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

func (s *suite) testReads(t *testing.T) {
	st, recs := s.readsStore(t)
	t.Run("Record", func(t *testing.T) {
		view(t, st, func(tx store.Tx) error {
			for _, want := range recs {
				got, err := tx.Record(want.Seq)
				if err != nil {
					return err
				}
				if d := diff(got, want); d != "" {
					t.Errorf("Record(%d) differs from ReadRange's: %s", want.Seq, d)
				}
			}
			return nil
		})
	})
	t.Run("Bounds", func(t *testing.T) {
		for _, b := range [][2]uint64{{0, 0}, {1, 0}, {5, 9}, {9, 9}, {5, 0}, {29, 100}, {30, 30}, {31, 0}, {9, 5}} {
			for _, stream := range []string{"s/a", "s/c", "s/none"} {
				// Events without a project are in no project's reads
				// the suite checks: the engine gives every event one.
				for _, project := range []string{"p", "q", "none"} {
					for _, c := range reads(recs, stream, project, b[0], b[1]) {
						checkRead(t, st, c)
					}
				}
			}
		}
	})
	t.Run("ErrStop", func(t *testing.T) {
		for _, c := range reads(recs, "s/b", "q", 0, 0) {
			calls := 0
			err := st.View(func(tx store.Tx) error {
				return c.fn(tx, func(*store.Record) error {
					if calls++; calls == 3 {
						return store.ErrStop
					}
					return nil
				})
			})
			if err != nil || calls != 3 {
				t.Errorf("%s stopped at the third record: %v after %d calls; want nil after 3", c.name, err, calls)
			}
		}
	})
	t.Run("Error", func(t *testing.T) {
		for _, c := range reads(recs, "s/b", "q", 0, 0) {
			calls := 0
			err := st.View(func(tx store.Tx) error {
				return c.fn(tx, func(*store.Record) error {
					calls++
					return errFail
				})
			})
			if !errors.Is(err, errFail) || calls != 1 {
				t.Errorf("%s with a failing fn: %v after %d calls; want fn's error after 1", c.name, err, calls)
			}
		}
	})
}

// checkRead fails t unless r hands fn want, in order. A lent record is
// checked inside fn, and ReadRange's records after the View has ended.
func checkRead(t *testing.T, st store.Store, r read) {
	t.Helper()
	want := r.want
	var got []*store.Record
	view(t, st, func(tx store.Tx) error {
		return r.fn(tx, func(rec *store.Record) error {
			if i := len(got); i < len(want) {
				if d := diff(rec, want[i]); d != "" {
					t.Errorf("%s, record %d inside fn: %s", r.name, i, d)
				}
			}
			if r.lent {
				rec = clone(rec)
			}
			got = append(got, rec)
			return nil
		})
	})
	if !slices.Equal(seqs(got), seqs(want)) {
		t.Errorf("%s = seqs %v, want %v", r.name, seqs(got), seqs(want))
		return
	}
	for i := range want {
		if d := diff(got[i], want[i]); d != "" {
			t.Errorf("%s, record %d kept: %s", r.name, i, d)
		}
	}
}
