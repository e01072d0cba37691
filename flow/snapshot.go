package flow

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/snapshot"
)

// bucketSnapshots holds snapshot blobs by scope and seq.
const bucketSnapshots = "snapshots"

// DefaultSnapshotEvery is K, the fewest events of a project between its
// last snapshot and an automatic one.
const DefaultSnapshotEvery = 1000

// SnapshotBytesPerEvent is B, what automatic snapshots may cost on disk
// per event of a project, amortized. A snapshot holds a project's whole
// state, which grows with its history: taken every K events, snapshots
// grow quadratically with the log (6 GB of a 7.3 GB file at 1M events).
// So once a project's last snapshot is over snapshotFreeBytes, the next
// automatic one also waits for at least one project event per B bytes of
// it: a snapshot comes at least S/B events after one of S bytes. The
// snapshots then cost about B bytes per event, plus what the state grows
// by per event (the next snapshot is that much bigger than the one that
// spaced it), however long the history: their sizes grow geometrically,
// not linearly. A read of the whole state at a point folds, in exchange,
// up to about S/B events after the nearest snapshot (a checkpoint's
// snapshot may be nearer); reads of one entity do not use snapshots (see
// atSource).
const SnapshotBytesPerEvent = 64

// snapshotFreeBytes is the size up to which snapshots are cheap enough to
// take every K events, as a small K (FLOW_SNAPSHOT_EVERY) asks: at the
// default K, K*B is about this size, so the two rules meet there.
const snapshotFreeBytes = 64 << 10

// bucketSnapshotMarks holds, per project, what the automatic snapshot
// policy needs of its last snapshot (automatic or at a checkpoint):
//
//	project -> seq, the project's event count there, size in bytes (8 bytes BE each)
//
// It is advice, not data: reads never use it. A project without a mark
// (a file from an older flowctl) gets a snapshot at its next K events.
const bucketSnapshotMarks = "snapshot_marks"

// snapshotMark describes a project's last snapshot.
type snapshotMark struct {
	seq, events, bytes uint64
}

func readSnapshotMark(tx store.Tx, project string) (snapshotMark, bool, error) {
	b, err := tx.Get(bucketSnapshotMarks, []byte(project))
	if err != nil || len(b) != 24 {
		return snapshotMark{}, false, err
	}
	return snapshotMark{binary.BigEndian.Uint64(b), binary.BigEndian.Uint64(b[8:]), binary.BigEndian.Uint64(b[16:])}, true, nil
}

func putSnapshotMark(tx store.Tx, project string, m snapshotMark) error {
	b := binary.BigEndian.AppendUint64(nil, m.seq)
	b = binary.BigEndian.AppendUint64(b, m.events)
	return tx.Put(bucketSnapshotMarks, []byte(project), binary.BigEndian.AppendUint64(b, m.bytes))
}

// snapshotDue reports whether a project with events events is due an
// automatic snapshot: at least every (K) of them since its last snapshot
// and, when that one is over snapshotFreeBytes, at least one per
// SnapshotBytesPerEvent bytes of it.
func snapshotDue(tx store.Tx, project string, events, every uint64) (bool, error) {
	m, _, err := readSnapshotMark(tx, project) // none: as if one of nothing at event 0
	if err != nil || events < m.events {
		return err == nil, err // a mark of another history: due
	}
	need := every
	if m.bytes > snapshotFreeBytes {
		need = max(need, m.bytes/SnapshotBytesPerEvent)
	}
	return events-m.events >= need, nil
}

// snapshotPrefix is the key prefix of a scope's snapshots: its 2-byte
// length and the scope.
func snapshotPrefix(scope string) []byte {
	return append(binary.BigEndian.AppendUint16(nil, uint16(len(scope))), scope...)
}

func snapshotKey(scope string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(snapshotPrefix(scope), seq)
}

// scopeOf reads a project's whole state from src.
func scopeOf(src source, project string) (*projection.Scope, error) {
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
	return normalizeScope(s), err
}

// normalizeScope makes empty lists empty slices, as Memory.Scope does, so
// that equal states encode alike.
func normalizeScope(s *projection.Scope) *projection.Scope {
	s.Plans, s.Tasks, s.Approvals = projection.NonNil(s.Plans), projection.NonNil(s.Tasks), projection.NonNil(s.Approvals)
	s.Execs, s.Checkpoints = projection.NonNil(s.Execs), projection.NonNil(s.Checkpoints)
	return s
}

// MaxDeltaChain is the most delta snapshots between a snapshot and the
// full one it resolves from: past it, a full snapshot is written.
const MaxDeltaChain = 16

// maxChainRead is the longest chain of deltas a read follows: longer
// than any this binary writes, so a longer one is damage.
const maxChainRead = 4 * MaxDeltaChain

// putSnapshot stores the snapshot of project's current state in tx, at
// the head of tx, and marks it as the project's last (snapshotDue): a
// delta on the project's newest stored snapshot when the policy allows
// (deltaOnNewest), else a full one.
func putSnapshot(tx store.Tx, src source, project string) error {
	state, err := scopeOf(src, project)
	if err != nil {
		return err
	}
	seq, hash := tx.Head()
	b, h, err := snapshot.Encode(snapshot.Header{ProjectionVersion: projection.Version, Scope: project, Seq: seq, ChainHash: hash}, state)
	if err != nil {
		return err
	}
	full := len(b)
	delta, err := deltaOnNewest(tx, state, h, full)
	if err != nil {
		return err
	}
	if delta != nil {
		b = delta
	}
	if err := tx.Put(bucketSnapshots, snapshotKey(project, seq), b); err != nil {
		return err
	}
	// The mark keeps the size of the whole state, stored whole or not, so
	// that automatic snapshots are spaced as they were before deltas and a
	// read folds no more events after one.
	return putSnapshotMark(tx, project, snapshotMark{seq: seq, events: state.Project.Events, bytes: uint64(full)})
}

// deltaOnNewest returns the delta snapshot that turns the project's
// newest stored snapshot before h.Seq into state (described by h, its
// full snapshot full bytes long), or nil when a full snapshot is due:
// when there is no good snapshot to base it on, when the base's chain
// already holds MaxDeltaChain deltas, when the delta is over half the
// full snapshot, or when the chain's deltas with it would outweigh the
// full snapshot (a read decodes them all).
func deltaOnNewest(tx store.Tx, state *projection.Scope, h snapshot.Header, full int) ([]byte, error) {
	prefix := snapshotPrefix(h.Scope)
	if h.Seq == 0 {
		return nil, nil
	}
	k, v, err := tx.Last(bucketSnapshots, prefix, snapshotKey(h.Scope, h.Seq-1))
	if err != nil || k == nil || len(k) != len(prefix)+8 {
		return nil, err
	}
	base, _, err := resolveSnapshot(tx, h.Scope, binary.BigEndian.Uint64(k[len(prefix):]), v)
	if errors.Is(err, snapshot.ErrCorrupt) || (err == nil && base.deltas >= MaxDeltaChain) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	h.BaseSeq, h.BaseHash = base.top.Seq, base.top.StateHash
	b, _, err := snapshot.EncodeDelta(h, snapshot.Diff(base.state, state))
	if err != nil || len(b) > full/2 || base.deltaBytes+len(b) > full {
		return nil, err
	}
	if !resolvesTo(base, b, h.StateHash) {
		return nil, nil // never stored: the whole state is
	}
	return b, nil
}

// resolvesTo reports whether delta b, decoded and applied to base's
// state (which it changes), gives the state of hash want: the proof,
// before a delta is stored, that reads will resolve it to the state it
// names.
func resolvesTo(base resolved, b []byte, want [32]byte) bool {
	_, d, err := snapshot.DecodeDelta(b)
	if err != nil {
		return false
	}
	d.Apply(base.state)
	hash, err := snapshot.StateHash(base.state)
	return err == nil && hash == want
}

// resolved is a stored snapshot's state, resolved through its chain.
type resolved struct {
	state      *projection.Scope
	top        snapshot.Header // the snapshot's own header
	deltas     int             // the deltas of its chain, itself included
	deltaBytes int             // their size
}

// link is one snapshot of a chain.
type link struct {
	h     snapshot.Header
	full  *projection.Scope // the chain's base
	delta *snapshot.Delta
}

// resolveSnapshot decodes the snapshot v stored as scope@seq and, for a
// delta, the snapshots under it down to a full one, checks each (see
// loadLink) and that each delta's base is the state it was made on, and
// applies the deltas to the full state. (That the state a delta resolves
// to has the state hash it names was proven before it was stored, see
// resolvesTo; verify proves it again with checkResolved.) A check that
// fails is a *snapshot.CorruptError, returned with the seq of the
// snapshot that failed: it and every snapshot above it in the chain are
// unusable.
func resolveSnapshot(tx store.Tx, scope string, seq uint64, v []byte) (resolved, uint64, error) {
	var chain []link // top first
	var r resolved
	for at := seq; ; {
		l, err := loadLink(tx, scope, at, v)
		if err != nil {
			return r, at, chainErr(scope, seq, at, err)
		}
		chain = append(chain, l)
		if l.full != nil {
			break
		}
		r.deltas, r.deltaBytes = r.deltas+1, r.deltaBytes+len(v)
		if r.deltas > maxChainRead {
			return r, seq, &snapshot.CorruptError{Reason: fmt.Sprintf("a chain of more than %d deltas", maxChainRead)}
		}
		if v, err = tx.Get(bucketSnapshots, snapshotKey(scope, l.h.BaseSeq)); err != nil {
			return r, at, err
		}
		if v == nil {
			return r, at, &snapshot.CorruptError{Reason: fmt.Sprintf("its base %s@%d is not stored", scope, l.h.BaseSeq)}
		}
		at = l.h.BaseSeq
	}
	r.top, r.state = chain[0].h, chain[len(chain)-1].full
	for i := len(chain) - 2; i >= 0; i-- {
		if d, base := chain[i].h, chain[i+1].h; d.BaseHash != base.StateHash {
			return r, d.Seq, chainErr(scope, seq, d.Seq, &snapshot.CorruptError{Reason: fmt.Sprintf("its base %s@%d is not the state it was made on", scope, base.Seq)})
		}
		chain[i].delta.Apply(r.state)
	}
	return r, 0, nil
}

// checkResolved returns a *snapshot.CorruptError unless the state r
// resolved to is the one its snapshot names. A full snapshot's is (its
// body hash is its state hash): only a delta's is hashed.
func checkResolved(r resolved) error {
	if r.deltas == 0 {
		return nil
	}
	hash, err := snapshot.StateHash(r.state)
	if err == nil && hash != r.top.StateHash {
		err = &snapshot.CorruptError{Reason: "its deltas resolve to a state other than the one it names"}
	}
	return err
}

// resolveChecked is resolveSnapshot and checkResolved.
func resolveChecked(tx store.Tx, scope string, seq uint64, v []byte) (resolved, uint64, error) {
	r, bad, err := resolveSnapshot(tx, scope, seq, v)
	if err == nil {
		err, bad = checkResolved(r), seq
	}
	return r, bad, err
}

// loadLink decodes and checks one snapshot of a chain, full or delta
// (the body against its hash, the header with checkHeader).
func loadLink(tx store.Tx, scope string, seq uint64, v []byte) (link, error) {
	var l link
	var err error
	if snapshot.IsDelta(v) {
		l.h, l.delta, err = snapshot.DecodeDelta(v)
	} else {
		l.h, l.full, err = snapshot.Decode(v)
	}
	if err == nil {
		err = checkHeader(tx, l.h, scope, seq)
	}
	return l, err
}

// chainErr puts a failure of the snapshot at seq bad, in the chain of
// the one at top, into words: a corrupt base is named.
func chainErr(scope string, top, bad uint64, err error) error {
	if bad == top || !errors.Is(err, snapshot.ErrCorrupt) {
		return err
	}
	return &snapshot.CorruptError{Reason: fmt.Sprintf("its base %s@%d: %s", scope, bad, problem(err))}
}

// checkHeader checks that a snapshot header fits this log: the scope and
// seq it is stored under, this binary's fold, and the log's chain hash at
// its seq (a snapshot of another log, or of a history that was rewritten,
// does not).
func checkHeader(tx store.Tx, h snapshot.Header, scope string, seq uint64) error {
	switch {
	case h.Scope != scope || h.Seq != seq:
		return &snapshot.CorruptError{Reason: fmt.Sprintf("stored as %s@%d but says %s@%d", scope, seq, h.Scope, h.Seq)}
	case h.ProjectionVersion != projection.Version:
		return &snapshot.CorruptError{Reason: fmt.Sprintf("made by fold version %d, this binary folds with version %d", h.ProjectionVersion, projection.Version)}
	}
	var hash store.Hash
	if h.Seq > 0 {
		r, err := tx.Record(h.Seq)
		if err != nil {
			return err
		}
		if r == nil {
			return &snapshot.CorruptError{Reason: fmt.Sprintf("seq %d is past the head of this log", h.Seq)}
		}
		hash = r.Hash
	}
	if hash != h.ChainHash {
		return &snapshot.CorruptError{Reason: fmt.Sprintf("chain hash at seq %d is not this log's: a snapshot of another history", h.Seq)}
	}
	return nil
}

// stateAt folds project's state at seq: from the nearest good snapshot at
// or below seq, plus the project's events after it. A snapshot that fails
// a check is reported and skipped, and an older one (or the log from the
// start) is used instead.
func (e *Engine) stateAt(tx store.Tx, project string, seq uint64) (*projection.Memory, error) {
	mem, from, err := e.loadNearest(tx, project, seq)
	if err != nil {
		return nil, err
	}
	err = tx.ReplayProject(project, from+1, func(r *store.Record) error {
		if r.Seq > seq {
			return store.ErrStop
		}
		if err := projection.Apply(mem, r); err != nil && !errors.Is(err, projection.ErrUnknown) {
			return err
		}
		return nil
	})
	return mem, err
}

// loadNearest returns the state of the newest good snapshot of project
// at or below seq, resolved through its deltas, and its seq (an empty
// state and 0 when there is none). When a snapshot of a delta chain
// fails, the snapshots above it in the chain are skipped with it.
func (e *Engine) loadNearest(tx store.Tx, project string, seq uint64) (*projection.Memory, uint64, error) {
	prefix := snapshotPrefix(project)
	for max := snapshotKey(project, seq); ; {
		k, v, err := tx.Last(bucketSnapshots, prefix, max)
		if err != nil || k == nil {
			return projection.NewMemory(), 0, err
		}
		if len(k) != len(prefix)+8 { // damage: not scope+seq; fold from the log
			e.warn("skipping a malformed snapshot key %x of %s", k, project)
			return projection.NewMemory(), 0, nil
		}
		at := binary.BigEndian.Uint64(k[len(prefix):])
		mem, bad, err := loadResolved(tx, project, at, v)
		if err == nil {
			return mem, at, nil
		}
		if !errors.Is(err, snapshot.ErrCorrupt) {
			return nil, 0, err
		}
		e.warn("skipping snapshot %s@%d: %v", project, at, err)
		if bad == 0 {
			return projection.NewMemory(), 0, nil
		}
		max = snapshotKey(project, bad-1)
	}
}

// loadResolved resolves the snapshot v stored as scope@seq (see
// resolveSnapshot) into a new Memory.
func loadResolved(tx store.Tx, scope string, seq uint64, v []byte) (*projection.Memory, uint64, error) {
	r, bad, err := resolveSnapshot(tx, scope, seq, v)
	if err != nil {
		return nil, bad, err
	}
	mem := projection.NewMemory()
	mem.Load(r.state)
	return mem, 0, nil
}
