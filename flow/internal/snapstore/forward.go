package snapstore

import (
	"encoding/binary"
	"maps"
	"slices"
	"sync/atomic"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/snapshot"
)

// FoldForward folds into mem, a state at seq from, the events of project
// up to seq to, without changing an entity mem held before: the fold
// changes copies, which take the place of the entities they copy. So a
// Scope taken of mem before (its lists of entities) still is the state
// at from, and shares with the state at to every entity no event
// changed: two states at once cost one, plus what changed between them.
// It returns how many events it folded.
func FoldForward(tx store.Tx, mem *projection.Memory, project string, from, to uint64) (int, error) {
	return FoldTo(tx, &copies{mem: mem, own: map[any]bool{}}, project, from, to)
}

// copies is a projection.Store on a Memory that hands the fold a copy of
// each entity the first time it reads it, and puts the copy in its place:
// the fold changes only entities of its own (own), never one the Memory
// held before. The fold puts back every entity it changes in a store
// that is not a Memory (projection's TestApply_MemoryMatchesCopyingStore
// proves it), so the copies are what it changes.
type copies struct {
	mem *projection.Memory
	own map[any]bool // the entities made or copied since the fold began
}

var _ projection.Store = (*copies)(nil)

// copyOf returns v for the fold to change: v itself when it is the
// fold's own, else a copy (clone) put in v's place (put) and owned.
func copyOf[V any](c *copies, v *V, clone func(*V) *V, put func(*V) error) (*V, error) {
	if v == nil || c.own[v] {
		return v, nil
	}
	v = clone(v)
	c.own[v] = true
	return v, put(v)
}

// shallow copies an entity whose fold replaces its slices rather than
// changing them in place (plans, approvals, exec records, checkpoints).
func shallow[V any](v *V) *V {
	c := *v
	return &c
}

func (c *copies) Project(name string) (*projection.Project, error) {
	p, _ := c.mem.Project(name)
	return copyOf(c, p, (*projection.Project).Clone, c.PutProject)
}

func (c *copies) Plan(project, id string) (*projection.Plan, error) {
	v, _ := c.mem.Plan(project, id)
	return copyOf(c, v, shallow, c.PutPlan)
}

func (c *copies) Task(project, id string) (*projection.Task, error) {
	v, _ := c.mem.Task(project, id)
	return copyOf(c, v, (*projection.Task).Clone, c.PutTask)
}

func (c *copies) Approval(project, id string) (*projection.Approval, error) {
	v, _ := c.mem.Approval(project, id)
	return copyOf(c, v, shallow, c.PutApproval)
}

func (c *copies) Exec(project, id string) (*projection.Exec, error) {
	v, _ := c.mem.Exec(project, id)
	return copyOf(c, v, shallow, c.PutExec)
}

func (c *copies) Checkpoint(project, id string) (*projection.Checkpoint, error) {
	v, _ := c.mem.Checkpoint(project, id)
	return copyOf(c, v, shallow, c.PutCheckpoint)
}

// The puts own what they put: an entity the fold made, or one it had.

func (c *copies) PutProject(v *projection.Project) error { c.own[v] = true; return c.mem.PutProject(v) }
func (c *copies) PutPlan(v *projection.Plan) error       { c.own[v] = true; return c.mem.PutPlan(v) }
func (c *copies) PutTask(v *projection.Task) error       { c.own[v] = true; return c.mem.PutTask(v) }
func (c *copies) PutApproval(v *projection.Approval) error {
	c.own[v] = true
	return c.mem.PutApproval(v)
}
func (c *copies) PutExec(v *projection.Exec) error { c.own[v] = true; return c.mem.PutExec(v) }
func (c *copies) PutCheckpoint(v *projection.Checkpoint) error {
	c.own[v] = true
	return c.mem.PutCheckpoint(v)
}
func (c *copies) Delete(kind, project, id string) error { return c.mem.Delete(kind, project, id) }

// ScopesAt returns project's state at each of seqs (in ascending order),
// the states sharing every entity that did not change between them. The
// first is read as StateAt reads it: the nearest good snapshot and the
// events after it. Each next one is folded on from the one before
// (FoldForward), unless a stored snapshot lies past the last state by
// more than MaxSnapshotGap seqs on the delta chain of the snapshot the
// states started from: then the deltas up to it are applied to that
// snapshot's state (each read as Resolve reads it) and the events after
// it folded, so that a far point costs what its chain's deltas cost,
// not every event in between. Entities the deltas do not change stay
// shared with the states before. When no such chain reaches the newest
// snapshot at or below the next seq, and that snapshot lies past the last
// state, with more than MaxSnapshotGap seqs from the last state to the
// next seq, the next state is read afresh as StateAt reads it (sharing
// nothing with the states before): so no state folds more than about
// MaxSnapshotGap seqs of events, wherever full snapshots cut the chains.
func ScopesAt(tx store.Tx, project string, seqs []uint64, warn func(format string, args ...any)) ([]*projection.Scope, error) {
	return scopesAt(tx, project, seqs, warn, (*projection.Memory).Scope)
}

// ListsAt is ScopesAt with each state's lists in no particular order:
// for a caller that matches entities by id itself (digest.Diff), which
// so does not pay for sorting every entity of every state by id. The
// states are the same states, sharing the same entities.
func ListsAt(tx store.Tx, project string, seqs []uint64, warn func(format string, args ...any)) ([]*projection.Scope, error) {
	return scopesAt(tx, project, seqs, warn, unorderedScope)
}

// scopesAt is ScopesAt with list taking each state's Scope. The Scope of
// the snapshot a state started from (which jump applies deltas to, so in
// id order) is taken only when a jump needs it: FoldForward changes none
// of the snapshot's entities, so the Memory's lists of them are taken
// before the fold (base) only as a map copy, cheap next to a sort.
func scopesAt(tx store.Tx, project string, seqs []uint64, warn func(format string, args ...any), list func(*projection.Memory, string) *projection.Scope) ([]*projection.Scope, error) {
	out := make([]*projection.Scope, len(seqs))
	if len(seqs) == 0 {
		return out, nil
	}
	mem, from, err := Nearest(tx, project, seqs[0], warn)
	if err != nil {
		return nil, err
	}
	base := lazyBase(mem, project) // the snapshot's state: FoldForward changes none of its entities
	at := from
	for i, seq := range seqs {
		near, hasNear := newestAt(tx, project, seq)
		far := hasNear && near > at && seq-at > jumpAfter()
		if to, st, ok := jump(tx, project, from, base, at, seq, far); ok {
			mem = projection.NewMemory()
			mem.Load(st)
			base, from, at = lazyBase(mem, project), to, to
		}
		if far && near > at {
			// no chain from the state before leads near seq: read it as
			// StateAt does, sharing nothing, rather than fold every event
			if mem, from, err = Nearest(tx, project, seq, warn); err != nil {
				return nil, err
			}
			base, at = lazyBase(mem, project), from
		}
		if seq > at {
			if _, err := FoldForward(tx, mem, project, at, seq); err != nil {
				return nil, err
			}
			at = seq
		}
		out[i] = list(mem, project)
	}
	return out, nil
}

// lazyBase returns the Scope, in id order, of mem's state as it is now,
// taken the first time it is asked for: mem's maps are copied now (the
// fold replaces their entries, never changes an entity they hold), and
// sorted only then.
func lazyBase(mem *projection.Memory, project string) func() *projection.Scope {
	held := &projection.Memory{Projects: maps.Clone(mem.Projects), Plans: maps.Clone(mem.Plans), Tasks: maps.Clone(mem.Tasks),
		Approvals: maps.Clone(mem.Approvals), Execs: maps.Clone(mem.Execs), Checkpoints: maps.Clone(mem.Checkpoints)}
	var s *projection.Scope
	return func() *projection.Scope {
		if s == nil {
			s = held.Scope(project)
		}
		return s
	}
}

// unorderedScope is mem.Scope(project) with its lists in map order.
func unorderedScope(mem *projection.Memory, project string) *projection.Scope {
	return &projection.Scope{
		Project:     mem.Projects[project],
		Plans:       valuesOf(mem.Plans, project),
		Tasks:       valuesOf(mem.Tasks, project),
		Approvals:   valuesOf(mem.Approvals, project),
		Execs:       valuesOf(mem.Execs, project),
		Checkpoints: valuesOf(mem.Checkpoints, project),
	}
}

// valuesOf lists the entities of project in m (keyed project/id), in no
// order; never nil.
func valuesOf[V any](m map[string]*V, project string) []*V {
	out := make([]*V, 0, len(m))
	for k, v := range m {
		if len(k) > len(project) && k[len(project)] == '/' && k[:len(project)] == project {
			out = append(out, v)
		}
	}
	return out
}

// newestAt returns the seq of project's newest stored snapshot at or
// below seq, by its key alone (ok false when there is none).
func newestAt(tx store.Tx, project string, seq uint64) (uint64, bool) {
	prefix := Prefix(project)
	k, _, err := tx.Last(Bucket, prefix, Key(project, seq))
	if err != nil || k == nil || len(k) != len(prefix)+8 {
		return 0, false
	}
	return binary.BigEndian.Uint64(k[len(prefix):]), true
}

// jump returns the state of the newest snapshot of project at or below
// seq that a delta chain leads to from the snapshot at from (whose state
// is scope's), and its seq, when it is more than MaxSnapshotGap seqs past at:
// the chain's deltas applied to a copy of base's lists, every link
// checked as Resolve checks it. ok is false when there is none (or a
// check fails: the events answer then). With newestOnly, only the newest
// snapshot at or below seq will do (else the caller reads it afresh).
// The state scope returns is not changed.
func jump(tx store.Tx, project string, from uint64, scope func() *projection.Scope, at, seq uint64, newestOnly bool) (uint64, *projection.Scope, bool) {
	if from == 0 {
		return 0, nil, false
	}
	prefix := Prefix(project)
	for max := seq; ; {
		k, v, err := tx.Last(Bucket, prefix, Key(project, max))
		if err != nil || k == nil || len(k) != len(prefix)+8 {
			return 0, nil, false
		}
		top := binary.BigEndian.Uint64(k[len(prefix):])
		if top <= at || top-at <= jumpAfter() {
			return 0, nil, false
		}
		chain, other, ok := chainFrom(tx, project, from, top, v)
		if ok {
			base := scope()
			st := &projection.Scope{Project: base.Project, Plans: slices.Clone(base.Plans), Tasks: slices.Clone(base.Tasks),
				Approvals: slices.Clone(base.Approvals), Execs: slices.Clone(base.Execs), Checkpoints: slices.Clone(base.Checkpoints)}
			for i := len(chain) - 1; i >= 0; i-- {
				_, d, err := snapshot.DecodeDelta(chain[i])
				if err != nil {
					return 0, nil, false
				}
				d.Apply(st)
			}
			return top, st, true
		}
		if other <= from || newestOnly { // not a chain from the snapshot at from
			return 0, nil, false
		}
		max = other - 1 // top's chain starts at a full snapshot after from: try the snapshot before it
	}
}

// chainFrom returns the deltas (top first) that lead from the snapshot
// at from to the one at top (stored as v), each checked (framing, CRC,
// CheckHeader, the state hash its delta above is made on). When top's
// chain does not pass through from, ok is false and other is the seq of
// the full snapshot it starts at (0 when a check failed).
func chainFrom(tx store.Tx, project string, from, top uint64, v []byte) (chain [][]byte, other uint64, ok bool) {
	var want [32]byte // the state hash the delta above is made on
	for cur := top; ; {
		h, err := snapshot.Frame(v)
		if err != nil || CheckHeader(tx, h, project, cur) != nil || len(chain) > maxChainRead {
			return nil, 0, false
		}
		if len(chain) > 0 && h.StateHash != want {
			return nil, 0, false
		}
		switch {
		case cur == from:
			return chain, 0, true
		case !h.IsDelta():
			return nil, cur, false
		case h.BaseSeq < from:
			return nil, 0, false
		}
		chain, want, cur = append(chain, v), h.BaseHash, h.BaseSeq
		if v, err = tx.Get(Bucket, Key(project, cur)); err != nil || v == nil {
			return nil, 0, false
		}
	}
}

// jumpGap, when not 0, replaces MaxSnapshotGap as the distance past which
// ScopesAt resolves a later state through deltas (SetJumpGap).
var jumpGap atomic.Uint64

func jumpAfter() uint64 {
	if g := jumpGap.Load(); g != 0 {
		return g
	}
	return MaxSnapshotGap
}

// SetJumpGap sets the seqs past which ScopesAt resolves a later state
// through deltas rather than folding the events (0: MaxSnapshotGap) and
// returns the setting it replaces: for tests, whose histories are short.
func SetJumpGap(n uint64) (old uint64) { return jumpGap.Swap(n) }
