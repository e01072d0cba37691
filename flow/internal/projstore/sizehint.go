package projstore

import (
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// maxHint bounds each count of a sizeHint: a damaged or forged counter
// must not make a replay reserve the machine's memory.
const maxHint = 1 << 24

// sizeHint is the size of the state a replay of the whole log makes as
// the stored projections last knew it: how many projects they hold and
// their Counters summed (the ids each project gave out, at least its
// entities). It is a hint for the replay's maps (NewMemorySized) and
// nothing else: stale, missing or unreadable projections give a smaller
// one, or none.
func sizeHint(tx store.Tx) (projects int, n projection.Counters) {
	s := NewTx(tx)
	var names []string
	err := tx.Scan(BucketProjects, nil, func(k, _ []byte) error {
		names = append(names, string(k))
		return nil
	})
	if err != nil {
		return 0, n
	}
	for _, name := range names {
		p, err := s.Project(name)
		if err != nil || p == nil {
			continue
		}
		c := clampHint(p.Counters)
		n.Plans, n.Tasks, n.Approvals = n.Plans+c.Plans, n.Tasks+c.Tasks, n.Approvals+c.Approvals
		n.Execs, n.Checkpoints = n.Execs+c.Execs, n.Checkpoints+c.Checkpoints
	}
	return min(len(names), maxHint), clampHint(n)
}

// clampHint is n with each count within 0..maxHint.
func clampHint(n projection.Counters) projection.Counters {
	c := func(v int) int { return min(max(v, 0), maxHint) }
	return projection.Counters{Plans: c(n.Plans), Tasks: c(n.Tasks), Approvals: c(n.Approvals),
		Execs: c(n.Execs), Checkpoints: c(n.Checkpoints)}
}

// share is n divided among workers, rounded up, for a worker's state.
func share(n projection.Counters, workers int) projection.Counters {
	part := func(v int) int { return (v + workers - 1) / workers }
	return projection.Counters{Plans: part(n.Plans), Tasks: part(n.Tasks), Approvals: part(n.Approvals),
		Execs: part(n.Execs), Checkpoints: part(n.Checkpoints)}
}
