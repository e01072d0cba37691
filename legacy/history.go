package legacy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/flowctl/flowctl/flow"
	"strings"
	"time"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// historyEntry is one event of a workflow_history.json.
type historyEntry struct {
	line int
	n    int
	key  string    // the entry as compact JSON: its identity and the note's JSON
	name string    // "event"
	ts   time.Time // ts (or created); zero when the entry has none
	user string    // "user", the actor of its event; "" for the import's
	task string    // detail.task_id (or task_id), the original id of a task
	act  historyAct
	// to is the status of actMove (flowctl's) or actStepMove (a step's).
	to string
	// task: what actTask creates; its Title is actStep's title too.
	in   flow.NewTask
	step string // actStepMove: detail.step_id as written
	// warn says why an entry whose name maps stays a note (parse time).
	warn string
	o    *object
}

// historyAct is what an entry becomes: its own kind of event when its
// name maps to one, else a note.
type historyAct uint8

const (
	actNote     historyAct = iota
	actProject             // project.created, when the project is missing
	actTask                // task.created, when the project has no task of its ref
	actMove                // task.status_changed
	actStep                // step.added
	actStepMove            // step.status_changed
)

// historyEvent is what an event name of a history maps to: its act, and
// the status a move goes to ("" : detail.status says).
type historyEvent struct {
	act historyAct
	to  string
}

// historyEvents maps the event names of the seed's history (create_project,
// add_task, update_task with a status) and their usual synonyms, after
// lower-casing and turning '-', ' ' and '.' into '_', to what they become.
// Any other name stays a note.
var historyEvents = func() map[string]historyEvent {
	m := map[string]historyEvent{}
	add := func(e historyEvent, names ...string) {
		for _, n := range names {
			m[n] = e
		}
	}
	add(historyEvent{act: actProject}, "create_project", "project_created", "new_project", "project_create")
	add(historyEvent{act: actTask}, "add_task", "create_task", "task_created", "new_task", "task_added", "task_create")
	add(historyEvent{act: actMove}, "update_task", "update_status", "set_status", "change_status", "status_change",
		"status_changed", "task_status", "task_updated", "move_task", "task_moved")
	add(historyEvent{actMove, projection.StatusDoing}, "start_task", "task_start", "task_started")
	add(historyEvent{actMove, projection.StatusDone}, "complete_task", "done_task", "finish_task", "task_done",
		"task_completed", "task_complete", "task_finished")
	add(historyEvent{actMove, projection.StatusBlocked}, "block_task", "task_blocked", "task_block")
	add(historyEvent{actMove, projection.StatusCancelled}, "cancel_task", "task_cancelled", "task_canceled", "task_cancel")
	add(historyEvent{actMove, projection.StatusTodo}, "reopen_task", "task_reopened", "task_reopen")
	add(historyEvent{act: actStep}, "add_step", "create_step", "step_added", "new_step", "step_create")
	add(historyEvent{actStepMove, projection.StepInProgress}, "step_start", "start_step", "step_started", "retry_step", "step_retry")
	add(historyEvent{actStepMove, projection.StepCompleted}, "step_done", "complete_step", "step_completed", "step_complete",
		"finish_step", "step_finished")
	add(historyEvent{actStepMove, projection.StepFailed}, "step_failed", "fail_step", "step_fail")
	add(historyEvent{actStepMove, projection.StepSkipped}, "step_skipped", "skip_step", "step_skip")
	return m
}()

// historyEventOf returns what an event name maps to.
func historyEventOf(name string) historyEvent {
	key := strings.NewReplacer("-", "_", " ", "_", ".", "_").Replace(strings.ToLower(strings.TrimSpace(name)))
	return historyEvents[key]
}

// importHistory imports each event of a workflow_history.json as an event
// of its own kind where one exists (addHistoryEntry), else as a note
// (kind note) whose text is the event's name and the event itself as
// JSON. Every event keeps the entry's user as its actor and its ts as its
// time (flow.Importer.As). A note goes on the task the event names
// (detail.task_id, as a ref or a T-n id) when the project has it, else on
// the project. Each event's id is derived from the entry, so a second
// import finds it and skips it.
func importHistory(e *flow.Engine, in Input) (*Result, error) {
	data, err := in.read()
	if err != nil {
		return nil, err
	}
	entries, err := parseHistory(in.Name, data)
	if err != nil {
		return nil, err
	}
	res := &Result{Format: FromHistoryJSON, Project: in.Project, Read: len(entries)}
	for _, h := range entries {
		if h.warn != "" {
			res.Warnings = append(res.Warnings, h.warning(h.warn))
		}
	}
	err = runImport(e, FromHistoryJSON, in.Project, res, func(im *flow.Importer, res *Result) error {
		return addHistory(im, entries, in.Project, res)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

func parseHistory(name string, data []byte) ([]historyEntry, error) {
	if err := checkDocument(name, data); err != nil {
		return nil, err
	}
	raws, err := arrayEntries(json.NewDecoder(bytes.NewReader(data)), data)
	if errors.Is(err, errNotArray) {
		return nil, &ImportError{File: name, Line: 1, Err: fmt.Errorf(`%w: a workflow_history.json is an array of events [{"ts": ..., "event": ..., "detail": {...}}]`, flow.ErrInvalid)}
	}
	if err != nil {
		return nil, &ImportError{File: name, Err: fmt.Errorf("%w: %v", flow.ErrInvalid, err)}
	}
	out := make([]historyEntry, 0, len(raws))
	var bad badEntries
	for i, r := range raws {
		h, err := parseHistoryEntry(name, r, i+1)
		if err != nil {
			if bad.add(err) {
				continue
			}
			return nil, err
		}
		out = append(out, h)
	}
	if err := bad.err(); err != nil {
		return nil, err
	}
	if err := flow.CheckJSON(data); err != nil {
		return nil, &ImportError{File: name, Err: fmt.Errorf("%w: %v", flow.ErrInvalid, err)}
	}
	return out, nil
}

func parseHistoryEntry(file string, r rawEntry, n int) (historyEntry, error) {
	o, err := newObject(file, r.line, fmt.Sprintf("event %d", n), r.raw)
	if err != nil {
		return historyEntry{}, err
	}
	h := historyEntry{line: r.line, n: n, key: compactJSON(r.raw), o: o}
	if h.name, err = o.str("event", true); err != nil {
		return h, err
	}
	if h.name == "" {
		return h, o.errorf(flow.ErrInvalid, `"event" is empty`)
	}
	h.name = flow.CleanLine(h.name)
	if h.ts, _, err = o.timestamp("ts", false); err != nil {
		return h, err
	}
	if h.task, err = o.ident("task_id", false); err != nil {
		return h, err
	}
	detail, ok := o.get("detail")
	var d *object
	if ok && jsonKind(detail) == "an object" {
		if d, err = o.sub("detail"); err != nil {
			return h, err
		}
		if task, err := d.ident("task_id", false); err != nil {
			return h, err
		} else if task != "" {
			h.task = task
		}
	}
	if err := o.wrap(flow.CheckText("the event as a note", h.text(), flow.MaxText, true)); err != nil {
		return h, err
	}
	h.who(o)
	h.mapping(d)
	return h, nil
}

// who reads what the entry says of who and when beyond "ts": "user" (the
// actor; one that --actor would refuse is the import's, with a warning),
// and "created" when there is no ts (an unreadable one is no time, with a
// warning). Neither was read before entries became events of their own,
// so neither refuses an entry.
func (h *historyEntry) who(o *object) {
	h.user = flow.CleanLine(strings.TrimSpace(o.loose("user")))
	if len(h.user) > flow.MaxTitle {
		h.user, h.warn = "", fmt.Sprintf(`"user" is over %d bytes: the event is the import's actor's`, flow.MaxTitle)
	}
	if v, ok := o.get("created"); ok && h.ts.IsZero() {
		if t, ok, err := flow.ParseTimestamp("created", v); err != nil {
			h.warn = fmt.Sprintf(`"created" %s is not a time: the event has none`, v)
		} else if ok {
			h.ts = t
		}
	}
}

// mapping decides what the entry becomes when the project lets it (see
// historyAct), from its name and detail; what does not fit stays a note,
// with a warning when the name promised more.
func (h *historyEntry) mapping(d *object) {
	ev := historyEventOf(h.name)
	h.act, h.to = ev.act, ev.to
	if h.act == actNote || h.act == actProject {
		return
	}
	if d == nil || noTask(h.task) {
		h.act, h.warn = actNote, "kept as a note: it names no task (detail.task_id)"
		return
	}
	switch h.act {
	case actTask:
		h.taskInput(d)
	case actMove:
		h.moveInput(d)
	case actStep:
		h.in.Title = flow.CleanLine(firstOf(d.loose("name"), d.loose("title")))
		if strings.TrimSpace(h.in.Title) == "" || len(h.in.Title) > flow.MaxTitle {
			h.act, h.warn = actNote, "kept as a note: a step needs a name of at most 1024 bytes (detail.name)"
		}
	case actStepMove:
		if h.step = strings.TrimSpace(firstOf(d.looseID("step_id"), d.looseID("step"))); h.step == "" {
			h.act, h.warn = actNote, "kept as a note: it names no step (detail.step_id)"
		}
	}
}

// taskInput reads the task add_task creates: name (or title; else the
// task's id), description, owner, status.
func (h *historyEntry) taskInput(d *object) {
	h.in = flow.NewTask{Title: firstOf(d.loose("name"), d.loose("title"), h.task), Description: d.loose("description"),
		Owner: d.loose("owner"), Ref: h.task}
	h.in.Clean()
	if err := h.in.Check(); err != nil {
		h.act, h.warn = actNote, "kept as a note: "+err.Error()
		return
	}
	if s := d.loose("status"); s != "" {
		if h.to, _ = Status(s); h.to == "" {
			h.warn = fmt.Sprintf("unknown status %q: the task is created todo", s)
		}
	}
}

// moveInput reads the status a move goes to, when the name does not say.
func (h *historyEntry) moveInput(d *object) {
	if h.to != "" {
		return
	}
	s := d.loose("status")
	if s == "" {
		h.act = actNote // an update of other fields: a note, as it always was
		return
	}
	if h.to, _ = Status(s); h.to == "" {
		h.act, h.warn = actNote, fmt.Sprintf("kept as a note: unknown status %q", s)
	}
}

func firstOf(s ...string) string {
	for _, x := range s {
		if strings.TrimSpace(x) != "" {
			return x
		}
	}
	return ""
}

// text is the note an entry becomes, and the reason of a status change.
func (h historyEntry) text() string {
	return "history: " + h.name + " " + h.key
}

// warning locates a warning at the entry.
func (h historyEntry) warning(msg string) string {
	return fmt.Sprintf("%s:%d: event %d %q: %s", h.o.file, h.line, h.n, h.name, msg)
}

func addHistory(im *flow.Importer, entries []historyEntry, project string, res *Result) error {
	ids := newLegacyIDs(FromHistoryJSON, project)
	keys := make([]flow.ImportID, len(entries))
	for i, h := range entries {
		keys[i] = ids.next(h.key)
	}
	created, err := openHistoryProject(im, entries, keys, project, res)
	if err != nil {
		return err
	}
	refs, err := loadRefs(im, project)
	if err != nil {
		return err
	}
	for i, h := range entries {
		im.Progress(i, len(entries))
		if i == created {
			continue
		}
		if im.Imported(keys[i]) {
			res.Skipped++
			continue
		}
		if err := addHistoryEntry(im.As(h.user, h.ts), h, keys[i], project, refs, res); err != nil {
			return h.o.wrap(err)
		}
	}
	return nil
}

// openHistoryProject opens the project to import into. A missing one is
// created by the first create_project entry, whose index it returns (-1
// for none); without such an entry it is ErrNotFound.
func openHistoryProject(im *flow.Importer, entries []historyEntry, keys []flow.ImportID, project string, res *Result) (int, error) {
	p, err := im.Project(project)
	if err != nil || p != nil {
		if err == nil {
			_, err = im.OpenProject(project)
		}
		return -1, err
	}
	for i, h := range entries {
		if h.act != actProject {
			continue
		}
		if err := flow.ValidProjectName(project); err != nil {
			return -1, err
		}
		d, _ := h.o.sub("detail")
		var desc string
		if d != nil {
			desc = flow.CleanText(d.loose("description"))
		}
		if err := im.As(h.user, h.ts).ImportProject(project, desc, keys[i]); err != nil {
			return -1, h.o.wrap(err)
		}
		res.Created.Projects++
		return i, nil
	}
	_, err = im.OpenProject(project)
	return -1, err
}

// addHistoryEntry appends the event an entry becomes: its own kind when
// the project's state lets it, else a note. A status change the status
// machine refuses (todo to done, say) or an approval blocks stays a note
// with a warning; done past open dependencies or subtasks is recorded as
// forced, as the legacy system allowed it.
func addHistoryEntry(im *flow.Importer, h historyEntry, id flow.ImportID, project string, refs *refIndex, res *Result) error {
	task, ok := refs.task(h.task)
	ok = ok && !noTask(h.task)
	var err error
	switch {
	case h.act == actTask && !ok:
		in := h.in
		tid, err := im.ImportTask(project, projection.TaskCreated{Title: in.Title, Description: in.Description,
			Owner: in.Owner, Ref: in.Ref, Status: statusField(h.to)}, id)
		if err == nil {
			refs.add(in.Ref, tid)
			res.Created.Tasks++
		}
		return err
	case h.act == actMove && ok:
		var moved bool
		if moved, _, err = im.MoveTask(project, task, h.to, h.text(), id); err == nil && moved {
			res.Created.Moves++
			return nil
		}
	case h.act == actStep && ok:
		if _, err = im.AddStep(project, task, h.in.Title, id); err == nil {
			res.Created.Steps++
			return nil
		}
	case h.act == actStepMove && ok:
		var moved bool
		if moved, err = im.MoveStep(project, stepOf(task, h.step), h.to, id); err == nil && moved {
			res.Created.Moves++
			return nil
		}
	case h.act == actMove || h.act == actStep || h.act == actStepMove:
		err = fmt.Errorf("%w: task %q is not in project %s", flow.ErrNotFound, h.task, project)
	}
	if err != nil {
		if !keepAsNote(err) {
			return err
		}
		res.Warnings = append(res.Warnings, h.warning("kept as a note: "+plainError(err)))
	}
	return addHistoryNote(im, h, id, project, task, ok, res)
}

// keepAsNote reports whether an entry refused as its own kind of event
// still imports, as a note: a move the project's state refuses, or a
// task or step it lacks.
func keepAsNote(err error) bool {
	return errors.Is(err, store.ErrConflict) || errors.Is(err, flow.ErrPending) ||
		errors.Is(err, flow.ErrNotFound) || errors.Is(err, flow.ErrInvalid)
}

// plainError is err's message without the class its sentinel prefixes.
func plainError(err error) string {
	msg := err.Error()
	for _, class := range []error{store.ErrConflict, flow.ErrPending, flow.ErrNotFound, flow.ErrInvalid} {
		msg = strings.TrimPrefix(msg, class.Error()+": ")
	}
	return msg
}

func addHistoryNote(im *flow.Importer, h historyEntry, id flow.ImportID, project, task string, onTask bool, res *Result) error {
	note := projection.NoteAdded{Text: h.text(), Kind: flow.NoteKindNote, OccurredAt: occurredAt(h.ts)}
	if onTask {
		note.Task = task
	}
	if err := im.AddNote(project, note, id); err != nil {
		return err
	}
	res.Created.Notes++
	return nil
}

// statusField is a status as TaskCreated holds it: "" for todo.
func statusField(s string) string {
	if s == projection.StatusTodo {
		return ""
	}
	return s
}

// stepOf names a step: a step id as written (T-1.2), or the number of a
// step of task ("2").
func stepOf(task, step string) string {
	if _, _, err := flow.ParseStepID(step); err == nil {
		return step
	}
	return task + "." + step
}
