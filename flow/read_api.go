package flow

import (
	"cmp"
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
	head uint64
}

// Read runs fn with a Reader of the engine's current state (or, on a view
// At a point, of that point). fn runs inside one read transaction: keep
// it short, and do no writes through the engine from inside it.
func (e *Engine) Read(fn func(r *Reader) error) error {
	return e.readHead(func(src source, head uint64) error {
		return fn(&Reader{src: src, head: head})
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
				page = append(page, Event{Seq: r.Seq, Stream: r.Stream, Version: r.Version, Type: r.Type, Schema: r.Schema,
					Time: r.Time, Actor: r.Actor, Session: r.Session, Project: r.Project, Raw: r.Data})
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
		states, err := snapstore.ScopesAt(tx, project, seqs, e.warn)
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
