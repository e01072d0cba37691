package snapstore

import (
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/snapshot"
)

// Remake re-makes every stored snapshot of another fold version than
// this binary's (one an older flowctl made: every read skips it, and
// folds from an older snapshot or the log's start): same scope, same
// seq, the state a replay of the project's events gives there, stored as
// Put stores snapshots (a delta on the snapshot before it when the
// policy allows, else a full one, and the status summary beside it). A
// project's snapshots are re-made in seq order in one replay of its
// events, so each delta is made on the one re-made before it. A snapshot
// whose header does not frame is left as it is (damage, which verify
// reports), and so is one of a project that did not exist at its seq. It
// returns how many it re-made.
func Remake(tx store.Tx) (int, error) {
	stale := map[string][]uint64{}
	err := tx.Scan(Bucket, nil, func(k, v []byte) error {
		scope, seq, ok := ParseKey(k)
		if !ok {
			return nil
		}
		if h, err := snapshot.Frame(v); err == nil && h.ProjectionVersion != projection.Version {
			stale[scope] = append(stale[scope], seq)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	n := 0
	cache := &Cache{} // fingerprints of the snapshot re-made last
	for _, scope := range slices.Sorted(maps.Keys(stale)) {
		seqs := stale[scope] // ascending: the bucket's key order
		err := ReplayProject(tx, scope, seqs, func(i int, mem *projection.Memory) error {
			ok, err := remakeAt(tx, scope, seqs[i], mem, cache)
			if ok {
				n++
			}
			return err
		})
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// remakeAt stores the snapshot of project's state mem at seq, and its
// status summary; ok is false when the project did not exist there.
func remakeAt(tx store.Tx, project string, seq uint64, mem *projection.Memory, cache *Cache) (bool, error) {
	state := Normalize(mem.Scope(project))
	if state.Project == nil {
		return false, nil
	}
	hash, ok, err := ChainHashAt(tx, seq)
	if err != nil || !ok {
		return false, err
	}
	cur := rawOf(state)
	cur.trusted = true
	if _, _, err := putRawAt(tx, project, seq, hash, cur, cache); err != nil {
		return false, err
	}
	idx, err := newMemSummary(mem, state)
	if err != nil {
		return false, err
	}
	return true, putSummaryAt(tx, idx, project, cur.project.b, seq, hash)
}

// memSummary is the status index of one project's state in memory, each
// bucket's entries listed once (projstore.Mem lists them again, and sorts
// them, for every query).
type memSummary struct {
	entries map[string][]projstore.IndexEntry
	tasks   []*projection.Task
}

func newMemSummary(mem *projection.Memory, state *projection.Scope) (*memSummary, error) {
	m := &memSummary{entries: map[string][]projstore.IndexEntry{}, tasks: state.Tasks}
	for _, b := range summaryBuckets {
		l, err := projstore.Mem{Memory: mem}.Summaries(b, state.Project.Name)
		if err != nil {
			return nil, err
		}
		m.entries[b] = l
	}
	return m, nil
}

func (m *memSummary) SummaryCounts(bucket, _ string) (map[string]int, error) {
	out := map[string]int{}
	for _, e := range m.entries[bucket] {
		out[e.Status]++
	}
	return out, nil
}

func (m *memSummary) SummaryIDs(bucket, _, status string) ([]string, error) {
	var out []string
	for _, e := range m.entries[bucket] {
		if e.Status == status {
			out = append(out, e.ID)
		}
	}
	return projstore.SortIDs(out), nil
}

func (m *memSummary) ClaimedTaskIDs(_ string, now time.Time) ([]string, error) {
	var out []string
	for _, t := range m.tasks {
		if t.Claim.Live(now) {
			out = append(out, t.ID)
		}
	}
	return projstore.SortIDs(out), nil
}

// version is the fold version Put stamps on what it stores: this
// binary's, but for tests (SetWriteVersion).
var version atomic.Uint32

func init() { version.Store(projection.Version) }

func writeVersion() uint32 { return version.Load() }

// SetWriteVersion makes Put stamp the snapshots and summaries it stores
// with fold version v, as a flowctl of that version would, and returns
// the version it replaces: a hook for tests of files an older flowctl
// wrote (Remake).
func SetWriteVersion(v uint32) (old uint32) { return version.Swap(v) }
