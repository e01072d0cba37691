package flow

import (
	"bytes"
	"fmt"
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

// UndoInput is the input of Undo.
type UndoInput struct {
	Project string `json:"project"`
	Reason  string `json:"reason,omitempty"`
	DryRun  bool   `json:"dry_run,omitempty"`
	Write
}

// UndoneEvent is one event of the command an undo reverts.
type UndoneEvent struct {
	Seq    uint64 `json:"seq"`
	Type   string `json:"type"`
	Stream string `json:"stream"`
}

// UndoResult says what an undo reverted (or, dry, would revert).
type UndoResult struct {
	Project string        `json:"project"`
	Actor   string        `json:"actor"`
	First   uint64        `json:"first_seq"` // the undone command's events: seqs First to Last
	Last    uint64        `json:"last_seq"`
	Events  []UndoneEvent `json:"events"`
	Changes []Change      `json:"changes"` // from the current state to the restored one
	Applied bool          `json:"applied"`
	Seq     uint64        `json:"seq,omitempty"` // the rollback.applied event of the undo
}

// Undo reverts this engine's actor's last command in a project: the
// entities its events changed go back to their state before it, as one
// rollback.applied event (with Undone set) and its rollback.marked
// events, as Rollback would append them; history is kept. The events of
// one command share a correlation id (the id of its first event; events
// written before flowctl recorded it each count as a command of their
// own). Repeated, Undo walks further back: it skips undo events and the
// commands already undone, so an undo of an undo is not a redo, it undoes
// the command before. A command whose entities another command has
// changed since is refused (ErrConflict) naming them; so is the
// project's creation (nothing before it to go back to) and an actor with
// nothing to undo (ErrNotFound). DryRun computes the same and appends
// nothing.
func (e *Engine) Undo(in UndoInput) (*UndoResult, error) {
	if err := check.Text("reason", in.Reason, MaxText, false); err != nil {
		return nil, err
	}
	var out *UndoResult
	if in.DryRun {
		err := e.view(func(tx store.Tx) error {
			var err error
			out, _, err = e.planUndo(tx, projstore.NewTx(tx), in)
			return err
		})
		return out, err
	}
	_, err := e.command(in.Write, "undo", in, func(w *writer) (Ref, error) {
		ref := Ref{Kind: "undo", Project: in.Project}
		res, p, err := e.planUndo(w.tx, w, in)
		if err != nil {
			return ref, err
		}
		out = res
		r, err := w.emit(projection.ProjectStream(in.Project), in.expect(), in.Project, projection.TypeRollbackApplied, p.payload)
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
	if out == nil { // an idempotent retry
		return &UndoResult{Project: in.Project, Actor: e.opts.Actor, Events: []UndoneEvent{}, Changes: []Change{}}, nil
	}
	return out, nil
}

// command is one command's events in a project, as the log groups them.
type command struct {
	actor       string
	first, last uint64
	events      []UndoneEvent // in seq order
	undo        bool          // an undo: never undone itself
}

// lastCommand finds actor's last command in project that is neither an
// undo nor undone, walking the project's events back from the head.
func lastCommand(tx store.Tx, project, actor string) (*command, error) {
	undone := map[uint64]bool{} // first seqs of the commands undone
	var found, cur *command
	var key store.ID
	done := func() {
		if cur == nil {
			return
		}
		if !cur.undo && !undone[cur.first] && cur.actor == actor {
			found = cur
		}
		cur = nil
	}
	err := tx.ReadProjectBack(project, 0, func(r *store.Record) error {
		k := r.Correlation
		if k.IsZero() {
			k = r.ID
		}
		if cur != nil && k != key {
			if done(); found != nil {
				return store.ErrStop
			}
		}
		if cur == nil {
			cur, key = &command{actor: r.Actor, last: r.Seq}, k
		}
		cur.first = r.Seq
		cur.events = append(cur.events, UndoneEvent{Seq: r.Seq, Type: r.Type, Stream: r.Stream})
		if u, ok := undoneRange(r); ok {
			cur.undo, undone[u.First] = true, true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if found == nil {
		done()
	}
	if found != nil {
		slices.Reverse(found.events)
	}
	return found, nil
}

// undoneRange returns the command an undo event reverted.
func undoneRange(r *store.Record) (projection.SeqRange, bool) {
	if r.Type != projection.TypeRollbackApplied || !bytes.Contains(r.Data, []byte("undone")) {
		return projection.SeqRange{}, false
	}
	var p struct {
		Undone *projection.SeqRange `msgpack:"undone"`
	}
	if err := msgpack.Unmarshal(r.Data, &p); err != nil || p.Undone == nil {
		return projection.SeqRange{}, false
	}
	return *p.Undone, true
}

// planUndo finds the command to undo and computes its undo.
func (e *Engine) planUndo(tx store.Tx, src source, in UndoInput) (*UndoResult, *rollbackPlan, error) {
	if _, err := mustProject(src, in.Project); err != nil {
		return nil, nil, err
	}
	actor := e.opts.Actor
	c, err := lastCommand(tx, in.Project, actor)
	if err != nil {
		return nil, nil, err
	}
	if c == nil {
		return nil, nil, fmt.Errorf("%w: nothing of %s to undo in project %s", ErrNotFound, actorName(actor), in.Project)
	}
	first, err := firstSeq(tx, projection.ProjectStream(in.Project))
	if err != nil {
		return nil, nil, err
	}
	if c.first <= first {
		return nil, nil, fmt.Errorf("%w: the last command of %s (seqs %d-%d) created project %s; archive it instead",
			store.ErrConflict, actorName(actor), c.first, c.last, in.Project)
	}
	head, _ := tx.Head()
	states, err := snapstore.ScopesAt(tx, in.Project, []uint64{c.first - 1, c.last, head}, e.warn)
	if err != nil {
		return nil, nil, err
	}
	before, after, now := states[0], states[1], states[2]
	d := &undoDiff{}
	if err := d.of(before, after, now); err != nil {
		return nil, nil, err
	}
	if len(d.conflicts) > 0 {
		return nil, nil, fmt.Errorf("%w: cannot undo seqs %d-%d of %s: changed since by another command: %s",
			store.ErrConflict, c.first, c.last, actorName(actor), strings.Join(d.named(tx, now), ", "))
	}
	target, current := d.narrow(before), d.narrow(now)
	res := &UndoResult{Project: in.Project, Actor: actor, First: c.first, Last: c.last, Events: c.events,
		Changes: flagWorld(scopediff.Of(current, target), current, target)}
	reason := in.Reason
	if reason == "" {
		reason = fmt.Sprintf("undo of seqs %d-%d", c.first, c.last)
	}
	payload, err := rollbackPayload(current, target, RollbackInput{Reason: reason}, c.first-1)
	if err != nil {
		return nil, nil, err
	}
	if payload == nil { // the command changed no state (a checkpoint): its undo marks it undone
		payload = &projection.RollbackApplied{ToSeq: c.first - 1, Reason: reason}
	}
	payload.Undone = &projection.SeqRange{First: c.first, Last: c.last}
	streamPositions(tx, in.Project, payload)
	if err := checkUndoDeps(now, payload); err != nil {
		return nil, nil, err
	}
	return res, &rollbackPlan{payload: payload, marks: marksOf(in.Project, current, payload)}, nil
}

// undoDiff is what one command changed (the entities that differ between
// the states before and after it) and which of them have changed since.
type undoDiff struct {
	project   bool                       // the project's own fields
	touched   map[string]map[string]bool // kind -> ids
	conflicts []projection.Removed       // kind and id of each changed since
}

func (d *undoDiff) of(before, after, now *projection.Scope) error {
	d.touched = map[string]map[string]bool{}
	d.project = !sameProject(before.Project, after.Project)
	if d.project && !sameProject(after.Project, now.Project) {
		d.conflicts = append(d.conflicts, projection.Removed{Kind: projection.KindProject, ID: after.Project.Name})
	}
	for _, err := range []error{
		touchedOf(d, projection.KindPlan, before.Plans, after.Plans, now.Plans),
		touchedOf(d, projection.KindTask, before.Tasks, after.Tasks, now.Tasks),
		touchedOf(d, projection.KindApproval, before.Approvals, after.Approvals, now.Approvals),
		touchedOf(d, projection.KindExec, before.Execs, after.Execs, now.Execs),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// sameProject compares what a rollback restores of a project.
func sameProject(a, b *projection.Project) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Description == b.Description && a.Archived == b.Archived && slices.Equal(a.Settings, b.Settings)
}

// touchedOf adds to d the entities of one kind that differ between before
// and after, and those of them that differ between after and now.
func touchedOf[T any, P interface {
	*T
	EntityID() string
	EntityMeta() *projection.Meta
}](d *undoDiff, kind string, before, after, now []P) error {
	b, a, n := byID(before), byID(after), byID(now)
	ids := map[string]bool{}
	for id, v := range a {
		same, err := sameState[T, P](b[id], v)
		if err != nil {
			return err
		}
		if !same {
			ids[id] = true
		}
	}
	for id := range b {
		if a[id] == nil {
			ids[id] = true
		}
	}
	for _, id := range slices.SortedFunc(func(yield func(string) bool) {
		for id := range ids {
			if !yield(id) {
				return
			}
		}
	}, projection.CompareIDs) {
		same, err := sameState[T, P](a[id], n[id])
		if err != nil {
			return err
		}
		if !same {
			d.conflicts = append(d.conflicts, projection.Removed{Kind: kind, ID: id})
		}
	}
	d.touched[kind] = ids
	return nil
}

func byID[P interface{ EntityID() string }](s []P) map[string]P {
	m := make(map[string]P, len(s))
	for _, v := range s {
		m[v.EntityID()] = v
	}
	return m
}

// sameState compares two entities (nil: absent) without their stream
// position and last change.
func sameState[T any, P interface {
	*T
	EntityMeta() *projection.Meta
}](x, y P) (bool, error) {
	if x == nil || y == nil || x == y {
		return x == y, nil
	}
	a, err := stateBytes[T, P](x)
	if err != nil {
		return false, err
	}
	b, err := stateBytes[T, P](y)
	return bytes.Equal(a, b), err
}

// narrow is s with only the touched entities (and the project, when its
// fields were changed).
func (d *undoDiff) narrow(s *projection.Scope) *projection.Scope {
	out := &projection.Scope{}
	if d.project {
		out.Project = s.Project
	}
	out.Plans = filter(s.Plans, func(v *projection.Plan) bool { return d.touched[projection.KindPlan][v.ID] })
	out.Tasks = filter(s.Tasks, func(v *projection.Task) bool { return d.touched[projection.KindTask][v.ID] })
	out.Approvals = filter(s.Approvals, func(v *projection.Approval) bool { return d.touched[projection.KindApproval][v.ID] })
	out.Execs = filter(s.Execs, func(v *projection.Exec) bool { return d.touched[projection.KindExec][v.ID] })
	return out
}

// named words the conflicts: kind, id, and who changed it last, when.
func (d *undoDiff) named(tx store.Tx, now *projection.Scope) []string {
	last := map[string]uint64{}
	note := func(kind, id string, m *projection.Meta) { last[kind+" "+id] = m.Seq }
	if now.Project != nil {
		note(projection.KindProject, now.Project.Name, &now.Project.Meta)
	}
	for _, v := range now.Plans {
		note(projection.KindPlan, v.ID, &v.Meta)
	}
	for _, v := range now.Tasks {
		note(projection.KindTask, v.ID, &v.Meta)
	}
	for _, v := range now.Approvals {
		note(projection.KindApproval, v.ID, &v.Meta)
	}
	for _, v := range now.Execs {
		note(projection.KindExec, v.ID, &v.Meta)
	}
	out := make([]string, 0, len(d.conflicts))
	for _, c := range d.conflicts {
		name := c.Kind + " " + c.ID
		seq, ok := last[name]
		if !ok {
			out = append(out, name+" (removed since)")
			continue
		}
		if r, err := tx.Record(seq); err == nil && r != nil {
			name += fmt.Sprintf(" (at seq %d by %s)", seq, actorName(r.Actor))
		}
		out = append(out, name)
	}
	return out
}

// checkUndoDeps refuses an undo that would leave a restored task
// depending on a task that does not exist, or close a cycle, in the state
// it makes: now, with the payload's tasks restored and removed ones gone
// (a restored task may depend on another the same undo restores).
func checkUndoDeps(now *projection.Scope, p *projection.RollbackApplied) error {
	deps := make(map[string][]string, len(now.Tasks))
	for _, t := range now.Tasks {
		deps[t.ID] = t.Deps
	}
	for _, rm := range p.Removed {
		if rm.Kind == projection.KindTask {
			delete(deps, rm.ID)
		}
	}
	for _, t := range p.Tasks {
		deps[t.ID] = t.Deps
	}
	for _, t := range p.Tasks {
		for _, d := range t.Deps {
			if _, ok := deps[d]; !ok {
				return fmt.Errorf("%w: undoing would make %s depend on %s, which no longer exists", store.ErrConflict, t.ID, d)
			}
			if path := pathTo(deps, d, t.ID, map[string]bool{}); path != nil {
				return fmt.Errorf("%w: undoing would close a cycle: %s", ErrCycle, strings.Join(append([]string{t.ID}, path...), " -> "))
			}
		}
	}
	return nil
}

// pathTo returns a path of dependencies from one task to another (both
// included), or nil.
func pathTo(deps map[string][]string, from, to string, seen map[string]bool) []string {
	if from == to {
		return []string{to}
	}
	if seen[from] {
		return nil
	}
	seen[from] = true
	for _, d := range deps[from] {
		if p := pathTo(deps, d, to, seen); p != nil {
			return append([]string{from}, p...)
		}
	}
	return nil
}
