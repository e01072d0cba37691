package digest

import (
	"bytes"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
)

// DiffResult is the answer of Diff.
type DiffResult struct {
	Project string        `json:"project"`
	From    uint64        `json:"from"`
	To      uint64        `json:"to"`
	Changes []flow.Change `json:"changes"`
	// Total is how many entities changed; Truncated is set when more
	// changes follow those Changes lists (DiffPage).
	Total     int  `json:"total"`
	Truncated bool `json:"truncated"`
}

// Diff reports what changed in project between points a and b, entity by
// entity (flow.Change), reading both states in one transaction
// (flow.Engine.DiffChanges). It returns flow.ErrNotFound for an unknown
// project and the errors of a point that does not resolve.
//
// The read leaves out entities that are the same at both points by their
// snapshots' encodings when the points read from different snapshots
// (snapstore.DiffAt), or folds the later state on from the earlier one,
// so an entity no event changed between the points is the same pointer in
// both, and an entity a snapshot's delta brought back unchanged encodes
// to the same bytes: such pairs are left out before the comparison (as
// Changed leaves them out), which then flattens only what changed. The
// states' lists come in no order: they are matched by id and
// scopediff.Of sorts what is left, so no state is sorted whole.
func Diff(e *flow.Engine, project string, a, b flow.Point) (*DiffResult, error) {
	return DiffPage(e, project, a, b, 0, 0)
}

// DiffLimit is Diff listing only the first limit changes (limit <= 0:
// all): DiffPage(e, project, a, b, 0, limit).
func DiffLimit(e *flow.Engine, project string, a, b flow.Point, limit int) (*DiffResult, error) {
	return DiffPage(e, project, a, b, 0, limit)
}

// DiffPage is Diff listing only a page of the changes, in Diff's order
// (the project, then plans, tasks, approvals and exec records, each by
// id): the limit changes after the first offset (limit <= 0: all after
// offset), with Total the number of entities that changed and Truncated
// set when more follow the page. Outside the page, the entities in both
// states are only compared, and those in one are only counted
// (flow.DiffPage); to the head, only the state at the earlier point is
// read from snapshots and the log (flow.Engine.DiffChanges).
func DiffPage(e *flow.Engine, project string, a, b flow.Point, offset, limit int) (*DiffResult, error) {
	from, to, changes, total, err := e.DiffChanges(project, a, b, offset, limit)
	if err != nil {
		return nil, err
	}
	return &DiffResult{Project: project, From: from, To: to, Changes: changes, Total: total,
		Truncated: max(offset, 0)+len(changes) < total}, nil
}

// DiffEach is DiffLimit streamed (flow.Engine.DiffEach): head is called
// once with the result less its changes (Changes nil; Total and
// Truncated set), then each with every change DiffLimit lists, in its
// order, as it is made: a far diff of many changes holds neither them
// nor the states they come from.
func DiffEach(e *flow.Engine, project string, a, b flow.Point, limit int, head func(*DiffResult) error, each func(flow.Change) error) error {
	return e.DiffEach(project, a, b, 0, limit, func(from, to uint64, total int) error {
		return head(&DiffResult{Project: project, From: from, To: to, Total: total, Truncated: limit > 0 && limit < total})
	}, each)
}

// Changed returns a and b without the entities they share: those that
// are the same pointer in both, or encode to the same bytes
// (projection.AppendEntity: the same entity), in lists of the same kind,
// matched by id. What is left differs the same way:
// scopediff.Of(Changed(a, b)) is scopediff.Of(a, b). The lists may come
// in any order; what is left keeps it. The project is kept (it is
// compared by its fields, and is one entity).
func Changed(a, b *projection.Scope) (*projection.Scope, *projection.Scope) {
	x := &projection.Scope{Project: a.Project}
	y := &projection.Scope{Project: b.Project}
	var enc encoder
	x.Plans, y.Plans = unshared(&enc, a.Plans, b.Plans)
	x.Tasks, y.Tasks = unshared(&enc, a.Tasks, b.Tasks)
	x.Approvals, y.Approvals = unshared(&enc, a.Approvals, b.Approvals)
	x.Execs, y.Execs = unshared(&enc, a.Execs, b.Execs)
	x.Checkpoints, y.Checkpoints = unshared(&enc, a.Checkpoints, b.Checkpoints)
	return x, y
}

// encoder compares two entities by their encodings, in buffers it keeps.
type encoder struct{ x, y []byte }

// same reports whether u and v encode to the same bytes.
func (e *encoder) same(u, v any) bool {
	e.x, _ = projection.AppendEntity(e.x[:0], u)
	e.y, _ = projection.AppendEntity(e.y[:0], v)
	return bytes.Equal(e.x, e.y)
}

// unshared returns the entities of a and of b less those that are the
// same pointer in both or encode alike, each list in its own order: b's
// entities indexed by id, a's looked up there.
func unshared[V interface {
	comparable
	EntityID() string
}](enc *encoder, a, b []V) ([]V, []V) {
	at := make(map[string]int, len(b))
	for j, v := range b {
		at[v.EntityID()] = j
	}
	shared := make([]bool, len(b))
	var x, y []V
	for _, u := range a {
		j, ok := at[u.EntityID()]
		if ok && (u == b[j] || enc.same(u, b[j])) {
			shared[j] = true
			continue
		}
		x = append(x, u)
	}
	for j, v := range b {
		if !shared[j] {
			y = append(y, v)
		}
	}
	return projection.NonNil(x), projection.NonNil(y)
}
