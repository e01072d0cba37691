package flow

import (
	"errors"
	"fmt"
	"io"

	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/internal/snapstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/snapshot"
)

// The snapshot storage and policy live in flow/internal/snapstore; these
// are the engine's doors to it.

// DefaultSnapshotEvery is K, the fewest events of a project between its
// last snapshot and an automatic one.
const DefaultSnapshotEvery = 1000

// SnapshotBytesPerEvent is B, what automatic snapshots may cost on disk
// per event of a project, amortized: see snapstore.BytesPerEvent.
const SnapshotBytesPerEvent = snapstore.BytesPerEvent

// MaxDeltaChain is the most delta snapshots between a snapshot and the
// full one it resolves from: past it, a full snapshot is written.
const MaxDeltaChain = snapstore.MaxDeltaChain

// MaxSnapshotBytes is the largest snapshot ImportSnapshot takes.
const MaxSnapshotBytes = 256 << 20

// SnapshotInfo describes one snapshot: stored, exported or imported.
type SnapshotInfo = snapstore.Info

// Snapshots lists the stored snapshots of project ("" for every project),
// by project and seq, each checked as a read checks it before use: its
// lengths and checksums, this binary's fold version and the log's chain
// hash at its seq (see snapstore.Describer). A bad one is listed with OK
// false and a Problem. It returns ErrNotFound for a project that does
// not exist.
func (e *Engine) Snapshots(project string) ([]SnapshotInfo, error) {
	out := []SnapshotInfo{}
	err := e.view(func(tx store.Tx) (err error) {
		if err := projectExists(tx, project); err != nil {
			return err
		}
		out, err = snapstore.List(tx, project)
		return err
	})
	return out, err
}

// projectExists returns ErrNotFound unless project ("" for all) was
// created in the log.
func projectExists(tx store.Tx, project string) error {
	if project == "" {
		return nil
	}
	if v, _ := tx.StreamVersion(projection.ProjectStream(project)); v == 0 {
		return fmt.Errorf("%w: project %q (see 'flowctl project ls')", ErrNotFound, project)
	}
	return nil
}

// ExportSnapshot writes to w the snapshot of project's state at point p,
// with the log's chain hash at that seq, and describes it. The state is
// built in one read transaction and written after it ends. It returns
// ErrNotFound for an unknown project or checkpoint, or for a point before
// the project was created; ErrInvalid for a seq past the head.
func (e *Engine) ExportSnapshot(w io.Writer, project string, p Point) (SnapshotInfo, error) {
	var b []byte
	var info SnapshotInfo
	err := e.view(func(tx store.Tx) error {
		if err := projectExists(tx, project); err != nil {
			return err
		}
		seq, err := resolvePoint(tx, projstore.NewTx(tx), project, p)
		if err != nil {
			return err
		}
		mem, err := e.stateAt(tx, project, seq)
		if err != nil {
			return err
		}
		state := mem.Scope(project)
		if state.Project == nil {
			return fmt.Errorf("%w: project %q did not exist yet at seq %d", ErrNotFound, project, seq)
		}
		chain, ok, err := snapstore.ChainHashAt(tx, seq)
		if err == nil && !ok {
			err = fmt.Errorf("%w: seq %d is past the head", ErrInvalid, seq)
		}
		if err != nil {
			return err
		}
		var h snapshot.Header
		b, h, err = snapshot.Encode(snapshot.Header{ProjectionVersion: projection.Version, Scope: project, Seq: seq, ChainHash: chain}, state)
		info = snapstore.HeaderInfo(h, len(b))
		return err
	})
	if err != nil {
		return SnapshotInfo{}, err
	}
	_, err = w.Write(b)
	return info, err
}

// ImportSnapshot stores snapshot b once it is proven right: it must
// decode (checksums, lengths, state hash), be of this binary's fold
// version, carry this log's chain hash at its seq, hold a project, and
// hold exactly the state a replay of the log gives at that seq (an
// imported snapshot feeds later reads). A snapshot that fails is refused
// with a *snapshot.CorruptError and nothing is written. Importing a
// snapshot that is already stored writes nothing either. A snapshot over
// MaxSnapshotBytes is ErrInvalid.
func (e *Engine) ImportSnapshot(b []byte) (SnapshotInfo, error) {
	if len(b) > MaxSnapshotBytes {
		return SnapshotInfo{}, fmt.Errorf("%w: a snapshot of %d bytes is over the limit of %d", ErrInvalid, len(b), MaxSnapshotBytes)
	}
	if e.at != nil {
		return SnapshotInfo{}, e.errAtWrite()
	}
	h, state, err := snapshot.Decode(b)
	if errors.Is(err, snapshot.ErrDelta) {
		return SnapshotInfo{}, fmt.Errorf("%w: a delta snapshot holds only what changed since another; 'snapshot export' writes whole ones", ErrInvalid)
	}
	if err != nil {
		return SnapshotInfo{}, err
	}
	if state.Project == nil {
		return SnapshotInfo{}, &snapshot.CorruptError{Reason: fmt.Sprintf("it holds no state of project %q", h.Scope)}
	}
	// Proven in a read transaction, so that the replay does not hold the
	// write lock; the log is append-only, so the proof holds for as long
	// as the chain hash at seq does, which the write transaction checks.
	if err := e.view(func(tx store.Tx) error { return snapstore.Prove(tx, h) }); err != nil {
		return SnapshotInfo{}, err
	}
	if err := e.update(func(tx store.Tx) error { return snapstore.Import(tx, h, b) }); err != nil {
		return SnapshotInfo{}, err
	}
	return snapstore.HeaderInfo(h, len(b)), nil
}

// VerifySnapshots checks every stored snapshot of project ("" for every
// project): as Snapshots does, and then that its state is the one a
// replay of the log alone gives at its seq. It returns them all, by
// project and seq; when any is bad, also a *snapshot.CorruptError naming
// the first bad one. A bad snapshot costs no data: reads skip it.
func (e *Engine) VerifySnapshots(project string) ([]SnapshotInfo, error) {
	out := []SnapshotInfo{}
	err := e.view(func(tx store.Tx) (err error) {
		if err := projectExists(tx, project); err != nil {
			return err
		}
		out, err = snapstore.Verify(tx, project)
		return err
	})
	if err != nil {
		return out, err
	}
	return out, snapstore.FirstBad(out)
}

// stateAt folds project's state at seq: from the nearest good snapshot at
// or below seq, plus the project's events after it (snapstore.StateAt).
// A snapshot that fails a check is reported and skipped.
func (e *Engine) stateAt(tx store.Tx, project string, seq uint64) (*projection.Memory, error) {
	return snapstore.StateAt(tx, project, seq, e.warn)
}

// loadNearest returns the state of the newest good snapshot of project
// at or below seq and its seq (snapstore.Nearest).
func (e *Engine) loadNearest(tx store.Tx, project string, seq uint64) (*projection.Memory, uint64, error) {
	return snapstore.Nearest(tx, project, seq, e.warn)
}
