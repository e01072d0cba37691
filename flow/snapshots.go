package flow

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/snapshot"
)

// MaxSnapshotBytes is the largest snapshot ImportSnapshot takes.
const MaxSnapshotBytes = 256 << 20

// SnapshotInfo describes one snapshot: stored, exported or imported.
type SnapshotInfo struct {
	Project           string `json:"project"`
	Seq               uint64 `json:"seq"` // the state is everything up to this seq
	Bytes             int    `json:"bytes"`
	StateHash         string `json:"state_hash"` // hex SHA-256 of the state; "" when the header does not read
	ChainHash         string `json:"chain_hash"` // hex hash of the log at seq
	ProjectionVersion uint32 `json:"projection_version"`
	// Kind is "full" (the whole state) or "delta" (what changed since
	// the snapshot at Base); "" when the header does not read. Chain is
	// the number of deltas from the full snapshot a read starts from up
	// to this one (0 for a full snapshot).
	Kind  string `json:"kind"`
	Base  uint64 `json:"base,omitempty"`
	Chain int    `json:"chain,omitempty"`
	// OK is false when the snapshot failed a check; Problem says which.
	OK      bool   `json:"ok"`
	Problem string `json:"problem,omitempty"`
}

func headerInfo(h snapshot.Header, size int) SnapshotInfo {
	info := SnapshotInfo{
		Project: h.Scope, Seq: h.Seq, Bytes: size, OK: true,
		StateHash: hex.EncodeToString(h.StateHash[:]), ChainHash: hex.EncodeToString(h.ChainHash[:]),
		ProjectionVersion: h.ProjectionVersion, Kind: "full",
	}
	if h.IsDelta() {
		info.Kind, info.Base = "delta", h.BaseSeq
	}
	return info
}

// Snapshots lists the stored snapshots of project ("" for every project),
// by project and seq, each checked as a read checks it before use: its
// lengths and checksums, this binary's fold version and the log's chain
// hash at its seq (see describeSnapshot). A bad one is listed with OK
// false and a Problem. It returns ErrNotFound for a project that does
// not exist.
func (e *Engine) Snapshots(project string) ([]SnapshotInfo, error) {
	out := []SnapshotInfo{}
	err := e.view(func(tx store.Tx) error {
		if err := projectExists(tx, project); err != nil {
			return err
		}
		d := newDescriber(tx)
		return tx.Scan(bucketSnapshots, scopePrefix(project), func(k, v []byte) error {
			info, err := d.describe(k, v)
			out = append(out, info)
			return err
		})
	})
	sortInfos(out)
	return out, err
}

// scopePrefix is the key prefix of project's snapshots, or of all of them.
func scopePrefix(project string) []byte {
	if project == "" {
		return nil
	}
	return snapshotPrefix(project)
}

func sortInfos(infos []SnapshotInfo) {
	slices.SortStableFunc(infos, func(a, b SnapshotInfo) int {
		return cmp.Or(cmp.Compare(a.Project, b.Project), cmp.Compare(a.Seq, b.Seq))
	})
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

// parseSnapshotKey splits a key of the snapshots bucket into its scope
// and seq.
func parseSnapshotKey(k []byte) (scope string, seq uint64, ok bool) {
	if len(k) < 2 {
		return "", 0, false
	}
	n := int(binary.BigEndian.Uint16(k))
	if len(k) != 2+n+8 {
		return "", 0, false
	}
	return string(k[2 : 2+n]), binary.BigEndian.Uint64(k[2+n:]), true
}

// describer checks stored snapshots as a read checks them before use,
// remembering what it found of each so that a delta's chain is checked
// once.
type describer struct {
	tx   store.Tx
	seen map[string]SnapshotInfo // by snapshot key
}

func newDescriber(tx store.Tx) *describer {
	return &describer{tx: tx, seen: map[string]SnapshotInfo{}}
}

// describe checks the stored snapshot v under key k: lengths, magic,
// checksums, body hash, fold version, and the log's chain hash at its
// seq; for a delta, that its base is stored, passes these checks itself
// and has the state hash the delta was made on. (It does not decode the
// body: a body that passes these and does not decode is forged, and
// VerifySnapshots catches it.) A snapshot that fails a check is
// described with its problem; other errors (the log itself failing) are
// returned.
func (d *describer) describe(k, v []byte) (SnapshotInfo, error) {
	if info, ok := d.seen[string(k)]; ok {
		return info, nil
	}
	info, err := d.describeLink(k, v, 0)
	if err == nil {
		d.seen[string(k)] = info
	}
	return info, err
}

func (d *describer) describeLink(k, v []byte, depth int) (SnapshotInfo, error) {
	scope, seq, ok := parseSnapshotKey(k)
	if !ok {
		return SnapshotInfo{Bytes: len(v), Problem: fmt.Sprintf("malformed key %x", k)}, nil
	}
	h, _, err := snapshot.Check(v)
	info := SnapshotInfo{Project: scope, Seq: seq, Bytes: len(v)}
	if h.StateHash != ([32]byte{}) { // the checksum held: the header reads
		info = headerInfo(h, len(v))
		info.Project, info.Seq = scope, seq
	}
	if err == nil {
		err = checkHeader(d.tx, h, scope, seq)
	}
	if err == nil && h.IsDelta() {
		info.Chain, err = d.checkBase(h, depth)
	}
	info.OK, info.Problem = err == nil, problem(err)
	if err != nil && !errors.Is(err, snapshot.ErrCorrupt) {
		return info, err
	}
	return info, nil
}

// checkBase checks the base of delta h (at depth in a chain) and returns
// the length of h's chain.
func (d *describer) checkBase(h snapshot.Header, depth int) (int, error) {
	if depth >= maxChainRead {
		return 0, &snapshot.CorruptError{Reason: fmt.Sprintf("a chain of more than %d deltas", maxChainRead)}
	}
	key := snapshotKey(h.Scope, h.BaseSeq)
	base, ok := d.seen[string(key)]
	if !ok {
		v, err := d.tx.Get(bucketSnapshots, key)
		if err != nil || v == nil {
			if err == nil {
				err = &snapshot.CorruptError{Reason: fmt.Sprintf("its base %s@%d is not stored", h.Scope, h.BaseSeq)}
			}
			return 0, err
		}
		if base, err = d.describeLink(key, v, depth+1); err != nil {
			return 0, err
		}
		d.seen[string(key)] = base
	}
	switch {
	case !base.OK:
		return 0, &snapshot.CorruptError{Reason: fmt.Sprintf("its base %s@%d: %s", h.Scope, h.BaseSeq, base.Problem)}
	case base.StateHash != hex.EncodeToString(h.BaseHash[:]):
		return 0, &snapshot.CorruptError{Reason: fmt.Sprintf("its base %s@%d is not the state it was made on", h.Scope, h.BaseSeq)}
	}
	return base.Chain + 1, nil
}

// problem words a failed check for SnapshotInfo.Problem.
func problem(err error) string {
	var ce *snapshot.CorruptError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &ce):
		return ce.Reason
	}
	return err.Error()
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
		chain, err := chainHashAt(tx, seq)
		if err != nil {
			return err
		}
		var h snapshot.Header
		b, h, err = snapshot.Encode(snapshot.Header{ProjectionVersion: projection.Version, Scope: project, Seq: seq, ChainHash: chain}, state)
		info = headerInfo(h, len(b))
		return err
	})
	if err != nil {
		return SnapshotInfo{}, err
	}
	_, err = w.Write(b)
	return info, err
}

// chainHashAt returns the log's hash at seq (zero at seq 0).
func chainHashAt(tx store.Tx, seq uint64) (store.Hash, error) {
	if seq == 0 {
		return store.Hash{}, nil
	}
	r, err := tx.Record(seq)
	if err == nil && r == nil {
		err = fmt.Errorf("%w: seq %d is past the head", ErrInvalid, seq)
	}
	if err != nil {
		return store.Hash{}, err
	}
	return r.Hash, nil
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
	if err := e.view(func(tx store.Tx) error { return proveSnapshot(tx, h) }); err != nil {
		return SnapshotInfo{}, err
	}
	err = e.update(func(tx store.Tx) error {
		if err := checkHeader(tx, h, h.Scope, h.Seq); err != nil {
			return err
		}
		key := snapshotKey(h.Scope, h.Seq)
		stored, err := tx.Get(bucketSnapshots, key)
		if err != nil || bytes.Equal(stored, b) {
			return err
		}
		return tx.Put(bucketSnapshots, key, b)
	})
	if err != nil {
		return SnapshotInfo{}, err
	}
	return headerInfo(h, len(b)), nil
}

// proveSnapshot checks a decoded snapshot's header against this log and
// its state against a replay of the log alone (no snapshot) at its seq.
func proveSnapshot(tx store.Tx, h snapshot.Header) error {
	if err := checkHeader(tx, h, h.Scope, h.Seq); err != nil {
		return err
	}
	return replayProject(tx, h.Scope, []uint64{h.Seq}, func(_ int, mem *projection.Memory) error {
		return sameState(mem, h)
	})
}

// sameState returns a *snapshot.CorruptError unless the state of h.Scope
// in mem is the one h describes.
func sameState(mem *projection.Memory, h snapshot.Header) error {
	hash, err := snapshot.StateHash(mem.Scope(h.Scope))
	if err != nil {
		return err
	}
	if hash != h.StateHash {
		return &snapshot.CorruptError{Reason: fmt.Sprintf("its state of %s differs from a replay of the log at seq %d", h.Scope, h.Seq)}
	}
	return nil
}

// replayProject folds project's events from the log alone, calling at
// with the state at each of seqs (ascending), in order.
func replayProject(tx store.Tx, project string, seqs []uint64, at func(i int, mem *projection.Memory) error) error {
	mem := projection.NewMemory()
	i := 0
	err := tx.ReplayProject(project, 1, func(r *store.Record) error {
		for ; i < len(seqs) && seqs[i] < r.Seq; i++ {
			if err := at(i, mem); err != nil {
				return err
			}
		}
		if i == len(seqs) {
			return store.ErrStop
		}
		if err := projection.Apply(mem, r); err != nil && !errors.Is(err, projection.ErrUnknown) {
			return err
		}
		return nil
	})
	for ; err == nil && i < len(seqs); i++ {
		err = at(i, mem)
	}
	return err
}

// VerifySnapshots checks every stored snapshot of project ("" for every
// project): as Snapshots does, and then that its state is the one a
// replay of the log alone gives at its seq. It returns them all, by
// project and seq; when any is bad, also a *snapshot.CorruptError naming
// the first bad one. A bad snapshot costs no data: reads skip it.
func (e *Engine) VerifySnapshots(project string) ([]SnapshotInfo, error) {
	out := []SnapshotInfo{}
	err := e.view(func(tx store.Tx) error {
		if err := projectExists(tx, project); err != nil {
			return err
		}
		scopes, malformed, err := snapshotKeys(tx, project)
		if err != nil {
			return err
		}
		out = append(out, malformed...)
		for _, scope := range slices.Sorted(maps.Keys(scopes)) {
			infos, err := verifyScope(tx, scope, scopes[scope])
			out = append(out, infos...)
			if err != nil {
				return err
			}
		}
		return nil
	})
	sortInfos(out)
	if err != nil {
		return out, err
	}
	return out, firstBad(out)
}

// snapshotKeys returns the seqs of the stored snapshots of project (""
// for all) by scope, and entries whose key does not parse.
func snapshotKeys(tx store.Tx, project string) (map[string][]uint64, []SnapshotInfo, error) {
	scopes := map[string][]uint64{}
	var malformed []SnapshotInfo
	err := tx.Scan(bucketSnapshots, scopePrefix(project), func(k, v []byte) error {
		scope, seq, ok := parseSnapshotKey(k)
		if !ok {
			info, err := newDescriber(tx).describe(k, v)
			malformed = append(malformed, info)
			return err
		}
		scopes[scope] = append(scopes[scope], seq)
		return nil
	})
	return scopes, malformed, err
}

// verifyScope checks the snapshots of one scope at seqs (ascending)
// against one replay of its events; a delta must also resolve, through
// its chain, to the state it names.
func verifyScope(tx store.Tx, scope string, seqs []uint64) ([]SnapshotInfo, error) {
	infos := make([]SnapshotInfo, len(seqs))
	d := newDescriber(tx)
	err := replayProject(tx, scope, seqs, func(i int, mem *projection.Memory) error {
		key := snapshotKey(scope, seqs[i])
		v, err := tx.Get(bucketSnapshots, key)
		if err != nil {
			return err
		}
		if infos[i], err = d.describe(key, v); err != nil || !infos[i].OK {
			return err
		}
		h, _, _ := snapshot.Check(v) // passed in describe
		err = sameState(mem, h)
		if err == nil && h.IsDelta() {
			_, _, err = resolveChecked(tx, scope, seqs[i], v)
		}
		infos[i].OK, infos[i].Problem = err == nil, problem(err)
		if err != nil && !errors.Is(err, snapshot.ErrCorrupt) {
			return err
		}
		return nil
	})
	return infos, err
}

// firstBad returns a *snapshot.CorruptError naming the first bad
// snapshot of infos, or nil.
func firstBad(infos []SnapshotInfo) error {
	bad := 0
	var first SnapshotInfo
	for _, in := range infos {
		if !in.OK {
			if bad == 0 {
				first = in
			}
			bad++
		}
	}
	if bad == 0 {
		return nil
	}
	return &snapshot.CorruptError{Reason: fmt.Sprintf("%d of %d stored snapshots failed verification; the first is %s@%d: %s",
		bad, len(infos), first.Project, first.Seq, first.Problem)}
}
