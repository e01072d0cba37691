package flow

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/flowctl/flowctl/flow/internal/check"
	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/internal/snapstore"
	"github.com/flowctl/flowctl/flow/scopediff"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/vmihailenco/msgpack/v5"
)

// RollbackInput is the input of Rollback.
type RollbackInput struct {
	Project string `json:"project"`
	To      Point  `json:"to"`
	Task    string `json:"task,omitempty"` // roll back this task only
	Reason  string `json:"reason,omitempty"`
	DryRun  bool   `json:"dry_run,omitempty"`
	// Limit lists only the first Limit changes in the result (0: all);
	// the rollback itself, when not a dry run, restores everything. It
	// is how the result is shown, not what is done: no part of the
	// command's idempotency hash.
	Limit int `json:"-"`
	Write
}

// Change is what happened to one entity between two points, and
// FieldChange one of its fields (see package flow/scopediff).
type (
	Change      = scopediff.Change
	FieldChange = scopediff.FieldChange
)

// Change operations.
const (
	OpAdded   = scopediff.OpAdded
	OpRemoved = scopediff.OpRemoved
	OpChanged = scopediff.OpChanged
)

// RollbackResult says what a rollback did (or, dry, would do).
type RollbackResult struct {
	Project string   `json:"project"`
	ToSeq   uint64   `json:"to_seq"`
	Task    string   `json:"task,omitempty"`
	Changes []Change `json:"changes"` // from the current state to the restored one
	// Total is how many changes there are; Truncated is set when Changes
	// lists only the first of them (RollbackInput.Limit).
	Total     int    `json:"total"`
	Truncated bool   `json:"truncated"`
	Applied   bool   `json:"applied"`
	Seq       uint64 `json:"seq,omitempty"` // the rollback.applied event
}

// Rollback restores the state of project (or of one task) at a point by
// appending one rollback.applied event that carries the restored entity
// states. Entities created after the point leave the projections; the log
// keeps all of their history. Exec records and granted approvals after
// the point are flagged in the changes (World): they happened outside
// flowctl and are not undone there. DryRun computes the same and appends
// nothing; so does a rollback that would change nothing.
func (e *Engine) Rollback(in RollbackInput) (*RollbackResult, error) {
	if err := check.Text("reason", in.Reason, MaxText, false); err != nil {
		return nil, err
	}
	var out *RollbackResult
	plan := func(tx store.Tx, src source) (*rollbackPlan, error) {
		res, p, err := e.planRollback(tx, src, in)
		out = res
		return p, err
	}
	if in.DryRun {
		err := e.view(func(tx store.Tx) error {
			_, err := plan(tx, projstore.NewTx(tx))
			return err
		})
		return out, err
	}
	ref, err := e.command(in.Write, "rollback", in, func(w *writer) (Ref, error) {
		ref := Ref{Kind: "rollback", Project: in.Project}
		p, err := plan(w.tx, w)
		if err != nil || p == nil {
			return ref, err
		}
		stream := projection.ProjectStream(in.Project)
		if in.Task != "" {
			stream = projection.TaskStream(in.Project, in.Task)
		}
		r, err := w.emit(stream, in.expect(), in.Project, projection.TypeRollbackApplied, p.payload)
		if err != nil {
			return ref, err
		}
		out.Applied, out.Seq = true, r.Seq
		ref.ID = strconv.FormatUint(r.Seq, 10)
		return ref, w.markRolledBack(in.Project, r.Seq, p)
	})
	if err != nil {
		return nil, err
	}
	if out == nil { // an idempotent retry: the first call's result
		return e.rollbackDone(in, ref)
	}
	return out, nil
}

// rollbackDone rebuilds the result of a rollback that was already
// applied under the same idempotency key (without its changes, which were
// reported then).
func (e *Engine) rollbackDone(in RollbackInput, ref Ref) (*RollbackResult, error) {
	out := &RollbackResult{Project: in.Project, Task: in.Task, Changes: []Change{}}
	seq, err := strconv.ParseUint(ref.ID, 10, 64)
	if err != nil { // the first call had nothing to roll back
		return out, nil
	}
	err = e.view(func(tx store.Tx) error {
		r, err := tx.Record(seq)
		if err != nil || r == nil {
			return err
		}
		var p projection.RollbackApplied
		if err := msgpack.Unmarshal(r.Data, &p); err != nil {
			return err
		}
		out.ToSeq, out.Applied, out.Seq = p.ToSeq, true, seq
		return nil
	})
	return out, err
}

// rollbackPlan is what a rollback appends: its rollback.applied payload,
// and for a rollback of the whole project the streams of the plans and
// tasks it touches, each of which gets a rollback.marked event.
type rollbackPlan struct {
	payload *projection.RollbackApplied
	marks   []streamMark
}

// streamMark is the rollback.marked event of one entity's stream.
type streamMark struct {
	stream  string
	removed bool // the rollback removes the entity of the stream
}

// markRolledBack appends p's rollback.marked events after the
// rollback.applied event at seq: each moves its entity's stream, and so
// its version, on (a rollback of one task is on that task's stream
// already, and has none).
func (w *writer) markRolledBack(project string, seq uint64, p *rollbackPlan) error {
	for _, m := range p.marks {
		mark := projection.RollbackMarked{Rollback: seq, ToSeq: p.payload.ToSeq, Removed: m.removed}
		if _, err := w.emit(m.stream, store.Any, project, projection.TypeRollbackMarked, mark); err != nil {
			return err
		}
	}
	return nil
}

// planRollback computes the changes and what to append (nil when there is
// nothing to roll back).
func (e *Engine) planRollback(tx store.Tx, src source, in RollbackInput) (*RollbackResult, *rollbackPlan, error) {
	if _, err := mustProject(src, in.Project); err != nil {
		return nil, nil, err
	}
	seq, err := resolvePoint(tx, src, in.Project, in.To)
	if err != nil {
		return nil, nil, err
	}
	if err := begunAt(tx, projection.ProjectStream(in.Project), "project "+in.Project, seq); err != nil {
		return nil, nil, err
	}
	head, _ := tx.Head()
	if in.DryRun && in.Task == "" { // a preview: the changes, read as a diff reads them
		return e.previewRollback(tx, in, seq, head)
	}
	// Both states in one ScopesAt, as a diff reads them: the current one
	// is folded on from the target, so an entity no event changed since
	// is the same pointer in both, and is left out before they are
	// compared (unsharedScopes) rather than encoded twice.
	states, err := snapstore.ScopesAt(tx, in.Project, []uint64{seq, head}, e.warn)
	if err != nil {
		return nil, nil, err
	}
	target, current := states[0], states[1]
	if in.Task != "" {
		if err := begunAt(tx, projection.TaskStream(in.Project, in.Task), "task "+in.Task, seq); err != nil {
			return nil, nil, fmt.Errorf("%w; cancel it instead", err)
		}
		if target, current, err = taskScopes(target, current, in.Task, seq); err != nil {
			return nil, nil, err
		}
	}
	current, target = unsharedScopes(current, target)
	// The changes compare only what also encodes apart, a page of them
	// when asked (DiffPage); the restore is of every entity.
	cx, tx2 := sameEncoded(current, target)
	changes, total := DiffPage(cx, tx2, 0, in.Limit)
	res := &RollbackResult{Project: in.Project, ToSeq: seq, Task: in.Task, Changes: flagWorld(changes, cx, tx2),
		Total: total, Truncated: len(changes) < total}
	payload, err := rollbackPayload(current, target, in, seq)
	if err != nil || payload == nil {
		return res, nil, err
	}
	streamPositions(tx, in.Project, payload)
	if in.Task != "" {
		if err := checkRestoredDeps(src, in.Project, payload.Tasks); err != nil {
			return nil, nil, err
		}
		return res, &rollbackPlan{payload: payload}, nil
	}
	return res, &rollbackPlan{payload: payload, marks: marksOf(in.Project, current, payload)}, nil
}

// marksOf returns the streams of the plans and tasks a rollback of the
// whole project touches, in order: those it restores or removes, and the
// tasks of the approvals and exec records it restores or removes (their
// events are on their task's stream). Approvals and exec records of no
// task are on the project's stream, which the rollback itself is on.
func marksOf(project string, current *projection.Scope, p *projection.RollbackApplied) []streamMark {
	removed := map[string]bool{}
	touch := func(stream string, gone bool) { removed[stream] = removed[stream] || gone }
	taskOf := func(task string) {
		if task != "" {
			touch(projection.TaskStream(project, task), false)
		}
	}
	for _, v := range p.Plans {
		touch(projection.PlanStream(project, v.ID), false)
	}
	for _, v := range p.Tasks {
		touch(projection.TaskStream(project, v.ID), false)
	}
	for _, v := range p.Approvals {
		taskOf(v.Task)
	}
	for _, v := range p.Execs {
		taskOf(v.Task)
	}
	var owner owners
	for _, rm := range p.Removed {
		switch rm.Kind {
		case projection.KindPlan:
			touch(projection.PlanStream(project, rm.ID), true)
		case projection.KindTask:
			touch(projection.TaskStream(project, rm.ID), true)
		default:
			taskOf(owner.of(current, rm))
		}
	}
	out := make([]streamMark, 0, len(removed))
	for _, stream := range slices.Sorted(maps.Keys(removed)) {
		out = append(out, streamMark{stream: stream, removed: removed[stream]})
	}
	return out
}

// owners finds the task of an approval or exec record a rollback removes
// ("" for one of no task), by maps of current's approvals and exec
// records made at the first question: a rollback that removes thousands
// of them would otherwise search the lists once for each.
type owners struct {
	approvals, execs map[string]string
}

func (o *owners) of(current *projection.Scope, rm projection.Removed) string {
	switch rm.Kind {
	case projection.KindApproval:
		if o.approvals == nil {
			o.approvals = make(map[string]string, len(current.Approvals))
			for _, a := range current.Approvals {
				o.approvals[a.ID] = a.Task
			}
		}
		return o.approvals[rm.ID]
	case projection.KindExec:
		if o.execs == nil {
			o.execs = make(map[string]string, len(current.Execs))
			for _, x := range current.Execs {
				o.execs[x.ID] = x.Task
			}
		}
		return o.execs[rm.ID]
	}
	return ""
}

// begunAt refuses (ErrConflict) a point before the first event of the
// scope whose stream is given: the scope did not exist there, so there
// is nothing of it to go back to (a rollback would print it removed and
// leave it). A stream with no event passes: the caller says it is not
// found.
func begunAt(tx store.Tx, stream, what string, seq uint64) error {
	first, err := firstSeq(tx, stream)
	if err != nil || first == 0 || seq >= first {
		return err
	}
	return fmt.Errorf("%w: %s did not exist at seq %d: its first event is seq %d", store.ErrConflict, what, seq, first)
}

// firstSeq returns the seq of stream's first event (0 when it has none).
func firstSeq(tx store.Tx, stream string) (uint64, error) {
	var seq uint64
	err := tx.ReadStream(stream, 1, func(r *store.Record) error {
		seq = r.Seq
		return store.ErrStop
	})
	return seq, err
}

// streamPositions gives each restored task and plan its stream's current
// version: an entity that comes back (removed by an earlier rollback)
// would otherwise carry its version at the target, which --if-version
// would then never match. The fold keeps the current version of entities
// that still exist; this covers the others, inside the event, so that the
// fold stays pure.
func streamPositions(tx store.Tx, project string, p *projection.RollbackApplied) {
	for i := range p.Tasks {
		p.Tasks[i].Version, _ = tx.StreamVersion(projection.TaskStream(project, p.Tasks[i].ID))
	}
	for i := range p.Plans {
		p.Plans[i].Version, _ = tx.StreamVersion(projection.PlanStream(project, p.Plans[i].ID))
	}
}

// unsharedScopes returns a and b without the plans, tasks, approvals and
// exec records that are the same pointer in both: unchanged, so neither
// a change nor something to restore. What is left gives the same changes
// and the same restore. The project is kept, and checkpoints (a rollback
// does not restore them) are left out.
func unsharedScopes(a, b *projection.Scope) (*projection.Scope, *projection.Scope) {
	x := &projection.Scope{Project: a.Project}
	y := &projection.Scope{Project: b.Project}
	x.Plans, y.Plans = unsharedList(a.Plans, b.Plans)
	x.Tasks, y.Tasks = unsharedList(a.Tasks, b.Tasks)
	x.Approvals, y.Approvals = unsharedList(a.Approvals, b.Approvals)
	x.Execs, y.Execs = unsharedList(a.Execs, b.Execs)
	return x, y
}

// unsharedList returns a and b, lists by id, without the entities that
// are the same pointer in both.
func unsharedList[V comparable](a, b []V) ([]V, []V) {
	shared := make(map[V]bool, len(a))
	for _, v := range a {
		shared[v] = true
	}
	in := make(map[V]bool, len(b))
	y := []V{}
	for _, v := range b {
		if shared[v] {
			in[v] = true
		} else {
			y = append(y, v)
		}
	}
	x := []V{}
	for _, v := range a {
		if !in[v] {
			x = append(x, v)
		}
	}
	return x, y
}

// taskScopes narrows both states to one task, its approvals and its exec
// records. The task must have existed at the target.
func taskScopes(target, current *projection.Scope, task string, seq uint64) (*projection.Scope, *projection.Scope, error) {
	narrow := func(s *projection.Scope) *projection.Scope {
		return &projection.Scope{
			Tasks:     filter(s.Tasks, func(t *projection.Task) bool { return t.ID == task }),
			Approvals: filter(s.Approvals, func(a *projection.Approval) bool { return a.Task == task }),
			Execs:     filter(s.Execs, func(x *projection.Exec) bool { return x.Task == task }),
		}
	}
	t, c := narrow(target), narrow(current)
	if len(t.Tasks) == 0 && len(c.Tasks) == 0 {
		return nil, nil, fmt.Errorf("%w: task %s", ErrNotFound, task)
	}
	if len(t.Tasks) == 0 {
		return nil, nil, fmt.Errorf("%w: task %s did not exist at seq %d; cancel it instead", store.ErrConflict, task, seq)
	}
	return t, c, nil
}

func filter[T any](s []T, keep func(T) bool) []T {
	out := []T{}
	for _, v := range s {
		if keep(v) {
			out = append(out, v)
		}
	}
	return out
}

// rollbackPayload builds the event: the target's version of every entity
// that differs, and the entities that exist now but not at the target.
func rollbackPayload(current, target *projection.Scope, in RollbackInput, seq uint64) (*projection.RollbackApplied, error) {
	p := &projection.RollbackApplied{ToSeq: seq, Checkpoint: in.To.Checkpoint, Task: in.Task, Reason: in.Reason}
	if in.Task == "" && current.Project != nil && target.Project != nil &&
		!sameProject(current.Project, target.Project) {
		p.Project = target.Project
	}
	var err error
	if p.Plans, err = restoreList(current.Plans, target.Plans, projection.KindPlan, &p.Removed); err != nil {
		return nil, err
	}
	if p.Tasks, err = restoreList(current.Tasks, target.Tasks, projection.KindTask, &p.Removed); err != nil {
		return nil, err
	}
	if p.Approvals, err = restoreList(current.Approvals, target.Approvals, projection.KindApproval, &p.Removed); err != nil {
		return nil, err
	}
	if p.Execs, err = restoreList(current.Execs, target.Execs, projection.KindExec, &p.Removed); err != nil {
		return nil, err
	}
	if p.Project == nil && len(p.Plans)+len(p.Tasks)+len(p.Approvals)+len(p.Execs)+len(p.Removed) == 0 {
		return nil, nil
	}
	return p, nil
}

// restoreList returns the target entities whose state differs from the
// current one, and adds to removed those that exist only now. States are
// compared without their stream position and last change (Version, Seq,
// UpdatedAt), which a restore does not take back: rolling back twice to
// the same point changes nothing the second time.
func restoreList[T any, P interface {
	*T
	EntityID() string
	EntityMeta() *projection.Meta
}](current, target []P, kind string, removed *[]projection.Removed) ([]T, error) {
	now := make(map[string]P, len(current))
	for _, v := range current {
		now[v.EntityID()] = v
	}
	var out []T
	for _, v := range target {
		cur, ok := now[v.EntityID()]
		delete(now, v.EntityID())
		if ok && cur == v {
			continue
		}
		if ok { // only an entity in both states is encoded, to compare
			a, err := stateBytes[T, P](cur)
			if err != nil {
				return nil, err
			}
			b, err := stateBytes[T, P](v)
			if err != nil {
				return nil, err
			}
			if bytes.Equal(a, b) {
				continue
			}
		}
		out = append(out, *v)
	}
	for _, id := range slices.SortedFunc(maps.Keys(now), projection.CompareIDs) {
		*removed = append(*removed, projection.Removed{Kind: kind, ID: id})
	}
	return out, nil
}

// stateBytes encodes an entity without what changes with its stream's
// position: Version, Seq and UpdatedAt.
func stateBytes[T any, P interface {
	*T
	EntityMeta() *projection.Meta
}](v P) ([]byte, error) {
	c := *v
	m := P(&c).EntityMeta()
	m.Version, m.Seq, m.UpdatedAt = 0, 0, 0
	if b, ok := projection.AppendEntity(nil, P(&c)); ok { // the same bytes, without reflection
		return b, nil
	}
	return marshal(&c)
}

// checkRestoredDeps refuses to restore a task whose dependencies at the
// target no longer exist, or would now close a cycle.
func checkRestoredDeps(src projection.Store, project string, tasks []projection.Task) error {
	for _, t := range tasks {
		if err := checkRestoredParent(src, project, t); err != nil {
			return err
		}
		for _, d := range t.Deps {
			if _, err := mustTask(src, project, d); err != nil {
				return fmt.Errorf("%w: restoring %s would depend on %s, which no longer exists", store.ErrConflict, t.ID, d)
			}
			path, err := depPath(src, project, d, t.ID)
			if err != nil {
				return err
			}
			if path != nil {
				return fmt.Errorf("%w: restoring %s would close a cycle: %s", ErrCycle, t.ID, strings.Join(append([]string{t.ID}, path...), " -> "))
			}
		}
	}
	return nil
}

// checkRestoredParent refuses to restore t with a parent whose chain of
// parents, as it is now, leads back to t: the rollback of one task would
// close a loop that its edits since (or another task's) were refused for.
// A parent that no longer exists is left dangling, as it is shown.
func checkRestoredParent(src projection.Store, project string, t projection.Task) error {
	chain := []string{t.ID}
	for id := t.Parent; id != ""; {
		chain = append(chain, id)
		if id == t.ID {
			return fmt.Errorf("%w: restoring %s would make it a subtask of itself (%s)", ErrParentCycle, t.ID, strings.Join(chain, " > "))
		}
		if len(chain) > maxDepth {
			return nil
		}
		p, err := src.Task(project, id)
		if err != nil || p == nil {
			return err
		}
		id = p.Parent
	}
	return nil
}

// flagWorld marks the changes that undo, in flowctl, something that
// happened in the world: exec records and granted approvals the rollback
// takes away or changes back.
func flagWorld(changes []Change, current, target *projection.Scope) []Change {
	granted := map[string]bool{}
	for _, a := range current.Approvals {
		granted[a.ID] = a.Status == projection.ApprovalGranted
	}
	for i, c := range changes {
		switch {
		case c.Kind == "exec" && c.Op == OpRemoved:
			changes[i].World = "the command ran and is not undone by a rollback"
		case c.Kind == "approval" && granted[c.ID] && c.Op != OpAdded:
			changes[i].World = "the approval was granted and may have been acted on"
		}
	}
	return changes
}
