package snapstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/snapshot"
)

// Resolved is a stored snapshot's state, resolved through its chain.
type Resolved struct {
	State      *projection.Scope
	top        snapshot.Header // the snapshot's own header
	deltas     int             // the deltas of its chain, itself included
	deltaBytes int             // their size
	fullBytes  int             // the size of the chain's full snapshot
}

// link is one snapshot of a chain, its header checked and its body not
// yet decoded.
type link struct {
	h snapshot.Header
	v []byte // valid for the transaction
}

// Resolve decodes the snapshot v stored as scope@seq and, for a delta,
// the snapshots under it down to a full one, checks each and that each
// delta's base is the state it was made on, and applies the deltas to
// the full state. The chain is walked by headers first (framing, CRC and
// CheckHeader, without decoding a body); then the full snapshot is
// decoded and each delta, from the bottom up, is decoded (its body hash
// checked) and applied, and dropped: a read holds one state and one
// delta at a time, however long the chain. (That the state a delta
// resolves to has the state hash it names was proven before it was
// stored, see ResolvesTo; verify proves it again with CheckResolved.) A
// check that fails is a *snapshot.CorruptError, returned with the seq of
// the snapshot that failed: it and every snapshot above it in the chain
// are unusable.
func Resolve(tx store.Tx, scope string, seq uint64, v []byte) (Resolved, uint64, error) {
	var chain []link // top first
	var r Resolved
	for at := seq; ; {
		h, err := snapshot.Frame(v)
		if err == nil {
			err = CheckHeader(tx, h, scope, at)
		}
		if err != nil {
			return r, at, chainErr(scope, seq, at, err)
		}
		if n := len(chain); n > 0 && chain[n-1].h.BaseHash != h.StateHash {
			d := chain[n-1].h
			return r, d.Seq, chainErr(scope, seq, d.Seq, &snapshot.CorruptError{Reason: fmt.Sprintf("its base %s@%d is not the state it was made on", scope, at)})
		}
		chain = append(chain, link{h: h, v: v})
		if !h.IsDelta() {
			r.fullBytes = len(v)
			break
		}
		r.deltas, r.deltaBytes = r.deltas+1, r.deltaBytes+len(v)
		if r.deltas > maxChainRead {
			return r, seq, &snapshot.CorruptError{Reason: fmt.Sprintf("a chain of more than %d deltas", maxChainRead)}
		}
		if v, err = tx.Get(Bucket, Key(scope, h.BaseSeq)); err != nil {
			return r, at, err
		}
		if v == nil {
			return r, at, &snapshot.CorruptError{Reason: fmt.Sprintf("its base %s@%d is not stored", scope, h.BaseSeq)}
		}
		at = h.BaseSeq
	}
	r.top = chain[0].h
	full := chain[len(chain)-1]
	_, state, err := snapshot.Decode(full.v)
	if err != nil {
		return r, full.h.Seq, chainErr(scope, seq, full.h.Seq, err)
	}
	chain[len(chain)-1].v = nil // the store's copy, no longer needed
	for i := len(chain) - 2; i >= 0; i-- {
		_, d, err := snapshot.DecodeDelta(chain[i].v)
		if err != nil {
			return r, chain[i].h.Seq, chainErr(scope, seq, chain[i].h.Seq, err)
		}
		d.Apply(state)
		chain[i].v = nil
	}
	r.State = state
	return r, 0, nil
}

// CheckResolved returns a *snapshot.CorruptError unless the state r
// resolved to is the one its snapshot names. A full snapshot's is (its
// body hash is its state hash, or, summed, is the SHA-256 of the body its
// writer summed): only a delta's is hashed, as its format names it
// (snapshot.Header.HashState).
func CheckResolved(r Resolved) error {
	if r.deltas == 0 {
		return nil
	}
	if r.top.HashState(r.State) != r.top.StateHash {
		return &snapshot.CorruptError{Reason: "its deltas resolve to a state other than the one it names"}
	}
	return nil
}

// ResolveChecked is Resolve and CheckResolved.
func ResolveChecked(tx store.Tx, scope string, seq uint64, v []byte) (Resolved, uint64, error) {
	r, bad, err := Resolve(tx, scope, seq, v)
	if err == nil {
		err, bad = CheckResolved(r), seq
	}
	return r, bad, err
}

// chainErr puts a failure of the snapshot at seq bad, in the chain of
// the one at top, into words: a corrupt base is named.
func chainErr(scope string, top, bad uint64, err error) error {
	if bad == top || !errors.Is(err, snapshot.ErrCorrupt) {
		return err
	}
	return &snapshot.CorruptError{Reason: fmt.Sprintf("its base %s@%d: %s", scope, bad, Problem(err))}
}

// CheckHeader checks that a snapshot header fits this log: the scope and
// seq it is stored under, this binary's fold, and the log's chain hash at
// its seq (a snapshot of another log, or of a history that was rewritten,
// does not).
func CheckHeader(tx store.Tx, h snapshot.Header, scope string, seq uint64) error {
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

// StateAt folds project's state at seq: from the nearest good snapshot at
// or below seq, plus the project's events after it. A snapshot that fails
// a check is reported to warn and skipped, and an older one (or the log
// from the start) is used instead.
func StateAt(tx store.Tx, project string, seq uint64, warn func(format string, args ...any)) (*projection.Memory, error) {
	mem, from, err := Nearest(tx, project, seq, warn)
	if err != nil {
		return nil, err
	}
	n, err := FoldTo(tx, mem, project, from, seq)
	if fn := tailHook.Load(); fn != nil && err == nil {
		(*fn)(project, from, seq, n)
	}
	return mem, err
}

// FoldTo folds into mem the events of project after seq from up to seq
// to, and returns how many it folded. Events of a type this binary does
// not fold change nothing.
func FoldTo(tx store.Tx, mem projection.Store, project string, from, to uint64) (int, error) {
	n := 0
	err := tx.ReplayProject(project, from+1, func(r *store.Record) error {
		if r.Seq > to {
			return store.ErrStop
		}
		n++
		if err := projection.Apply(mem, r); err != nil && !errors.Is(err, projection.ErrUnknown) {
			return err
		}
		return nil
	})
	return n, err
}

// tailHook, when set, is told of every StateAt: the project, the seq of
// the snapshot it started from (0: the log's start), the seq it read at
// and how many events it folded after the snapshot.
var tailHook atomic.Pointer[func(project string, from, seq uint64, events int)]

// OnTail sets the function told of every StateAt's tail (nil: none) and
// returns the one it replaces: a hook for tests that count the events a
// read at a point folds.
func OnTail(fn func(project string, from, seq uint64, events int)) (old func(project string, from, seq uint64, events int)) {
	var p *func(string, uint64, uint64, int)
	if fn != nil {
		p = &fn
	}
	if o := tailHook.Swap(p); o != nil {
		old = *o
	}
	return old
}

// Nearest returns the state of the newest good snapshot of project at or
// below seq, resolved through its deltas, and its seq (an empty state and
// 0 when there is none). When a snapshot of a delta chain fails, it is
// reported to warn and the snapshots above it in the chain are skipped
// with it.
func Nearest(tx store.Tx, project string, seq uint64, warn func(format string, args ...any)) (*projection.Memory, uint64, error) {
	prefix := Prefix(project)
	for max := Key(project, seq); ; {
		k, v, err := tx.Last(Bucket, prefix, max)
		if err != nil || k == nil {
			return projection.NewMemory(), 0, err
		}
		if len(k) != len(prefix)+8 { // damage: not scope+seq; fold from the log
			warn("skipping a malformed snapshot key %x of %s", k, project)
			return projection.NewMemory(), 0, nil
		}
		at := binary.BigEndian.Uint64(k[len(prefix):])
		mem, bad, err := LoadResolved(tx, project, at, v)
		if err == nil {
			return mem, at, nil
		}
		if !errors.Is(err, snapshot.ErrCorrupt) {
			return nil, 0, err
		}
		warn("skipping snapshot %s@%d: %v", project, at, err)
		if bad == 0 {
			return projection.NewMemory(), 0, nil
		}
		max = Key(project, bad-1)
	}
}

// LoadResolved resolves the snapshot v stored as scope@seq (see Resolve)
// into a new Memory.
func LoadResolved(tx store.Tx, scope string, seq uint64, v []byte) (*projection.Memory, uint64, error) {
	r, bad, err := Resolve(tx, scope, seq, v)
	if err != nil {
		return nil, bad, err
	}
	mem := projection.NewMemory()
	mem.Load(r.State)
	return mem, 0, nil
}
