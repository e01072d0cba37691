package flow

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/internal/snapstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// This file is the read API that the rooms beside the engine (package
// digest: prime and the reports) build on: one consistent read of the
// projections, the project's events without their JSON, and the small
// rules (readiness, counts, expiry) that a digest shows as the engine
// decides them.

// Reader is one consistent read of the projections: those of one read
// transaction, or for a view At a point the state at that point, with
// the head seq they are at, so that the events up to Head and what the
// reader returns tell one story. A Reader is valid only inside the
// function given to Engine.Read; the entities it returns are read-only
// (see "Entities are read-only" in doc.go).
type Reader struct {
	src  source
	tx   store.Tx
	head uint64
}

// Read runs fn with a Reader of the engine's current state (or, on a view
// At a point, of that point). fn runs inside one read transaction: keep
// it short, and do no writes through the engine from inside it.
func (e *Engine) Read(fn func(r *Reader) error) error {
	return e.view(func(tx store.Tx) error {
		if e.at != nil {
			src, seq, err := e.atState(tx)
			if err != nil {
				return err
			}
			return fn(&Reader{src: src, tx: tx, head: seq})
		}
		head, _ := tx.Head()
		return e.readTx(tx, func(src source) error { return fn(&Reader{src: src, tx: tx, head: head}) })
	})
}

// Head is the seq of the last event the reader's state includes.
func (r *Reader) Head() uint64 { return r.head }

// Project returns a project, or ErrNotFound.
func (r *Reader) Project(name string) (*projection.Project, error) { return mustProject(r.src, name) }

// Task returns a task of project, or ErrNotFound.
func (r *Reader) Task(project, id string) (*projection.Task, error) {
	return mustTask(r.src, project, id)
}

// Plan returns a plan of project, or ErrNotFound.
func (r *Reader) Plan(project, id string) (*projection.Plan, error) {
	return found(r.src.Plan(project, id))("plan", project, id)
}

// Approval returns an approval of project, or ErrNotFound.
func (r *Reader) Approval(project, id string) (*projection.Approval, error) {
	return found(r.src.Approval(project, id))("approval", project, id)
}

// Exec returns an exec record of project, or ErrNotFound.
func (r *Reader) Exec(project, id string) (*projection.Exec, error) {
	return found(r.src.Exec(project, id))("exec record", project, id)
}

// Checkpoint returns a checkpoint of project, or ErrNotFound.
func (r *Reader) Checkpoint(project, id string) (*projection.Checkpoint, error) {
	return found(r.src.Checkpoint(project, id))("checkpoint", project, id)
}

// found turns a nil entity into ErrNotFound naming it.
func found[T any](v *T, err error) func(what, project, id string) (*T, error) {
	return func(what, project, id string) (*T, error) {
		if err == nil && v == nil {
			err = fmt.Errorf("%w: %s %s in project %s", ErrNotFound, what, id, project)
		}
		if err != nil {
			return nil, err
		}
		return v, nil
	}
}

// TaskIDs returns the ids of project's tasks with status, from the status
// index (sorted by number), without reading the tasks.
func (r *Reader) TaskIDs(project, status string) ([]string, error) {
	return r.src.SummaryIDs(projstore.BucketTasks, project, status)
}

// ApprovalIDs returns the ids of project's approvals with status, from
// the status index (sorted by number).
func (r *Reader) ApprovalIDs(project, status string) ([]string, error) {
	return r.src.SummaryIDs(projstore.BucketApprovals, project, status)
}

// PlanCounts returns how many plans of project have each status, from
// the status index.
func (r *Reader) PlanCounts(project string) (map[string]int, error) {
	return r.src.SummaryCounts(projstore.BucketPlans, project)
}

// PlanIDs returns the ids of project's plans with status, from the status
// index (sorted by number).
func (r *Reader) PlanIDs(project, status string) ([]string, error) {
	return r.src.SummaryIDs(projstore.BucketPlans, project, status)
}

// TaskCounts counts project's tasks by status, from the status index.
func (r *Reader) TaskCounts(project string) (TaskCounts, error) {
	var c TaskCounts
	counts, err := r.src.SummaryCounts(projstore.BucketTasks, project)
	for status, n := range counts {
		c.add(status, n)
	}
	return c, err
}

// ClaimedTaskIDs returns the ids of project's tasks whose claim holds at
// now, from the status index (sorted by number).
func (r *Reader) ClaimedTaskIDs(project string, now time.Time) ([]string, error) {
	return r.src.ClaimedTaskIDs(project, now)
}

// StreamEvents calls fn for each event of stream up to the reader's head,
// oldest first, in the reader's transaction: events with their envelope
// and Raw, as ProjectEvents gives them. It reads the stream's index, not
// the rest of the log.
func (r *Reader) StreamEvents(stream string, fn func(Event) error) error {
	return r.tx.ReadStream(stream, 1, func(rec *store.Record) error {
		if rec.Seq > r.head {
			return store.ErrStop
		}
		return fn(rawEvent(rec))
	})
}

// EventAt returns the event at seq (at most the reader's head) as
// StreamEvents gives it, or ErrNotFound.
func (r *Reader) EventAt(seq uint64) (Event, error) {
	rec, err := r.tx.Record(seq)
	if err == nil && (rec == nil || seq > r.head) {
		err = fmt.Errorf("%w: event %d", ErrNotFound, seq)
	}
	if err != nil {
		return Event{}, err
	}
	return rawEvent(rec), nil
}

// rawEvent is r as ProjectEvents gives it: the envelope and Raw.
func rawEvent(r *store.Record) Event {
	return Event{Seq: r.Seq, Stream: r.Stream, Version: r.Version, Type: r.Type, Schema: r.Schema,
		Time: r.Time, Actor: r.Actor, Session: r.Session, Project: r.Project, Raw: r.Data}
}

// ReadyTasks returns project's tasks that are ready for actor at now, by
// the rule of ReadyFor, sorted by id. It reads the tasks the status index
// lists as todo or blocked, and the status of their dependencies, as
// Status does: never every task of the project.
func (r *Reader) ReadyTasks(project, actor string, now time.Time) ([]*projection.Task, error) {
	var ids []string
	for _, status := range []string{projection.StatusTodo, projection.StatusBlocked} {
		more, err := r.src.SummaryIDs(projstore.BucketTasks, project, status)
		if err != nil {
			return nil, err
		}
		ids = append(ids, more...)
	}
	tasks, status, err := summarizedTasks(r.src, project, projstore.SortIDs(ids))
	if err != nil {
		return nil, err
	}
	var out []*projection.Task
	for _, t := range tasks {
		if len(notReady(t, status, actor, now)) == 0 {
			out = append(out, t)
		}
	}
	return out, nil
}

// PlanCount returns how many tasks plan has and how many of them are
// done: from the status index on the file, from the tasks on a view at a
// point.
func (r *Reader) PlanCount(project, plan string) (tasks, done int, err error) {
	if tx, ok := r.src.(*projstore.Tx); ok {
		return tx.PlanCount(project, plan)
	}
	all, err := r.src.Tasks(project)
	for _, t := range all {
		if t.Plan == plan {
			tasks++
			if t.Status == projection.StatusDone {
				done++
			}
		}
	}
	return tasks, done, err
}

// ProjectLog is what a project's log holds up to a reader's head, as
// counted without reading it: its events, its streams and its notes of
// kind memory.
type ProjectLog struct {
	Events, Streams, Memory int
}

// ProjectLog counts project's events, streams (those with an event) and
// notes of kind memory up to the reader's head, and calls memory with the
// seqs of those notes, newest first, until it returns ErrStop (memory may
// be nil). It reads the digest log index that every command and a
// rebuild keep, and the project's events after its mark (all of them on a
// file no command of this flowctl has written to, or on a view at an
// earlier point).
func (r *Reader) ProjectLog(project string, memory func(seq uint64) error) (ProjectLog, error) {
	m, err := projstore.ReadDigestMark(r.tx, project)
	if err != nil {
		return ProjectLog{}, err
	}
	if m.Seq > r.head {
		m = projstore.DigestMark{}
	}
	indexed := m.Seq
	var tail []uint64
	err = r.tx.ReadProject(project, m.Seq+1, func(rec *store.Record) error {
		if rec.Seq > r.head {
			return store.ErrStop
		}
		if m.DigestCount(rec) {
			tail = append(tail, rec.Seq)
		}
		return nil
	})
	if err != nil {
		return ProjectLog{}, err
	}
	out := ProjectLog{Events: int(m.Events), Streams: int(m.Streams), Memory: int(m.Memory)}
	if memory == nil {
		return out, nil
	}
	for i := len(tail) - 1; i >= 0; i-- {
		if err := memory(tail[i]); err != nil {
			if err == ErrStop {
				return out, nil
			}
			return out, err
		}
	}
	if indexed == 0 {
		return out, nil
	}
	return out, projstore.DigestMemory(r.tx, project, memory)
}

// maxBackWindow is the largest window of seqs ProjectEventsBack reads at
// once.
const maxBackWindow = 1 << 16

// ProjectEventsBack calls fn for each event of project up to seq until
// (at most the reader's head), newest first, as ProjectEvents gives them,
// until fn returns ErrStop. It reads windows of seqs backwards through
// the project's index, each four times the last up to maxBackWindow seqs,
// so that it holds at most one window's events at a time.
func (r *Reader) ProjectEventsBack(project string, until uint64, fn func(Event) error) error {
	hi := min(until, r.head)
	for window := uint64(256); hi > 0; window = min(4*window, maxBackWindow) {
		lo := uint64(1)
		if hi > window {
			lo = hi - window + 1
		}
		var page []Event
		err := r.tx.ReadProject(project, lo, func(rec *store.Record) error {
			if rec.Seq > hi {
				return store.ErrStop
			}
			page = append(page, rawEvent(rec))
			return nil
		})
		if err != nil {
			return err
		}
		for i := len(page) - 1; i >= 0; i-- {
			if err := fn(page[i]); err != nil {
				if err == ErrStop {
					return nil
				}
				return err
			}
		}
		hi = lo - 1
	}
	return nil
}

// Tasks returns the tasks of project, sorted by id.
func (r *Reader) Tasks(project string) ([]*projection.Task, error) { return r.src.Tasks(project) }

// Plans returns the plans of project, sorted by id.
func (r *Reader) Plans(project string) ([]*projection.Plan, error) { return r.src.Plans(project) }

// Approvals returns the approvals of project, sorted by id.
func (r *Reader) Approvals(project string) ([]*projection.Approval, error) {
	return r.src.Approvals(project)
}

// Execs returns the exec records of project, sorted by id.
func (r *Reader) Execs(project string) ([]*projection.Exec, error) { return r.src.Execs(project) }

// Checkpoints returns the checkpoints of project, sorted by id.
func (r *Reader) Checkpoints(project string) ([]*projection.Checkpoint, error) {
	return r.src.Checkpoints(project)
}

// Status returns the overview of project as seen by actor at now, as
// StatusFor does, from the reader's state (and its status index). It
// returns ErrNotFound for an unknown project.
func (r *Reader) Status(project, actor string, now time.Time) (*Status, error) {
	return statusOf(r.src, project, actor, r.head, now)
}

// Now returns the time on the engine's clock (Options.Now): what decides
// which claims are live and which approvals expired.
func (e *Engine) Now() time.Time { return e.opts.Now() }

// Actor returns the actor the engine records on its events
// (Options.Actor).
func (e *Engine) Actor() string { return e.opts.Actor }

// ProjectEvents calls fn for each event of project up to seq until, in
// seq order. It is Events without the JSON of the payloads, for a reader
// of every event of a project that needs only a few payloads: the events
// carry their envelope and Raw, and Data, ID and the hashes are empty.
// Records are read in pages, each in its own read transaction, and fn
// runs outside them.
func (e *Engine) ProjectEvents(project string, until uint64, fn func(Event) error) error {
	for from := uint64(1); from <= until; {
		if err := e.acquire(); err != nil {
			return err
		}
		var page []Event
		next := until + 1
		err := e.log.View(func(tx store.Tx) error {
			return tx.ReadProject(project, from, func(r *store.Record) error {
				switch {
				case r.Seq > until:
					return store.ErrStop
				case len(page) == pageSize:
					next = r.Seq
					return store.ErrStop
				}
				page = append(page, rawEvent(r))
				return nil
			})
		})
		if err == nil {
			err = e.release()
		}
		for _, ev := range page {
			if err != nil {
				break
			}
			err = fn(ev)
		}
		if err != nil {
			return err
		}
		from = next
	}
	return nil
}

// PointScope is a project's state at a point: the seq the point resolved
// to and the project's entities there.
type PointScope struct {
	Seq   uint64
	Scope *projection.Scope
}

// Scopes resolves each point (as At does) and returns the project's state
// at each, all in one read transaction, so that HEAD is the same head for
// every point. It returns ErrNotFound for an unknown project and the
// errors of a point that does not resolve.
//
// The state at the earliest point is read as At reads it (the nearest
// snapshot and the events after it); each later one is folded on from
// the one before, or resolved on through the deltas of its snapshot's
// chain (snapstore.ScopesAt), so the states share every entity that did
// not change between their points: the same pointer in both, which a
// comparison may skip (digest.Diff does).
func (e *Engine) Scopes(project string, points ...Point) ([]PointScope, error) {
	return e.scopes(project, snapstore.ScopesAt, points)
}

// ScopesUnordered is Scopes with each state's lists in no particular
// order (snapstore.ListsAt): for a caller that matches entities by id
// itself, so that no state's entities are sorted.
func (e *Engine) ScopesUnordered(project string, points ...Point) ([]PointScope, error) {
	return e.scopes(project, snapstore.ListsAt, points)
}

// DiffScopes resolves a and b (as Scopes does) and returns their seqs
// and, for a diff, the project's entities at each less some that are the
// same at both (snapstore.DiffAt), lists in no order: what is left
// compares as the whole states do (digest.Diff). The earlier point comes
// first whatever the order of a and b.
func (e *Engine) DiffScopes(project string, a, b Point) ([2]PointScope, error) {
	var out [2]PointScope
	err := e.view(func(tx store.Tx) error {
		src := projstore.NewTx(tx)
		if _, err := mustProject(src, project); err != nil {
			return err
		}
		var err error
		if out[0].Seq, err = resolvePoint(tx, src, project, a); err != nil {
			return err
		}
		if out[1].Seq, err = resolvePoint(tx, src, project, b); err != nil {
			return err
		}
		lo, hi := 0, 1
		if out[1].Seq < out[0].Seq {
			lo, hi = 1, 0
		}
		out[lo].Scope, out[hi].Scope, err = snapstore.DiffAt(tx, project, out[lo].Seq, out[hi].Seq, e.warn)
		return err
	})
	return out, err
}

func (e *Engine) scopes(project string, read func(store.Tx, string, []uint64, func(string, ...any)) ([]*projection.Scope, error), points []Point) ([]PointScope, error) {
	out := make([]PointScope, len(points))
	err := e.view(func(tx store.Tx) error {
		src := projstore.NewTx(tx)
		if _, err := mustProject(src, project); err != nil {
			return err
		}
		order := make([]int, len(points))
		for i, p := range points {
			seq, err := resolvePoint(tx, src, project, p)
			if err != nil {
				return err
			}
			out[i].Seq, order[i] = seq, i
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(out[a].Seq, out[b].Seq) })
		seqs := make([]uint64, len(order))
		for j, i := range order {
			seqs[j] = out[i].Seq
		}
		states, err := read(tx, project, seqs, e.warn)
		if err != nil {
			return err
		}
		for j, i := range order {
			out[i].Scope = states[j]
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// scopeAt resolves p and returns its seq and the project's state there.
func (e *Engine) scopeAt(tx store.Tx, src projection.Store, project string, p Point) (uint64, *projection.Scope, error) {
	seq, err := resolvePoint(tx, src, project, p)
	if err != nil {
		return 0, nil, err
	}
	mem, err := e.stateAt(tx, project, seq)
	if err != nil {
		return 0, nil, err
	}
	return seq, mem.Scope(project), nil
}

// ReadyTasks returns the tasks of tasks (all of one project's, so that
// their dependencies are among them) that are ready for actor at now, by
// the rule of ReadyFor, in the order given.
func ReadyTasks(tasks []*projection.Task, actor string, now time.Time) []*projection.Task {
	status := statusByID(tasks)
	var out []*projection.Task
	for _, t := range tasks {
		if len(notReady(t, status, actor, now)) == 0 {
			out = append(out, t)
		}
	}
	return out
}

// BriefOf names a task.
func BriefOf(t *projection.Task) TaskBrief { return briefOf(t) }

// CountTasks counts tasks by status.
func CountTasks(tasks []*projection.Task) TaskCounts {
	var c TaskCounts
	for _, t := range tasks {
		c.add(t.Status, 1)
	}
	return c
}

// ApprovalExpired reports whether a's request has expired at now: a
// decision on it would be refused.
func ApprovalExpired(a *projection.Approval, now time.Time) bool { return expired(a, now) }

// Note decodes a note.added event (its Raw payload); ok is false for any
// other event and for a schema this binary does not know. A payload that
// does not decode is an *store.CorruptionError.
func (ev Event) Note() (n Note, ok bool, err error) { return noteOf(ev) }
