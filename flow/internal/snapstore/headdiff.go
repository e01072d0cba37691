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
// less those that encode alike in both, and, by kind (plans, tasks,
// approvals, execs), the ids of the entities Head holds bare: at the
// head alone, held by their id only (no title, nothing else), so that a
// page of the diff reads only its own (Named).
type HeadDiff struct {
	A, Head *projection.Scope
	Bare    [4]map[string]bool
}

// KindIndex is the index in HeadDiff.Bare of a change's kind ("plan",
// "task", "approval", "exec"); ok false for another (the project).
func KindIndex(kind string) (int, bool) {
	switch kind {
	case projection.KindPlan:
		return 0, true
	case projection.KindTask:
		return 1, true
	case projection.KindApproval:
		return 2, true
	case projection.KindExec:
		return 3, true
	}
	return 0, false
}

// DiffHead reads a diff of project from seq a to the head of tx (a <=
// head), as DiffAt does, but the state at the head is the inline
// projection's, which is the state at the head: only the state at a is
// read from its snapshot (its chain's entities held raw, its tail folded
// over them, as DiffAt reads a point) or, when that snapshot does not
// check, from StateAt (which reports it and reads around it). The ids at
// the head are the status index's (its keys alone): an entity of both states is
// read at the head (its stored encoding) only to be compared with its
// encoding at a, and both are decoded only when they differ; an entity
// at the head alone is listed by id (HeadDiff.Bare), not read; one at a
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
	if d.A.Plans, d.Head.Plans, d.Bare[0], err = headKind(tx, l, 0, l.mem.Plans, (*lazy).Plan); err != nil {
		return nil, err
	}
	if d.A.Tasks, d.Head.Tasks, d.Bare[1], err = headKind(tx, l, 1, l.mem.Tasks, (*lazy).Task); err != nil {
		return nil, err
	}
	if d.A.Approvals, d.Head.Approvals, d.Bare[2], err = headKind(tx, l, 2, l.mem.Approvals, (*lazy).Approval); err != nil {
		return nil, err
	}
	if d.A.Execs, d.Head.Execs, d.Bare[3], err = headKind(tx, l, 3, l.mem.Execs, (*lazy).Exec); err != nil {
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
// bucket): those of both whose encodings differ, decoded on both sides;
// those at a alone, named (or decoded); those at the head alone, bare
// (only their id), their ids in bare.
func headKind[V any](tx store.Tx, l *lazy, i int, m map[string]*V, get func(*lazy, string, string) (*V, error)) (x, y []*V, bare map[string]bool, err error) {
	project := l.project
	prefix := project + "/"
	seen := make(map[string]bool, len(l.raw[i])+len(m))
	bare = map[string]bool{}
	var enc []byte
	ids, err := indexIDs(tx, kinds[i], project)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, id := range ids {
		u, raw := l.raw[i][id]
		var dec *V
		if !raw {
			if dec = m[prefix+id]; dec == nil { // at the head alone
				bare[id] = true
				y = append(y, bareOf[V](i, id))
				continue
			}
			enc, _ = projection.AppendEntity(enc[:0], dec)
			u = enc
		}
		k := []byte(prefix + id)
		v, err := tx.Get(kinds[i], k)
		if err != nil {
			return nil, nil, nil, err
		}
		if v == nil {
			return nil, nil, nil, projstore.Damaged(kinds[i], k, "is in the status index but not stored")
		}
		seen[id] = true
		h, err := projstore.EntityMsgpack(tx, kinds[i], k, v)
		if err != nil {
			return nil, nil, nil, err
		}
		if bytes.Equal(u, h) {
			continue
		}
		w := new(V)
		if ok, err := projection.DecodeEntity(h, w); err != nil || !ok {
			return nil, nil, nil, projstore.Damaged(kinds[i], k, "does not decode")
		}
		if dec == nil {
			if dec, err = get(l, project, id); err != nil {
				return nil, nil, nil, err
			}
		}
		x, y = append(x, dec), append(y, w)
	}
	// at a alone: removed since
	for id, e := range l.raw[i] {
		if seen[id] {
			continue
		}
		v, ok := named[V](i, id, e)
		if !ok {
			if v, err = get(l, project, id); err != nil {
				return nil, nil, nil, err
			}
		}
		x = appendNonNil(x, v)
	}
	for k, v := range m {
		if len(k) > len(prefix) && k[:len(prefix)] == prefix && !seen[k[len(prefix):]] {
			x = append(x, v)
		}
	}
	return projection.NonNil(x), projection.NonNil(y), bare, nil
}

// bareOf is an entity of kind i holding its id alone.
func bareOf[V any](i int, id string) *V {
	var v any
	switch i {
	case 0:
		v = &projection.Plan{ID: id}
	case 1:
		v = &projection.Task{ID: id}
	case 2:
		v = &projection.Approval{ID: id}
	default:
		x := &projection.Exec{}
		x.ID = id
		v = x
	}
	return v.(*V)
}

// indexIDs lists the ids of project's entities in bucket from the
// status index's keys (projstore.Tx.IndexIDs, in no order: a diff sorts
// what it lists).
func indexIDs(tx store.Tx, bucket, project string) ([]string, error) {
	prefix := projstore.SummaryRefKey(bucket, project+"/")
	var out []string
	err := tx.Scan(projstore.BucketSummaries, prefix, func(k, v []byte) error {
		out = append(out, string(k[len(prefix):]))
		_, err := projstore.Unseal(projstore.BucketSummaries, k, v)
		return err
	})
	return out, err
}
