package snapstore

import (
	"bytes"
	"errors"

	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/snapshot"
)

// HeadDiff is what DiffHead reads for a diff of a project from a seq to
// the head: the project's entities at the seq (A) and at the head (Head)
// less those that encode alike in both, but for the entities at the
// head alone, which are not read: a page of the diff lists and reads
// only its own.
type HeadDiff struct {
	A, Head *projection.Scope
	// AtA are the ids at a by kind (plans, tasks, approvals, execs),
	// Kept how many of them are at the head too: the entities at the
	// head alone are the others the head's status index lists
	// (projstore.Tx.EachID, SummaryCounts), which DiffHead does not read.
	AtA  [4]map[string]bool
	Kept [4]int
}

// DiffHead reads a diff of project from seq a to the head of tx (a <=
// head), as DiffAt does, but the state at the head is the inline
// projection's, which is the state at the head: only the state at a is
// read from its snapshot (its chain's entities held raw, its tail folded
// over them, as DiffAt reads a point) or, when that snapshot does not
// check, from StateAt (which reports it and reads around it). Each
// entity at a is looked up at the head by key: one of both states is
// read at the head (its stored encoding) only to be compared with its
// encoding at a, and both are decoded only when they differ; an entity
// at the head alone is not read at all (HeadDiff.AtA, Kept); one at a
// alone is named from its encoding (id and title). So a diff to the head
// costs the state at a, not the state at the head. What is left compares
// as the whole states do (see DiffAt); checkpoints are left out.
func DiffHead(tx store.Tx, project string, a uint64, warn func(format string, args ...any)) (*HeadDiff, error) {
	l, err := lazyAt(tx, project, a, warn)
	if err != nil {
		return nil, err
	}
	d := &HeadDiff{A: &projection.Scope{}, Head: &projection.Scope{}}
	if d.A.Project, err = l.Project(project); err != nil {
		return nil, err
	}
	if d.Head.Project, err = projstore.NewTx(tx).Project(project); err != nil {
		return nil, err
	}
	if d.A.Plans, d.Head.Plans, d.AtA[0], d.Kept[0], err = headKind(tx, l, 0, l.mem.Plans, (*lazy).Plan); err != nil {
		return nil, err
	}
	if d.A.Tasks, d.Head.Tasks, d.AtA[1], d.Kept[1], err = headKind(tx, l, 1, l.mem.Tasks, (*lazy).Task); err != nil {
		return nil, err
	}
	if d.A.Approvals, d.Head.Approvals, d.AtA[2], d.Kept[2], err = headKind(tx, l, 2, l.mem.Approvals, (*lazy).Approval); err != nil {
		return nil, err
	}
	if d.A.Execs, d.Head.Execs, d.AtA[3], d.Kept[3], err = headKind(tx, l, 3, l.mem.Execs, (*lazy).Exec); err != nil {
		return nil, err
	}
	d.A.Checkpoints, d.Head.Checkpoints = []*projection.Checkpoint{}, []*projection.Checkpoint{}
	return d, nil
}

// lazyAt is project's state at seq a held lazily: its nearest
// snapshot's chain resolved raw and its tail folded over it, or, when
// there is no snapshot or its chain does not check, StateAt's state (all
// decoded).
func lazyAt(tx store.Tx, project string, a uint64, warn func(format string, args ...any)) (*lazy, error) {
	if s, ok := newestAt(tx, project, a); ok {
		chain, err := chainAt(tx, project, s)
		if err != nil && !errors.Is(err, errRawPath) {
			return nil, err
		}
		if err == nil {
			l, err := rawOfChain(project, chain)
			if err != nil && !errors.Is(err, snapshot.ErrCorrupt) {
				return nil, err
			}
			if err == nil {
				if _, err := FoldTo(tx, l, project, s, a); err != nil {
					return nil, err
				}
				return l, nil
			}
		}
	}
	mem, err := StateAt(tx, project, a, warn)
	if err != nil {
		return nil, err
	}
	return &lazy{project: project, mem: mem}, nil
}

// headKind lists the entities of kind i that differ between l (the
// state at a: raw, or decoded in m) and the head (the projection's
// bucket, read by key for each id at a): those of both whose encodings
// differ, decoded on both sides; those at a alone, named (or decoded).
// It returns the ids at a (atA) and how many of them are at the head.
func headKind[V any](tx store.Tx, l *lazy, i int, m map[string]*V, get func(*lazy, string, string) (*V, error)) (x, y []*V, atA map[string]bool, kept int, err error) {
	project := l.project
	prefix := project + "/"
	atA = make(map[string]bool, len(l.raw[i])+len(m))
	for id := range l.raw[i] {
		atA[id] = true
	}
	for k := range m {
		if len(k) > len(prefix) && k[:len(prefix)] == prefix {
			atA[k[len(prefix):]] = true
		}
	}
	var enc []byte
	for id := range atA {
		u, raw := l.raw[i][id]
		var dec *V
		if !raw {
			dec = m[prefix+id]
		}
		k := []byte(prefix + id)
		v, err := tx.Get(kinds[i], k)
		if err != nil {
			return nil, nil, nil, 0, err
		}
		if v == nil { // at a alone: removed since
			if raw {
				var ok bool
				if dec, ok = Named[V](i, id, u); !ok {
					if dec, err = get(l, project, id); err != nil {
						return nil, nil, nil, 0, err
					}
				}
			}
			x = appendNonNil(x, dec)
			continue
		}
		kept++
		if !raw {
			enc, _ = projection.AppendEntity(enc[:0], dec)
			u = enc
		}
		h, err := projstore.EntityMsgpack(tx, kinds[i], k, v)
		if err != nil {
			return nil, nil, nil, 0, err
		}
		if bytes.Equal(u, h) {
			continue
		}
		w := new(V)
		if ok, err := projection.DecodeEntity(h, w); err != nil || !ok {
			return nil, nil, nil, 0, projstore.Damaged(kinds[i], k, "does not decode")
		}
		if dec == nil {
			if dec, err = get(l, project, id); err != nil {
				return nil, nil, nil, 0, err
			}
		}
		x, y = append(x, dec), append(y, w)
	}
	return projection.NonNil(x), projection.NonNil(y), atA, kept, nil
}
