package snapstore

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/snapshot"
)

// ChainHashAt returns the log's hash at seq (zero at seq 0); ok is false
// when seq is past the head.
func ChainHashAt(tx store.Tx, seq uint64) (hash store.Hash, ok bool, err error) {
	if seq == 0 {
		return store.Hash{}, true, nil
	}
	r, err := tx.Record(seq)
	if err != nil || r == nil {
		return store.Hash{}, false, err
	}
	return r.Hash, true, nil
}

// Prove checks a decoded snapshot's header against this log and its
// state against a replay of the log alone (no snapshot) at its seq.
func Prove(tx store.Tx, h snapshot.Header) error {
	if err := CheckHeader(tx, h, h.Scope, h.Seq); err != nil {
		return err
	}
	return ReplayProject(tx, h.Scope, []uint64{h.Seq}, func(_ int, mem *projection.Memory) error {
		return SameState(mem, h)
	})
}

// Import stores the full snapshot b of header h, proven right by Prove in
// an earlier transaction, once its header still fits this log
// (CheckHeader): the log is append-only, so the proof holds for as long
// as the chain hash at its seq does. A snapshot already stored is not
// written again.
//
// A full snapshot of an older format (an export is of format 1) is
// stored as this binary stores its own: packed and summed
// (snapshot.PackFullSum), so that it names its state by the hash the
// deltas this binary writes name their bases by, and a delta above it in
// a chain it replaces still resolves on it.
func Import(tx store.Tx, h snapshot.Header, b []byte) error {
	if err := CheckHeader(tx, h, h.Scope, h.Seq); err != nil {
		return err
	}
	if !h.IsDelta() && !h.Summed() {
		_, st, err := snapshot.Decode(b)
		if err != nil {
			return err
		}
		cur := rawOf(Normalize(st))
		if b, _, err = snapshot.PackFullSum(h, snapshot.AppendRawScope(nil, cur.scope()), printsOf(cur, false).sum.Hash()); err != nil {
			return err
		}
	}
	key := Key(h.Scope, h.Seq)
	stored, err := tx.Get(Bucket, key)
	if err != nil || bytes.Equal(stored, b) {
		return err
	}
	return tx.Put(Bucket, key, b)
}

// SameState returns a *snapshot.CorruptError unless the state of h.Scope
// in mem is the one h describes.
func SameState(mem *projection.Memory, h snapshot.Header) error {
	if h.HashState(mem.Scope(h.Scope)) != h.StateHash {
		return &snapshot.CorruptError{Reason: fmt.Sprintf("its state of %s differs from a replay of the log at seq %d", h.Scope, h.Seq)}
	}
	return nil
}

// ReplayProject folds project's events from the log alone, calling at
// with the state at each of seqs (ascending), in order.
func ReplayProject(tx store.Tx, project string, seqs []uint64, at func(i int, mem *projection.Memory) error) error {
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

// Verify checks every stored snapshot of project ("" for every
// project): as List does, and then that its state is the one a replay of
// the log alone gives at its seq. It returns them all, by project and
// seq, and the errors of the log itself; FirstBad words the bad ones.
func Verify(tx store.Tx, project string) ([]Info, error) {
	out := []Info{}
	err := verifyAll(tx, project, &out)
	SortInfos(out)
	return out, err
}

func verifyAll(tx store.Tx, project string, out *[]Info) error {
	scopes, malformed, err := keys(tx, project)
	if err != nil {
		return err
	}
	*out = append(*out, malformed...)
	for _, scope := range slices.Sorted(maps.Keys(scopes)) {
		infos, err := verifyScope(tx, scope, scopes[scope])
		*out = append(*out, infos...)
		if err != nil {
			return err
		}
	}
	return nil
}

// keys returns the seqs of the stored snapshots of project ("" for all)
// by scope, and entries whose key does not parse.
func keys(tx store.Tx, project string) (map[string][]uint64, []Info, error) {
	scopes := map[string][]uint64{}
	var malformed []Info
	err := tx.Scan(Bucket, ScopePrefix(project), func(k, v []byte) error {
		scope, seq, ok := ParseKey(k)
		if !ok {
			info, err := NewDescriber(tx).Describe(k, v)
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
// its chain, to the state it names, and its names section (format 7)
// must be the one its body gives.
func verifyScope(tx store.Tx, scope string, seqs []uint64) ([]Info, error) {
	infos := make([]Info, len(seqs))
	d := NewDescriber(tx)
	err := ReplayProject(tx, scope, seqs, func(i int, mem *projection.Memory) error {
		key := Key(scope, seqs[i])
		v, err := tx.Get(Bucket, key)
		if err != nil {
			return err
		}
		if infos[i], err = d.Describe(key, v); err != nil || !infos[i].OK {
			return err
		}
		h, _, _ := snapshot.Check(v) // passed in Describe
		err = SameState(mem, h)
		if err == nil && h.HasNames() {
			err = snapshot.CheckNames(v) // a far diff reads the names alone
		}
		if err == nil && h.IsDelta() {
			_, _, err = ResolveChecked(tx, scope, seqs[i], v)
		}
		infos[i].OK, infos[i].Problem = err == nil, Problem(err)
		if err != nil && !errors.Is(err, snapshot.ErrCorrupt) {
			return err
		}
		return nil
	})
	return infos, err
}

// FirstBad returns a *snapshot.CorruptError naming the first bad
// snapshot of infos, or nil.
func FirstBad(infos []Info) error {
	bad := 0
	var first Info
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
