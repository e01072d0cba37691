package flow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/flowctl/flowctl/flow/internal/check"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// This file is the write API of importers of other systems' files
// (package legacy): one command whose events are derived from entries of
// a file, with ids that let a second import of the same file append
// nothing, and the checks an importer runs on an entry before it writes.

// ImportID is the id an imported event is stored under, derived from the
// entry it came from (a UUID of version 8 is a good choice), so that an
// import of the same entry finds it (Importer.Imported) and skips it.
type ImportID [16]byte

// Importer is an import's view of its one write transaction: what it
// reads sees what it appended before, and every event it appends is
// folded at once. It is valid only inside the function given to
// Engine.ImportEntries.
type Importer struct {
	w     *writer
	actor string    // As: the actor of the events appended through this view
	at    time.Time // As: when what they record happened
}

// As returns a view of im whose appends (the methods that take an
// ImportID) carry actor and the time at instead of the engine's actor and
// the time of the import: an entry of a file that says who did what when.
// An empty actor keeps the engine's, a zero at the import's time. The
// time stored in the record is at, but never after the import's time and
// never before the time of the event before it (the log keeps event times
// in seq order, Tx.Append); at itself is kept in the payload as
// occurred_at, where Event shows it. The actor must pass the checks of
// --actor (one line, at most MaxTitle bytes): a bad one is ErrInvalid at
// the append.
func (im *Importer) As(actor string, at time.Time) *Importer {
	return &Importer{w: im.w, actor: actor, at: at}
}

// ImportEntries runs fn as one command named "import."+format that
// changes project: every event fn appends through im commits in one
// transaction, or none does when fn returns an error. fn may run more
// than once (a group commit retries without a failed call), so it must
// start over each time and have no effects outside the engine. Progress
// that fn reports (Importer.Progress) goes to Options.Progress, and the
// import reports itself done when fn returns.
func (e *Engine) ImportEntries(format, project string, fn func(im *Importer) error) error {
	_, err := e.command(Write{}, "import."+format, nil, func(w *writer) (Ref, error) {
		err := fn(&Importer{w: w})
		e.progress(1, 1) // done, whatever the entries were
		return Ref{Kind: projection.KindProject, Project: project}, err
	})
	return err
}

// Progress reports done of total entries to Options.Progress, every
// thousand entries.
func (im *Importer) Progress(done, total int) { im.w.e.progress(done, total) }

// Imported reports whether an event with id is in the log already.
func (im *Importer) Imported(id ImportID) bool { return im.w.tx.SeqOf(store.ID(id)) != 0 }

// Project returns a project, or nil when there is none.
func (im *Importer) Project(name string) (*projection.Project, error) { return im.w.Project(name) }

// OpenProject returns a project to write to: ErrNotFound when there is
// none, store.ErrConflict when it is archived.
func (im *Importer) OpenProject(name string) (*projection.Project, error) {
	return openProject(im.w, name)
}

// Tasks returns the tasks of project, sorted by id.
func (im *Importer) Tasks(project string) ([]*projection.Task, error) { return im.w.Tasks(project) }

// CreateProject creates project with a description; the caller checked
// that there is none (Project).
func (im *Importer) CreateProject(name, description string) error {
	_, err := im.w.emit(ProjectStream(name), store.NoStream, name, projection.TypeProjectCreated,
		projection.ProjectCreated{Name: name, Description: description})
	return err
}

// CreateTask creates a task of project with the next T-n, which it
// returns: t's ID is set to it. t's dependencies must be tasks of the
// project, its text must pass NewTask.Check. Errors: ErrNotFound (the
// project), store.ErrConflict (an archived project).
func (im *Importer) CreateTask(project string, t projection.TaskCreated) (string, error) {
	p, err := openProject(im.w, project)
	if err != nil {
		return "", err
	}
	t.ID = projection.ShortID(projection.PrefixTask, p.Counters.Tasks+1)
	_, err = im.w.emit(projection.TaskStream(project, t.ID), store.NoStream, project, projection.TypeTaskCreated, t)
	return t.ID, err
}

// AddNote appends a note to the stream of its task (n.Task, a task of
// project), or of the project, under id.
func (im *Importer) AddNote(project string, n projection.NoteAdded, id ImportID) error {
	return im.emitImported(subjectStream(project, n.Task), project, projection.TypeNoteAdded, n, id)
}

// MergeContext merges patch (RFC 7396) into the context of a task of
// project under id, as ContextPatch does; changed is false, and nothing
// is appended, when the merge would change nothing. Errors: ErrNotFound
// (the task), ErrInvalid (the patch, or the context it makes).
func (im *Importer) MergeContext(project, task, patch string, id ImportID) (changed bool, err error) {
	t, err := mustTask(im.w, project, task)
	if err != nil {
		return false, err
	}
	next, err := nextContext(t.Context, ContextPatch{Patch: patch})
	if err != nil || next == t.Context {
		return false, err
	}
	err = im.emitImported(projection.TaskStream(project, task), project, projection.TypeTaskContextMerged,
		projection.TaskContextMerged{Patch: patch}, id)
	return err == nil, err
}

// RecordExec records an exec with the next X-n of its project under id,
// as RecordExec does (in must pass NewExec.Check), with in.OccurredAt as
// the time it ran. Errors: those of RecordExec's checks.
func (im *Importer) RecordExec(in NewExec, id ImportID) error {
	p, _, err := validateExec(im.w, &in)
	if err != nil {
		return err
	}
	xid := projection.ShortID(projection.PrefixExec, p.Counters.Execs+1)
	return im.emitImported(subjectStream(in.Project, in.Task), in.Project, projection.TypeExecRecorded,
		projection.ExecRecorded{ID: xid, Task: in.Task, Plan: in.Plan, Command: in.Command, Code: in.Code, Cwd: in.Cwd,
			ExitCode: in.ExitCode, Success: in.Success, ElapsedMS: in.ElapsedMS, Stdout: in.Stdout, Stderr: in.Stderr,
			AddedVars: in.AddedVars, AddedImports: in.AddedImports, OccurredAt: occurredAt(in.OccurredAt)}, id)
}

// ImportProject creates project with a description under id; the caller
// checked that there is none (Project).
func (im *Importer) ImportProject(name, description string, id ImportID) error {
	return im.emitExpect(ProjectStream(name), store.NoStream, name, projection.TypeProjectCreated,
		projection.ProjectCreated{Name: name, Description: description}, id)
}

// ImportTask is CreateTask under id.
func (im *Importer) ImportTask(project string, t projection.TaskCreated, id ImportID) (string, error) {
	p, err := openProject(im.w, project)
	if err != nil {
		return "", err
	}
	t.ID = projection.ShortID(projection.PrefixTask, p.Counters.Tasks+1)
	return t.ID, im.emitExpect(projection.TaskStream(project, t.ID), store.NoStream, project, projection.TypeTaskCreated, t, id)
}

// MoveTask moves a task of project to status to under id, as MoveTask
// does with Force: along the status machine, and to done past open
// dependencies, open subtasks and running steps (forced, which the event
// records). moved is false, and nothing is appended, when the task has
// that status already. Errors: ErrInvalid (the status, the reason),
// ErrNotFound (the task), store.ErrConflict (a move the machine refuses,
// an archived project), ErrPending (done while an approval is pending).
func (im *Importer) MoveTask(project, task, to, reason string, id ImportID) (moved, forced bool, err error) {
	if _, ok := transitions[to]; !ok {
		return false, false, fmt.Errorf("%w: status %q: use todo, doing, done, blocked or cancelled", ErrInvalid, to)
	}
	if err := check.Text("reason", reason, MaxText, false); err != nil {
		return false, false, err
	}
	if _, err := openProject(im.w, project); err != nil {
		return false, false, err
	}
	t, err := mustTask(im.w, project, task)
	switch {
	case err != nil:
		return false, false, err
	case t.Status == to:
		return false, false, nil
	case !slices.Contains(transitions[t.Status], to):
		return false, false, errTransition(t, to)
	}
	if to == projection.StatusDone {
		if forced, err = checkDone(im.w, t, true); err != nil {
			return false, false, err
		}
	}
	err = im.emitImported(projection.TaskStream(project, task), project, projection.TypeTaskStatusChanged,
		projection.TaskStatusChanged{From: t.Status, To: to, Reason: reason, Forced: forced}, id)
	return err == nil, forced, err
}

// AddStep adds a pending step to a task of project under id, as AddStep
// does, and returns its id. Errors: ErrInvalid (the title), ErrNotFound
// (the task), store.ErrConflict (a done or cancelled task, an archived
// project).
func (im *Importer) AddStep(project, task, title string, id ImportID) (string, error) {
	if err := check.Line("title", title, MaxTitle, true); err != nil {
		return "", err
	}
	t, err := im.w.stepTask(project, task)
	if err != nil {
		return "", err
	}
	sid := projection.StepID(t.ID, len(t.Steps)+1)
	return sid, im.emitImported(projection.TaskStream(project, t.ID), project, projection.TypeStepAdded,
		projection.StepAdded{ID: sid, Title: title}, id)
}

// MoveStep moves a step (T-n.m) of project to status to under id, along
// the step machine (a failed step back to in_progress is a retry). moved
// is false, and nothing is appended, when the step has that status
// already. Errors: ErrInvalid (the step id, the status), ErrNotFound,
// store.ErrConflict (a move the machine refuses, a done or cancelled
// task, an archived project).
func (im *Importer) MoveStep(project, step, to string, id ImportID) (moved bool, err error) {
	if _, ok := stepVerbs[to]; !ok {
		return false, fmt.Errorf("%w: step status %q: use in_progress, completed, failed or skipped", ErrInvalid, to)
	}
	task, sid, err := ParseStepID(step)
	if err != nil {
		return false, err
	}
	t, err := im.w.stepTask(project, task)
	if err != nil {
		return false, err
	}
	s := t.Step(sid)
	retry := s != nil && s.Status == projection.StepFailed && to == projection.StepInProgress
	switch {
	case s == nil:
		return false, fmt.Errorf("%w: step %s of task %s", ErrNotFound, sid, task)
	case s.Status == to:
		return false, nil
	case !retry && !slices.Contains(stepTransitions[s.Status], to):
		return false, errStepTransition(s, to)
	}
	err = im.emitImported(projection.TaskStream(project, task), project, projection.TypeStepStatusChanged,
		stepEvent(StepMove{ID: sid, To: to}), id)
	return err == nil, err
}

// emitImported appends one imported event with a given (deterministic)
// id, and folds it. It is emit with the id set. The event's time is the
// time of the import, like any event's, unless the view (As) gives one:
// then the earlier of that and the import's time, which the log raises to
// the time of the event before it, so that event times follow seqs and
// --at TIME names a prefix of the log; the time the file gives an entry
// is in the payload (occurred_at).
func (im *Importer) emitImported(stream, project, typ string, payload any, id ImportID) error {
	return im.emitExpect(stream, store.Any, project, typ, payload, id)
}

func (im *Importer) emitExpect(stream string, exp store.Expect, project, typ string, payload any, id ImportID) error {
	w := im.w
	schema, _ := projection.Schema(typ)
	ev, err := w.e.newEvent(typ, schema, project, payload)
	if err != nil {
		return err
	}
	if im.actor != "" {
		if err := check.Line("actor", im.actor, MaxTitle, false); err != nil {
			return err
		}
		ev.Actor = im.actor
	}
	if !im.at.IsZero() {
		if im.at.Before(ev.Time) {
			ev.Time = im.at.UTC()
		}
		ev.Data = withOccurredAt(ev.Data, im.at)
	}
	ev.ID = store.ID(id)
	_, err = w.emitEvent(stream, exp, ev)
	return err
}

// Check validates a task's input as AddTask does, normalizing its ids.
// Errors are ErrInvalid.
func (in *NewTask) Check() error { return in.check() }

// Clean makes a task read from another system's file pass the text
// checks: the control characters of its one-line fields become spaces,
// and those of its description that multi-line text refuses.
func (in *NewTask) Clean() { in.clean() }

// Check validates an exec record's input as RecordExec does before it
// reads the file, normalizing its ids. Errors are ErrInvalid.
func (in *NewExec) Check() error { return in.check() }

// Clean is NewTask.Clean for an exec record.
func (in *NewExec) Clean() { in.clean() }

// Input is the exec record x gives, as DecodeExec makes it of its JSON.
// Errors are ErrInvalid.
func (x ExecJSON) Input() (NewExec, error) { return x.input() }

// CheckText checks multi-line text (a description, note, message) as the
// commands do: valid UTF-8, at most limit bytes, not blank when required,
// no control character but newlines and tabs. Errors are ErrInvalid
// naming field.
func CheckText(field, s string, limit int, required bool) error {
	return check.Text(field, s, limit, required)
}

// CleanLine replaces every control character of s with a space: a line
// of another system's file that must import even with a newline in it.
func CleanLine(s string) string { return check.CleanLine(s) }

// CleanText replaces the control characters of s that multi-line text
// refuses with spaces: newlines, tabs and CRLF line ends stay.
func CleanText(s string) string { return check.CleanText(s) }

// ParseTimestamp reads a time given as JSON under key: a string in RFC
// 3339, or Python's isoformat without a zone (taken as UTC), or a number
// of seconds since 1970 (Python's time.time()), within the years an event
// can hold. ok is false for nothing, null or "". Errors are ErrInvalid.
func ParseTimestamp(key string, v json.RawMessage) (t time.Time, ok bool, err error) {
	return timestampOf(key, v)
}

// parseLegacyTime reads the timestamps the legacy system wrote: RFC 3339,
// or Python's isoformat without a zone (taken as UTC, as the seeds write
// utcnow()), with a 'T' or a space between date and time.
func parseLegacyTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999",
		"2006-01-02 15:04:05.999999999Z07:00", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%w: %q is not a timestamp (like 2024-04-12T08:16:01Z)", ErrInvalid, s)
}

// timestampOf is ParseTimestamp.
func timestampOf(key string, v json.RawMessage) (t time.Time, ok bool, err error) {
	var s string
	switch kind := jsonKind(v); kind {
	case "empty", "null":
		return t, false, nil
	case "a number":
		var secs float64
		if err := json.Unmarshal(v, &secs); err != nil || secs < 0 || secs > 1e10 {
			return t, false, fmt.Errorf("%w: %q %s is not a time in seconds since 1970", ErrInvalid, key, v)
		}
		whole, frac := math.Modf(secs)
		return time.Unix(int64(whole), int64(math.Round(frac*1e6))*1e3).UTC(), true, nil
	case "a string":
		if err := json.Unmarshal(v, &s); err != nil {
			return t, false, fmt.Errorf("%w: %q is not a string: %v", ErrInvalid, key, err)
		}
	default:
		return t, false, fmt.Errorf("%w: %q is %s, not a time", ErrInvalid, key, kind)
	}
	if s == "" {
		return t, false, nil
	}
	if t, err = parseLegacyTime(s); err != nil {
		return t, false, err
	}
	if t.Before(minTime) || t.After(maxTime) {
		return time.Time{}, false, fmt.Errorf("%w: %q %s is outside the years 1678 to 2262", ErrInvalid, key, s)
	}
	return t, true, nil
}

// minTime and maxTime bound the times an event or a payload holds: unix
// nanoseconds in an int64.
var minTime, maxTime = time.Unix(0, math.MinInt64), time.Unix(0, math.MaxInt64)

// jsonKind names the kind of a JSON value for errors.
func jsonKind(v json.RawMessage) string {
	b := bytes.TrimSpace(v)
	if len(b) == 0 {
		return "empty"
	}
	switch b[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// noTask reports whether a task_id stands for no task: the seeds' logger
// writes "unknown" when FLOW_TASK_ID is not set.
func noTask(id string) bool {
	id = strings.TrimSpace(id)
	return id == "" || strings.EqualFold(id, "unknown")
}
