package snapstore

import (
	"cmp"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/snapshot"
)

// Info describes one snapshot: stored, exported or imported.
type Info struct {
	Project string `json:"project"`
	Seq     uint64 `json:"seq"` // the state is everything up to this seq
	Bytes   int    `json:"bytes"`
	// BodyBytes is the size of its body decompressed: what a read
	// decodes (the policy weighs chains by it); 0 when the header does
	// not read.
	BodyBytes         int    `json:"body_bytes,omitempty"`
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

// HeaderInfo describes the snapshot of header h, size bytes long.
func HeaderInfo(h snapshot.Header, size int) Info {
	info := Info{
		Project: h.Scope, Seq: h.Seq, Bytes: size, BodyBytes: int(h.BodyLen), OK: true,
		StateHash: hex.EncodeToString(h.StateHash[:]), ChainHash: hex.EncodeToString(h.ChainHash[:]),
		ProjectionVersion: h.ProjectionVersion, Kind: "full",
	}
	if h.IsDelta() {
		info.Kind, info.Base = "delta", h.BaseSeq
	}
	return info
}

// SortInfos sorts infos by project and seq.
func SortInfos(infos []Info) {
	slices.SortStableFunc(infos, func(a, b Info) int {
		return cmp.Or(cmp.Compare(a.Project, b.Project), cmp.Compare(a.Seq, b.Seq))
	})
}

// List describes the stored snapshots of project ("" for every project),
// by project and seq, each checked as a read checks it before use (see
// Describer.Describe). A bad one is listed with OK false and a Problem.
func List(tx store.Tx, project string) ([]Info, error) {
	out := []Info{}
	d := NewDescriber(tx)
	err := tx.Scan(Bucket, ScopePrefix(project), func(k, v []byte) error {
		info, err := d.Describe(k, v)
		out = append(out, info)
		return err
	})
	SortInfos(out)
	return out, err
}

// Describer checks stored snapshots as a read checks them before use,
// remembering what it found of each so that a delta's chain is checked
// once.
type Describer struct {
	tx   store.Tx
	seen map[string]Info // by snapshot key
}

// NewDescriber returns a Describer reading through tx.
func NewDescriber(tx store.Tx) *Describer {
	return &Describer{tx: tx, seen: map[string]Info{}}
}

// Describe checks the stored snapshot v under key k: lengths, magic,
// checksums, body hash, fold version, and the log's chain hash at its
// seq; for a delta, that its base is stored, passes these checks itself
// and has the state hash the delta was made on. (It does not decode the
// body: a body that passes these and does not decode is forged, and
// Verify catches it.) A snapshot that fails a check is described with
// its problem; other errors (the log itself failing) are returned.
func (d *Describer) Describe(k, v []byte) (Info, error) {
	if info, ok := d.seen[string(k)]; ok {
		return info, nil
	}
	info, err := d.describeLink(k, v, 0)
	if err == nil {
		d.seen[string(k)] = info
	}
	return info, err
}

func (d *Describer) describeLink(k, v []byte, depth int) (Info, error) {
	scope, seq, ok := ParseKey(k)
	if !ok {
		return Info{Bytes: len(v), Problem: fmt.Sprintf("malformed key %x", k)}, nil
	}
	h, _, err := snapshot.Check(v)
	info := Info{Project: scope, Seq: seq, Bytes: len(v)}
	if h.StateHash != ([32]byte{}) { // the checksum held: the header reads
		info = HeaderInfo(h, len(v))
		info.Project, info.Seq = scope, seq
	}
	if err == nil {
		err = CheckHeader(d.tx, h, scope, seq)
	}
	if err == nil && h.IsDelta() {
		info.Chain, err = d.checkBase(h, depth)
	}
	info.OK, info.Problem = err == nil, Problem(err)
	if err != nil && !errors.Is(err, snapshot.ErrCorrupt) {
		return info, err
	}
	return info, nil
}

// checkBase checks the base of delta h (at depth in a chain) and returns
// the length of h's chain.
func (d *Describer) checkBase(h snapshot.Header, depth int) (int, error) {
	if depth >= maxChainRead {
		return 0, &snapshot.CorruptError{Reason: fmt.Sprintf("a chain of more than %d deltas", maxChainRead)}
	}
	key := Key(h.Scope, h.BaseSeq)
	base, ok := d.seen[string(key)]
	if !ok {
		v, err := d.tx.Get(Bucket, key)
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

// Problem words a failed check for Info.Problem.
func Problem(err error) string {
	var ce *snapshot.CorruptError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &ce):
		return ce.Reason
	}
	return err.Error()
}
