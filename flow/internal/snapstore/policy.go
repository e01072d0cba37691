package snapstore

import (
	"errors"
	"fmt"

	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/snapshot"
)

// BytesPerEvent is B, what automatic snapshots may cost on disk per
// event of a project, amortized, by the spacing of the first rule of
// Due: once a project's state is over FreeBytes, an automatic snapshot
// waits for at least one project event per B bytes of the state, up to
// MaxSnapshotGap events. Below MaxSnapshotGap*B bytes of state the
// snapshots (full or not) cost about B bytes per event; above it, they
// are deltas (Put) of about what the project's events change, and the
// full snapshots of the chains cost about as much again (see
// MaxChainBytes).
const BytesPerEvent = 64

// FreeBytes is the size up to which snapshots are cheap enough to take
// every K events, as a small K (FLOW_SNAPSHOT_EVERY) asks: at the
// default K, K*B is about this size, so the two rules meet there.
const FreeBytes = 64 << 10

// MaxSnapshotGap bounds the events of a project between two automatic
// snapshots, whatever the size of its state (unless K, which Due
// honours, asks for fewer snapshots): so a read of the whole state at a
// point folds at most max(K, MaxSnapshotGap) of the project's events
// after the nearest snapshot, a file written by this policy from its
// start, snapshots not turned off, none damaged (TailBound).
const MaxSnapshotGap = 10000

// TailBound is the most events of a project a read at a point folds
// after the nearest snapshot, with snapshots every K events (K > 0):
// see MaxSnapshotGap.
func TailBound(every uint64) uint64 { return max(every, MaxSnapshotGap) }

// MaxChainBytes is how many times the bytes of a chain's full snapshot
// its deltas may weigh together: past it, a full snapshot is written. A
// read decodes a full snapshot and its deltas, so at most about
// 1+MaxChainBytes times the bytes of one full snapshot (on a growing
// project, most of the deltas' bytes are entities the full one does not
// have: about the state read, not more). Full snapshots come once the
// changes since the last one weigh MaxChainBytes times it, so they cost,
// amortized, about 1/MaxChainBytes of what the deltas cost per event:
// snapshot bytes per event stay about constant as a project's state
// grows, where a chain of a fixed number of deltas (16, before) made
// them grow with the state.
const MaxChainBytes = 2

// MaxDeltaChain is the most delta snapshots between a snapshot and the
// full one it resolves from: past it, a full snapshot is written. It
// bounds the links a read follows when deltas are tiny; MaxChainBytes
// is what ends chains on a growing project.
const MaxDeltaChain = 256

// maxChainRead is the longest chain of deltas a read follows: longer
// than any this binary writes, so a longer one is damage.
const maxChainRead = 4 * MaxDeltaChain

// Due reports whether a project with events events is due an automatic
// snapshot: at least every (K) of them since its last snapshot and, when
// that one is over FreeBytes, at least one per BytesPerEvent bytes of it
// up to MaxSnapshotGap.
func Due(tx store.Tx, project string, events, every uint64) (bool, error) {
	m, _, err := readMark(tx, project) // none: as if one of nothing at event 0
	if err != nil {
		return false, err
	}
	return m.due(events, every), nil
}

// due is Due after mark m.
func (m mark) due(events, every uint64) bool {
	if events < m.events {
		return true // a mark of another history: due
	}
	need := every
	if m.bytes > FreeBytes {
		need = max(need, min(m.bytes/BytesPerEvent, MaxSnapshotGap))
	}
	return events-m.events >= need
}

// Marks remembers the marks its Due read in one write transaction, so
// that the commands of a batch read each project's mark once rather than
// once a command. A Put in that transaction must be told (Forget), as
// it moves the mark. The zero Marks is ready to use.
type Marks struct {
	m map[string]mark
}

// Due is the package's Due, from the project's mark read once.
func (ms *Marks) Due(tx store.Tx, project string, events, every uint64) (bool, error) {
	m, ok := ms.m[project]
	if !ok {
		var err error
		if m, _, err = readMark(tx, project); err != nil {
			return false, err
		}
		if ms.m == nil {
			ms.m = map[string]mark{}
		}
		ms.m[project] = m
	}
	return m.due(events, every), nil
}

// Forget drops project's mark: a Put moved it.
func (ms *Marks) Forget(project string) { delete(ms.m, project) }

// Source is a project's current state, as the inline projection holds
// it: what ScopeOf reads.
type Source interface {
	Project(name string) (*projection.Project, error)
	Plans(project string) ([]*projection.Plan, error)
	Tasks(project string) ([]*projection.Task, error)
	Approvals(project string) ([]*projection.Approval, error)
	Execs(project string) ([]*projection.Exec, error)
	Checkpoints(project string) ([]*projection.Checkpoint, error)
}

// ScopeOf reads a project's whole state from src.
func ScopeOf(src Source, project string) (*projection.Scope, error) {
	p, err := src.Project(project)
	if err != nil {
		return nil, err
	}
	s := &projection.Scope{Project: p}
	if s.Plans, err = src.Plans(project); err != nil {
		return nil, err
	}
	if s.Tasks, err = src.Tasks(project); err != nil {
		return nil, err
	}
	if s.Approvals, err = src.Approvals(project); err != nil {
		return nil, err
	}
	if s.Execs, err = src.Execs(project); err != nil {
		return nil, err
	}
	s.Checkpoints, err = src.Checkpoints(project)
	return Normalize(s), err
}

// Normalize makes empty lists empty slices, as Memory.Scope does, so
// that equal states encode alike.
func Normalize(s *projection.Scope) *projection.Scope {
	s.Plans, s.Tasks, s.Approvals = projection.NonNil(s.Plans), projection.NonNil(s.Tasks), projection.NonNil(s.Approvals)
	s.Execs, s.Checkpoints = projection.NonNil(s.Execs), projection.NonNil(s.Checkpoints)
	return s
}

// Put stores the snapshot of project's current state in tx, at the head
// of tx, and marks it as the project's last (Due): a delta on the
// project's newest stored snapshot when the policy allows, else a full
// one, both packed (snapshot.PackFull, PackDelta). A delta is stored
// when the newest snapshot's chain checks (by headers: framing, CRC, fold
// version, chain hash, links), holds fewer than MaxDeltaChain deltas, the
// delta is at most half the full snapshot, and the chain's deltas with it
// weigh no more than MaxChainBytes times its full snapshot; and once it
// is proven to resolve to the state (resolvesTo). Snapshots are weighed
// unpacked (as formats 1 and 2 store them: what a read decodes), so the
// policy decides as it did before they were packed.
//
// The state is read as the inline projection stores it (src must hold
// nothing unflushed: else, or when a stored entity is not in canonical
// form, it is read decoded, ScopeOf), and diffed with the newest
// snapshot's state by the fingerprints of the entities' encodings: those
// of cache when it holds that snapshot, else its chain resolved. cache
// (nil: none) is given the new snapshot's.
func Put(tx store.Tx, src Source, project string, cache *Cache) error {
	// A read of a projection through tx writes what a batch holds
	// unflushed (projstore.Pending): then src may be committed.
	if _, err := tx.Get(projstore.BucketProjects, []byte(project)); err != nil {
		return err
	}
	c, ok := src.(interface{ Committed() bool })
	committed := ok && c.Committed()
	var pb []byte
	var full int
	done := false
	if committed {
		var err error
		if pb, full, done, err = cache.putTracked(tx, project); err != nil {
			return err
		}
	}
	if !done {
		var err error
		if pb, full, err = putRead(tx, src, project, committed, cache); err != nil {
			return err
		}
	}
	p := new(projection.Project)
	if _, err := projection.DecodeEntity(pb, p); err != nil || pb == nil {
		return fmt.Errorf("snapstore: the project entity of %q does not decode: %v", project, err)
	}
	// The mark keeps the size of the whole state's snapshot unpacked,
	// stored whole or not, so that automatic snapshots are spaced as they
	// were before deltas and packing, and a read folds no more events
	// after one.
	if err := putSummary(tx, src, project, pb); err != nil {
		return err
	}
	seq, _ := tx.Head()
	return putMark(tx, project, mark{seq: seq, events: p.Events, bytes: uint64(full)})
}

// putRead is Put from the whole state: read from the store when src
// holds nothing unflushed (committed), else or when a stored entity is
// not in canonical form, decoded (ScopeOf). It returns the project
// entity's encoding and the size of the whole state's snapshot unpacked.
func putRead(tx store.Tx, src Source, project string, committed bool, cache *Cache) ([]byte, int, error) {
	var cur *rawState
	var full int
	var err error
	if committed {
		var reuse *prints
		if reuse, err = cache.newest(tx, project); err != nil {
			return nil, 0, err
		}
		if cur, err = readRaw(tx, project, reuse); err != nil {
			return nil, 0, err
		}
		_, full, err = putRaw(tx, project, cur, cache)
	}
	if cur == nil || errors.Is(err, errNotCanonical) {
		state, serr := ScopeOf(src, project)
		if serr != nil {
			return nil, 0, serr
		}
		cur = rawOf(state)
		cur.trusted = true
		_, full, err = putRaw(tx, project, cur, cache)
	}
	return cur.project.b, full, err
}

// ResolvesTo reports whether delta b, decoded and applied to base's
// state (which it changes), gives the state of hash want: the proof,
// before a delta is stored, that reads will resolve it to the state it
// names.
func ResolvesTo(base Resolved, b []byte, want [32]byte) bool {
	h, d, err := snapshot.DecodeDelta(b)
	if err != nil {
		return false
	}
	d.Apply(base.State)
	return h.HashState(base.State) == want
}
