package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow/store"
)

// Follow (package flow, flowctl watch) polls: each poll reads Head and
// then ReadRange from the first seq it has not delivered up to that head,
// in a read transaction of a store it opens read-only for the poll and
// closes after it, a locked store (ErrBusy) being tried again at the next
// poll. It relies on a reader seeing every commit that ended before its
// transaction began, in seq order, never a part of one.

// poll reads the records from next to the head of st in one View.
func poll(st store.Store, next uint64) ([]*store.Record, error) {
	var out []*store.Record
	err := st.View(func(tx store.Tx) error {
		h, _ := tx.Head()
		if h < next {
			return nil
		}
		return tx.ReadRange(next, h, func(r *store.Record) error {
			out = append(out, r)
			return nil
		})
	})
	return out, err
}

// follow calls poll until it has handed over n records, or fails t
// after a minute. It fails t unless they come in seq order from 1, each
// once.
func follow(t *testing.T, n int, poll func(next uint64) ([]*store.Record, error)) []*store.Record {
	t.Helper()
	var got []*store.Record
	polls := 0
	for deadline := time.Now().Add(time.Minute); len(got) < n; polls++ {
		if time.Now().After(deadline) {
			t.Fatalf("after a minute, %d of %d records followed", len(got), n)
		}
		recs, err := poll(uint64(len(got)) + 1)
		if err != nil && !errors.Is(err, store.ErrBusy) {
			t.Fatalf("poll: %v", err)
		}
		got = append(got, recs...)
		if !slices.Equal(seqs(got), span(1, uint64(len(got)))) {
			t.Fatalf("followed seqs %v, want 1..%d in order", seqs(got), len(got))
		}
		time.Sleep(time.Millisecond)
	}
	t.Logf("%d records followed in %d polls", len(got), polls)
	return got
}

func (s *suite) testFollow(t *testing.T) {
	t.Run("SameStore", func(t *testing.T) {
		const n = 60
		st, _ := s.fresh(t)
		done := make(chan error, 1)
		go func() {
			for i := range n {
				e := ev("t.a", fmt.Sprint(i))
				if _, err := tryAppend(st, fmt.Sprint("s/", i%3), store.Any, e); err != nil {
					done <- err
					return
				}
				time.Sleep(100 * time.Microsecond)
			}
			done <- nil
		}()
		got := follow(t, n, func(next uint64) ([]*store.Record, error) { return poll(st, next) })
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		sameRecords(t, got, all(t, st))
	})
	t.Run("Reopen", s.testFollowReopen)
	t.Run("Isolation", s.testIsolation)
}

// testFollowReopen follows as flowctl watch does, a store opened for each
// poll, while two writers append as commands do, a store opened for each
// append.
func (s *suite) testFollowReopen(t *testing.T) {
	const writers, each = 2, 15
	st, dsn := s.fresh(t)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, writers)
	for w := range writers {
		go func() {
			for i := range each {
				st, err := s.b.Driver.Open(dsn, s.options(false, nil))
				if err != nil {
					done <- err
					return
				}
				_, err = tryAppend(st, fmt.Sprint("w/", w), store.Exact(uint64(i)), ev("t.a", fmt.Sprint(i)))
				if cerr := st.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	o := s.options(true, nil)
	o.Timeout = 20 * time.Millisecond
	got := follow(t, writers*each, func(next uint64) ([]*store.Record, error) {
		st, err := s.b.Driver.Open(dsn, o)
		if err != nil {
			return nil, err
		}
		defer st.Close()
		return poll(st, next)
	})
	for range writers {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	sameRecords(t, got, all(t, s.open(t, dsn, true)))
}

// testIsolation checks that a read transaction sees none of a commit
// that ends while it runs. A backend may hold the commit until the read
// ends (bbolt does when the commit grows its map); the read then waits a
// while and checks that it still sees what it saw.
func (s *suite) testIsolation(t *testing.T) {
	st, _ := s.fresh(t)
	appendOne(t, st, "s", store.Any, ev("t.a", "before"))
	done := make(chan error, 1)
	view(t, st, func(tx store.Tx) error {
		h0, _ := tx.Head()
		go func() {
			_, err := tryAppend(st, "s", store.Any, ev("t.a", "during"))
			done <- err
		}()
		select {
		case err := <-done:
			done <- err
		case <-time.After(200 * time.Millisecond):
		}
		h1, _ := tx.Head()
		v, _ := tx.StreamVersion("s")
		n := 0
		err := tx.ReadRange(1, 0, func(*store.Record) error { n++; return nil })
		if h0 != 1 || h1 != 1 || v != 1 || n != 1 || err != nil {
			t.Errorf("a View saw a commit that ended while it ran: head %d then %d, version %d, %d records (%v)", h0, h1, v, n, err)
		}
		return nil
	})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if h, _ := head(t, st); h != 2 {
		t.Errorf("head after the View %d, want 2", h)
	}
}
