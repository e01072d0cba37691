package history

import (
	"time"

	"github.com/flowctl/flowctl/flow/store"
)

// SeqAtTime finds the last event at or before t by binary search over
// seqs 1..head, taking event times as ordered by seq (they are written by
// one clock per machine, and a commit orders them). It returns 0 when
// every event is after t: the empty state.
func SeqAtTime(tx store.Tx, head uint64, t time.Time) (uint64, error) {
	lo, hi := uint64(0), head // invariant: time(lo) <= t (lo 0: before everything), time(hi+1) > t
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		r, err := tx.Record(mid)
		if err != nil {
			return 0, err
		}
		if r.Time.After(t) {
			hi = mid - 1
		} else {
			lo = mid
		}
	}
	return lo, nil // 0: before the first event, the empty state
}
