package flow

import (
	"bytes"
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/scopediff"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// DiffPage is scopediff.Of(a, b) cut to a page: the limit changes after
// the first offset (limit <= 0: all of them after offset), with how many
// changes there are in all: the changes of a diff or a rollback preview,
// a page at a time. The changes are scopediff.Of's, in its order (the
// project, then plans, tasks, approvals and exec records, each by id);
// only the entities in both states are compared field by field (an
// entity in one of them is a change), one at a time, and outside the
// page they are only counted. Entities that are the same pointer in
// both, or encode to the same bytes, are no change: the caller may leave
// them out first, which saves the comparisons.
func DiffPage(a, b *projection.Scope, offset, limit int) (changes []Change, total int) {
	if limit <= 0 && offset <= 0 {
		changes = scopediff.Of(a, b)
		return changes, len(changes)
	}
	l := &limiter{skip: max(offset, 0), limit: limit, out: []Change{}}
	l.add(scopediff.Of(&projection.Scope{Project: a.Project}, &projection.Scope{Project: b.Project}))
	limitKind(l, a.Plans, b.Plans, func(s *projection.Scope, v *projection.Plan) { s.Plans = []*projection.Plan{v} })
	limitKind(l, a.Tasks, b.Tasks, func(s *projection.Scope, v *projection.Task) { s.Tasks = []*projection.Task{v} })
	limitKind(l, a.Approvals, b.Approvals, func(s *projection.Scope, v *projection.Approval) { s.Approvals = []*projection.Approval{v} })
	limitKind(l, a.Execs, b.Execs, func(s *projection.Scope, v *projection.Exec) { s.Execs = []*projection.Exec{v} })
	return l.out, l.total
}

// limiter gathers the changes of a page, skip changes on, at most limit
// of them (0: no limit), and counts them all.
type limiter struct {
	skip, limit int
	out         []Change
	total       int
}

// add counts changes and keeps those that fall in the page.
func (l *limiter) add(changes []Change) {
	for _, c := range changes {
		if l.total >= l.skip && !l.full() {
			l.out = append(l.out, c)
		}
		l.total++
	}
}

// outside reports whether the next change falls outside the page.
func (l *limiter) outside() bool { return l.total < l.skip || l.full() }

func (l *limiter) full() bool { return l.limit > 0 && len(l.out) >= l.limit }

// limitKind adds the changes of one kind of entity, by id as
// projection.CompareIDs orders them: each id's entities, at most one in a
// and one in b (the last of an id wins, as in scopediff), are diffed as
// scopes of their own (put sets one in a scope).
func limitKind[V interface {
	comparable
	EntityID() string
}](l *limiter, a, b []V, put func(*projection.Scope, V)) {
	type pair struct {
		x, y       V
		inA, inB   bool
		prefix, id string
		n          int
	}
	at := make(map[string]int, len(a)+len(b))
	var pairs []pair
	add := func(v V, inB bool) {
		id := v.EntityID()
		i, ok := at[id]
		if !ok {
			prefix, num, _ := strings.Cut(id, "-")
			n, _ := strconv.Atoi(num)
			i = len(pairs)
			at[id] = i
			pairs = append(pairs, pair{prefix: prefix, id: id, n: n})
		}
		if inB {
			pairs[i].y, pairs[i].inB = v, true
		} else {
			pairs[i].x, pairs[i].inA = v, true
		}
	}
	for _, v := range a {
		add(v, false)
	}
	for _, v := range b {
		add(v, true)
	}
	// Sort indexes, not the pairs: moving strings under a running GC
	// pays a write barrier per move.
	order := make([]int32, len(pairs))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(i, j int32) int {
		p, q := &pairs[i], &pairs[j]
		if p.n != q.n && p.prefix == q.prefix { // the usual case: one prefix per kind
			return cmp.Compare(p.n, q.n)
		}
		return cmp.Or(strings.Compare(p.prefix, q.prefix), cmp.Compare(p.n, q.n), strings.Compare(p.id, q.id))
	})
	for _, i := range order {
		p := &pairs[i]
		if p.inA != p.inB && l.outside() { // added or removed: a change, counted
			l.total++
			continue
		}
		x, y := &projection.Scope{}, &projection.Scope{}
		if p.inA {
			put(x, p.x)
		}
		if p.inB {
			put(y, p.y)
		}
		l.add(scopediff.Of(x, y))
	}
}

// previewRollback is planRollback's answer for a dry run of the whole
// project to seq: the changes from head to seq, read as a diff reads its
// two states (diffPage: for a page, only the state at seq is read and
// compared with the projections', the entities at head alone counted and
// read only on the page), a page of them (in.Limit); nothing is planned
// to append.
func (e *Engine) previewRollback(tx store.Tx, in RollbackInput, seq, head uint64) (*RollbackResult, *rollbackPlan, error) {
	src := projstore.NewTx(tx)
	changes, total, err := e.diffPage(tx, src, in.Project, head, seq, 0, in.Limit)
	if err != nil {
		return nil, nil, err
	}
	// The read names an entity that is in one state only without
	// decoding it: whether an approval the rollback takes back was
	// granted is read from the projections, which are the state at head.
	granted := &projection.Scope{}
	for _, c := range changes {
		if c.Kind != "approval" || c.Op == OpAdded {
			continue
		}
		a, err := src.Approval(in.Project, c.ID)
		if err != nil {
			return nil, nil, err
		}
		if a != nil {
			granted.Approvals = append(granted.Approvals, a)
		}
	}
	return &RollbackResult{Project: in.Project, ToSeq: seq, Changes: flagWorld(changes, granted, nil),
		Total: total, Truncated: len(changes) < total}, nil, nil
}

// sameEncoded returns a and b without the plans, tasks, approvals and
// exec records that encode to the same bytes in both (matched by id):
// they are no change (scopediff compares fields of equal values alike),
// and a rollback's states read through two snapshots share few pointers.
// The project is kept; checkpoints are left out.
func sameEncoded(a, b *projection.Scope) (*projection.Scope, *projection.Scope) {
	x := &projection.Scope{Project: a.Project}
	y := &projection.Scope{Project: b.Project}
	var enc [2][]byte
	x.Plans, y.Plans = encodedApart(&enc, a.Plans, b.Plans)
	x.Tasks, y.Tasks = encodedApart(&enc, a.Tasks, b.Tasks)
	x.Approvals, y.Approvals = encodedApart(&enc, a.Approvals, b.Approvals)
	x.Execs, y.Execs = encodedApart(&enc, a.Execs, b.Execs)
	return x, y
}

// encodedApart returns a and b less the entities of one id that are the
// same pointer or encode alike in both, each list in its own order.
func encodedApart[V interface {
	comparable
	EntityID() string
}](enc *[2][]byte, a, b []V) ([]V, []V) {
	at := make(map[string]int, len(b))
	for j, v := range b {
		at[v.EntityID()] = j
	}
	shared := make([]bool, len(b))
	x := []V{}
	for _, u := range a {
		j, ok := at[u.EntityID()]
		if ok && u == b[j] {
			shared[j] = true
			continue
		}
		if ok {
			enc[0], _ = projection.AppendEntity(enc[0][:0], u)
			enc[1], _ = projection.AppendEntity(enc[1][:0], b[j])
			if bytes.Equal(enc[0], enc[1]) {
				shared[j] = true
				continue
			}
		}
		x = append(x, u)
	}
	y := []V{}
	for j, v := range b {
		if !shared[j] {
			y = append(y, v)
		}
	}
	return x, y
}
