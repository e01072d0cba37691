package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/flowctl/flowctl/flow/store"
)

// reverseStore returns a store of n records over three streams and three
// projects (one of them ""), appended in batches of 1 to 7, so that a
// backend with an index kept apart for its last entries (eventlog's index
// tail) has records on both sides of it.
func (s *suite) reverseStore(t *testing.T, n int) (store.Store, []*store.Record) {
	st, _ := s.fresh(t)
	done := 0
	for batch := 0; done < n; batch++ {
		stream := []string{"s/a", "s/b", "s/c"}[batch%3]
		events := make([]store.Event, min(1+batch%7, n-done))
		for i := range events {
			done++
			events[i] = ev("t.a", fmt.Sprint("payload ", done))
			events[i].Project = []string{"p", "q", ""}[done%3]
		}
		appendOne(t, st, stream, store.Any, events...)
	}
	return st, all(t, st)
}

// readsBack returns the three reverse reads, of the range from..to, of
// stream down from version to, and of project down from seq to, with the
// records they must hand over, newest first.
func readsBack(recs []*store.Record, stream, project string, from, to uint64) []read {
	inRange := filter(recs, func(r *store.Record) bool { return r.Seq >= from && (to == 0 || r.Seq <= to) })
	ofStream := filter(recs, func(r *store.Record) bool { return r.Stream == stream && (to == 0 || r.Version <= to) })
	ofProject := filter(recs, func(r *store.Record) bool { return r.Project == project && (to == 0 || r.Seq <= to) })
	for _, l := range [][]*store.Record{inRange, ofStream, ofProject} {
		slices.Reverse(l)
	}
	rng := fmt.Sprintf("(%d, %d)", from, to)
	str := fmt.Sprintf("(%s, %d)", stream, to)
	prj := fmt.Sprintf("(%s, %d)", project, to)
	return []read{
		{"ReadRangeBack" + rng, false, func(tx store.Tx, f visit) error { return tx.ReadRangeBack(from, to, f) }, inRange},
		{"ReadStreamBack" + str, false, func(tx store.Tx, f visit) error { return tx.ReadStreamBack(stream, to, f) }, ofStream},
		{"ReadProjectBack" + prj, false, func(tx store.Tx, f visit) error { return tx.ReadProjectBack(project, to, f) }, ofProject},
	}
}

func (s *suite) testReverse(t *testing.T) {
	for _, n := range []int{30, 500} {
		st, recs := s.reverseStore(t, n)
		t.Run(fmt.Sprintf("Bounds%d", n), func(t *testing.T) {
			last := uint64(n)
			for _, b := range [][2]uint64{{0, 0}, {1, 0}, {5, 9}, {9, 9}, {5, 0}, {29, 100}, {last - 3, last + 70}, {last, last}, {last + 1, 0}, {9, 5}, {0, last - 70}, {0, 64}, {0, 65}} {
				for _, stream := range []string{"s/a", "s/c", "s/none"} {
					for _, project := range []string{"p", "q", "none"} {
						for _, c := range readsBack(recs, stream, project, b[0], b[1]) {
							checkRead(t, st, c)
						}
					}
				}
			}
		})
		t.Run(fmt.Sprintf("ErrStop%d", n), func(t *testing.T) {
			for _, c := range readsBack(recs, "s/b", "q", 0, 0) {
				calls := 0
				var got []uint64
				err := st.View(func(tx store.Tx) error {
					return c.fn(tx, func(r *store.Record) error {
						got = append(got, r.Seq)
						if calls++; calls == 3 {
							return store.ErrStop
						}
						return nil
					})
				})
				if err != nil || !slices.Equal(got, seqs(c.want[:3])) {
					t.Errorf("%s stopped at the third record: %v after seqs %v; want nil after %v", c.name, err, got, seqs(c.want[:3]))
				}
			}
		})
		t.Run(fmt.Sprintf("Error%d", n), func(t *testing.T) {
			for _, c := range readsBack(recs, "s/b", "q", 0, 0) {
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
}
