package flow

import (
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/flowctl/flowctl/flow/internal/snapstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/vmihailenco/msgpack/v5"
)

// ForkInput is the input of ForkProject.
type ForkInput struct {
	Project string `json:"project"` // the source
	Name    string `json:"name"`    // the new project
	From    Point  `json:"from"`    // the source's point the fork starts from
	Write
}

// ForkProject starts project Name from the state project had at From,
// leaving project as it is: project.created (with its Origin: the source,
// the seq of the point and the log's chain hash there), then one
// rollback.applied on the new project's stream that puts the source's
// plans, tasks (with their dependencies, context and steps), approvals and
// exec records at the point into it, with the source's settings and short
// id counters (new ids continue the source's), a rollback.marked on the
// stream of each plan and task, and a copy of each note of the project
// and of those tasks up to the point (its original time kept as
// occurred_at). The fork is open even when the source was archived;
// checkpoints stay with the source. Errors: ErrInvalid (name), ErrExists,
// ErrNotFound (source, point), ErrConflict (a point before the source
// existed).
func (e *Engine) ForkProject(in ForkInput) (*projection.Project, error) {
	if err := ValidProjectName(in.Name); err != nil {
		return nil, err
	}
	_, err := e.command(in.Write, "project.fork", in, func(w *writer) (Ref, error) {
		return Ref{Kind: projection.KindProject, Project: in.Name}, w.fork(in)
	})
	if err != nil {
		return nil, err
	}
	return e.Project(in.Name)
}

func (w *writer) fork(in ForkInput) error {
	if _, err := mustProject(w, in.Project); err != nil {
		return err
	}
	seq, err := resolvePoint(w.tx, w, in.Project, in.From)
	if err != nil {
		return err
	}
	if err := begunAt(w.tx, projection.ProjectStream(in.Project), "project "+in.Project, seq); err != nil {
		return err
	}
	at, err := w.tx.Record(seq)
	if err != nil {
		return err
	}
	states, err := snapstore.ScopesAt(w.tx, in.Project, []uint64{seq}, w.e.warn)
	if err != nil {
		return err
	}
	src := states[0]
	origin := &projection.Origin{Project: in.Project, Seq: seq, Hash: hex.EncodeToString(at.Hash[:])}
	r, err := w.emit(projection.ProjectStream(in.Name), store.NoStream, in.Name, projection.TypeProjectCreated,
		projection.ProjectCreated{Name: in.Name, Description: src.Project.Description, Origin: origin})
	var vc *store.VersionConflict
	if errors.As(err, &vc) {
		return fmt.Errorf("%w: project %q", ErrExists, in.Name)
	}
	if err != nil {
		return err
	}
	notes, err := notesUpTo(w.tx, in.Project, seq, src)
	if err != nil {
		return err
	}
	payload := forkPayload(src, in.Name, r.Seq, notes)
	payload.Reason = fmt.Sprintf("fork of %s at seq %d", in.Project, seq)
	applied, err := w.emit(projection.ProjectStream(in.Name), store.Any, in.Name, projection.TypeRollbackApplied, payload)
	if err != nil {
		return err
	}
	empty := &projection.Scope{}
	if err := w.markRolledBack(in.Name, applied.Seq, &rollbackPlan{payload: payload, marks: marksOf(in.Name, empty, payload)}); err != nil {
		return err
	}
	for _, n := range notes {
		if _, err := w.emit(subjectStream(in.Name, n.Task), store.Any, in.Name, projection.TypeNoteAdded, n); err != nil {
			return err
		}
	}
	return nil
}

// forkPayload is the rollback.applied that puts src's state into project
// name, whose project.created is at seq; notes are the notes copied after
// it, which count on their tasks again.
func forkPayload(src *projection.Scope, name string, seq uint64, notes []projection.NoteAdded) *projection.RollbackApplied {
	copied := map[string]int{}
	for _, n := range notes {
		copied[n.Task]++
	}
	counters := src.Project.Counters
	p := &projection.RollbackApplied{ToSeq: seq, Counters: &counters,
		Project: &projection.Project{Name: name, Description: src.Project.Description, Settings: src.Project.Settings}}
	for _, v := range src.Plans {
		c := *v
		c.Project, c.Version = name, 0
		p.Plans = append(p.Plans, c)
	}
	for _, v := range src.Tasks {
		c := *v
		c.Project, c.Version = name, 0
		c.Notes -= copied[c.ID] // below 0 for a moment after a rollback: the copies count it back up
		p.Tasks = append(p.Tasks, c)
	}
	for _, v := range src.Approvals {
		c := *v
		c.Project, c.Version = name, 0
		p.Approvals = append(p.Approvals, c)
	}
	for _, v := range src.Execs {
		c := *v
		c.Project, c.Version = name, 0
		p.Execs = append(p.Execs, c)
	}
	return p
}

// notesUpTo returns the notes of project up to seq that a fork of state
// keeps: the project's own and those of its tasks in state, in order,
// each with the time it was written.
func notesUpTo(tx store.Tx, project string, seq uint64, state *projection.Scope) ([]projection.NoteAdded, error) {
	tasks := map[string]bool{"": true}
	for _, t := range state.Tasks {
		tasks[t.ID] = true
	}
	var out []projection.NoteAdded
	err := tx.ReadProject(project, 0, func(r *store.Record) error {
		if r.Seq > seq {
			return store.ErrStop
		}
		if r.Type != projection.TypeNoteAdded {
			return nil
		}
		var n projection.NoteAdded
		if err := msgpack.Unmarshal(r.Data, &n); err != nil {
			return &store.CorruptionError{Seq: r.Seq, Reason: fmt.Sprintf("note does not decode: %v", err)}
		}
		if !tasks[n.Task] {
			return nil
		}
		if n.OccurredAt == 0 {
			n.OccurredAt = projection.TimeOf(r.Time)
		}
		out = append(out, n)
		return nil
	})
	return out, err
}
