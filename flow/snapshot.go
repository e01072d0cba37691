package flow

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/snapshot"
)

// bucketSnapshots holds snapshot blobs by scope and seq.
const bucketSnapshots = "snapshots"

// DefaultSnapshotEvery is how many events of a project pass between
// automatic snapshots of it.
const DefaultSnapshotEvery = 1000

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

// putSnapshot stores the snapshot of project's current state in tx, at
// the head of tx.
func putSnapshot(tx *eventlog.Tx, src source, project string) error {
	state, err := scopeOf(src, project)
	if err != nil {
		return err
	}
	seq, hash := tx.Head()
	b, _, err := snapshot.Encode(snapshot.Header{ProjectionVersion: projection.Version, Scope: project, Seq: seq, ChainHash: hash}, state)
	if err != nil {
		return err
	}
	return tx.Put(bucketSnapshots, snapshotKey(project, seq), b)
}

// loadSnapshot decodes a stored snapshot and checks that it belongs to
// this log at its seq and to this binary's fold.
func loadSnapshot(tx *eventlog.Tx, scope string, seq uint64, b []byte) (*projection.Scope, error) {
	h, state, err := snapshot.Decode(b)
	if err != nil {
		return nil, err
	}
	if err := checkHeader(tx, h, scope, seq); err != nil {
		return nil, err
	}
	return state, nil
}

// checkHeader checks that a snapshot header fits this log: the scope and
// seq it is stored under, this binary's fold, and the log's chain hash at
// its seq (a snapshot of another log, or of a history that was rewritten,
// does not).
func checkHeader(tx *eventlog.Tx, h snapshot.Header, scope string, seq uint64) error {
	switch {
	case h.Scope != scope || h.Seq != seq:
		return &snapshot.CorruptError{Reason: fmt.Sprintf("stored as %s@%d but says %s@%d", scope, seq, h.Scope, h.Seq)}
	case h.ProjectionVersion != projection.Version:
		return &snapshot.CorruptError{Reason: fmt.Sprintf("made by fold version %d, this binary folds with version %d", h.ProjectionVersion, projection.Version)}
	}
	var hash eventlog.Hash
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
func (e *Engine) stateAt(tx *eventlog.Tx, project string, seq uint64) (*projection.Memory, error) {
	mem := projection.NewMemory()
	from, err := e.loadNearest(tx, mem, project, seq)
	if err != nil {
		return nil, err
	}
	err = tx.ReadProject(project, from+1, func(r *eventlog.Record) error {
		if r.Seq > seq {
			return eventlog.ErrStop
		}
		if err := projection.Apply(mem, r); err != nil && !errors.Is(err, projection.ErrUnknown) {
			return err
		}
		return nil
	})
	return mem, err
}

// loadNearest loads into mem the newest good snapshot of project at or
// below seq and returns its seq (0 when there is none).
func (e *Engine) loadNearest(tx *eventlog.Tx, mem *projection.Memory, project string, seq uint64) (uint64, error) {
	prefix := snapshotPrefix(project)
	for max := snapshotKey(project, seq); ; {
		k, v, err := tx.Last(bucketSnapshots, prefix, max)
		if err != nil || k == nil {
			return 0, err
		}
		if len(k) != len(prefix)+8 { // damage: not scope+seq; fold from the log
			e.warn("skipping a malformed snapshot key %x of %s", k, project)
			return 0, nil
		}
		at := binary.BigEndian.Uint64(k[len(prefix):])
		state, err := loadSnapshot(tx, project, at, v)
		if err == nil {
			mem.Load(state)
			return at, nil
		}
		if !errors.Is(err, snapshot.ErrCorrupt) {
			return 0, err
		}
		e.warn("skipping snapshot %s@%d: %v", project, at, err)
		if at == 0 {
			return 0, nil
		}
		max = snapshotKey(project, at-1)
	}
}
