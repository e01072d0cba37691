package flow

import (
	"fmt"
	"strconv"
	"time"

	"github.com/flowctl/flowctl/flow/internal/check"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/vmihailenco/msgpack/v5"
)

// Note kinds: a note is commentary on the work; a memory is long-term
// memory that `prime` reads back to an assistant.
const (
	NoteKindNote   = "note"
	NoteKindMemory = "memory"
)

// KindNote names notes in a Ref; a note's id is the seq of its event.
const KindNote = "note"

// Note is a note as users see it: the note.added event it is.
type Note struct {
	Seq  uint64    `json:"seq"`
	Time time.Time `json:"time"`
	// OccurredAt is when an imported note's entry was written in its
	// file (a legacy history's ts); absent for a note added here.
	OccurredAt *time.Time `json:"occurred_at,omitempty"`
	Actor      string     `json:"actor"`
	Project    string     `json:"project"`
	Task       string     `json:"task"` // empty for a note on the project
	Kind       string     `json:"kind"` // note | memory
	Text       string     `json:"text"`
}

// NewNote is the input of AddNote.
type NewNote struct {
	Project string `json:"project"`
	Task    string `json:"task,omitempty"` // T-n, or empty for the project
	Kind    string `json:"kind,omitempty"` // note (the default) or memory
	Text    string `json:"text"`
	Write
}

// AddNote appends a note to a task's stream, or to the project's stream
// when in.Task is empty. IfVersion is the version of that stream. Errors:
// ErrInvalid (text, kind), ErrNotFound (task), store.ErrConflict (an
// archived project, a stale IfVersion).
func (e *Engine) AddNote(in NewNote) (*Note, error) {
	if in.Kind == "" {
		in.Kind = NoteKindNote
	}
	if err := checkNoteKind(in.Kind); err != nil {
		return nil, err
	}
	if err := check.Text("note text", in.Text, MaxText, true); err != nil {
		return nil, err
	}
	var made *Note // by the last run of the command's function
	var madeRef Ref
	ref, err := e.command(in.Write, "note.add", in, func(w *writer) (Ref, error) {
		r, err := w.addNote(in)
		if err != nil {
			return Ref{}, err
		}
		// From the record in hand, not read back; noteOf reads no more of
		// the event than this (eventOf would render its payload as JSON).
		n, _, err := noteOf(Event{Seq: r.Seq, Type: r.Type, Schema: r.Schema, Time: r.Time,
			Actor: r.Actor, Project: r.Project, Raw: r.Data})
		if err != nil {
			return Ref{}, err
		}
		made, madeRef = &n, Ref{Kind: KindNote, Project: in.Project, ID: strconv.FormatUint(r.Seq, 10)}
		return madeRef, nil
	})
	if err != nil {
		return nil, err
	}
	if made != nil && madeRef == ref {
		return made, nil
	}
	return e.note(ref) // a replayed idempotency key: the note it made then
}

func checkNoteKind(kind string) error {
	if kind != NoteKindNote && kind != NoteKindMemory {
		return fmt.Errorf("%w: note kind %q: use note or memory", ErrInvalid, kind)
	}
	return nil
}

func (w *writer) addNote(in NewNote) (*store.Record, error) {
	if _, err := openProject(w, in.Project); err != nil {
		return nil, err
	}
	stream := projection.ProjectStream(in.Project)
	if in.Task != "" {
		if _, err := mustTask(w, in.Project, in.Task); err != nil {
			return nil, err
		}
		stream = projection.TaskStream(in.Project, in.Task)
	}
	return w.emit(stream, in.expect(), in.Project, projection.TypeNoteAdded,
		projection.NoteAdded{Task: in.Task, Text: in.Text, Kind: in.Kind})
}

// note reads back the note a command appended.
func (e *Engine) note(ref Ref) (*Note, error) {
	seq, err := strconv.ParseUint(ref.ID, 10, 64)
	if err != nil {
		return nil, &store.CorruptionError{Reason: fmt.Sprintf("note reference %q is not a seq", ref.ID)}
	}
	var out *Note
	err = e.Events(Filter{SinceSeq: seq, UntilSeq: seq, Raw: true}, func(ev Event) error {
		n, ok, err := noteOf(ev)
		if ok {
			out = &n
		}
		return err
	})
	if err == nil && out == nil {
		err = fmt.Errorf("%w: note at seq %d", ErrNotFound, seq)
	}
	return out, err
}

// NoteFilter selects notes for Notes. Zero fields match everything.
type NoteFilter struct {
	Task string // only this task's notes (T-n)
	Kind string // only notes of this kind
}

// Notes lists a project's notes, oldest first: every note of the project
// (its own and its tasks'), or with f.Task one task's. Errors: ErrInvalid
// (kind), ErrNotFound (project, task).
func (e *Engine) Notes(project string, f NoteFilter) ([]Note, error) {
	if f.Kind != "" {
		if err := checkNoteKind(f.Kind); err != nil {
			return nil, err
		}
	}
	ef := Filter{Project: project, Type: projection.TypeNoteAdded, Raw: true}
	if err := e.noteScope(project, f.Task, &ef); err != nil {
		return nil, err
	}
	out := []Note{}
	err := e.Events(ef, func(ev Event) error {
		n, ok, err := noteOf(ev)
		if ok && (f.Kind == "" || n.Kind == f.Kind) {
			out = append(out, n)
		}
		return err
	})
	return out, err
}

// noteScope checks that the project (and task) exist and narrows ef to the
// task's stream when there is one.
func (e *Engine) noteScope(project, task string, ef *Filter) error {
	if task != "" {
		ef.Stream = projection.TaskStream(project, task)
		_, err := e.Task(project, task)
		return err
	}
	_, err := e.Project(project)
	return err
}

// noteOf decodes a note.added event; ok is false for any other event and
// for a schema this binary does not know.
func noteOf(ev Event) (Note, bool, error) {
	if ev.Type != projection.TypeNoteAdded || ev.Schema != projection.SchemaVersion {
		return Note{}, false, nil
	}
	var p projection.NoteAdded
	if err := msgpack.Unmarshal(ev.Raw, &p); err != nil {
		return Note{}, false, &store.CorruptionError{Seq: ev.Seq, Reason: fmt.Sprintf("note does not decode: %v", err)}
	}
	return Note{Seq: ev.Seq, Time: ev.Time, OccurredAt: stdTime(p.OccurredAt), Actor: ev.Actor, Project: ev.Project,
		Task: p.Task, Kind: p.Kind, Text: p.Text}, true, nil
}
