package flow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/flowctl/flowctl/projection"
)

// historyEntry is one event of a workflow_history.json.
type historyEntry struct {
	line int
	n    int
	key  string    // the entry as compact JSON: its identity and the note's JSON
	name string    // "event"
	ts   time.Time // zero when the entry has none
	task string    // detail.task_id (or task_id), the original id of a task
	o    *object
}

// importHistory keeps each event of a workflow_history.json as a note
// (kind note) whose text is the event's name and the event itself as
// JSON, at the event's time. The note goes on the task the event names
// (detail.task_id, as a ref or a T-n id) when the project has it, else on
// the project. Each note's event id is derived from the entry, so a
// second import finds it and skips it.
func (e *Engine) importHistory(in LegacyImport) (*LegacyResult, error) {
	data, err := in.read()
	if err != nil {
		return nil, err
	}
	entries, err := parseHistory(in.Name, data)
	if err != nil {
		return nil, err
	}
	res := &LegacyResult{Format: FromHistoryJSON, Project: in.Project, Read: len(entries)}
	err = e.runImport(FromHistoryJSON, in.Project, res, func(w *writer, res *LegacyResult) error {
		return w.importHistory(entries, in.Project, res)
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
		return nil, &ImportError{File: name, Line: 1, Err: fmt.Errorf(`%w: a workflow_history.json is an array of events [{"ts": ..., "event": ..., "detail": {...}}]`, ErrInvalid)}
	}
	if err != nil {
		return nil, &ImportError{File: name, Err: fmt.Errorf("%w: %v", ErrInvalid, err)}
	}
	out := make([]historyEntry, 0, len(raws))
	for i, r := range raws {
		h, err := parseHistoryEntry(name, r, i+1)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	if err := CheckJSON(data); err != nil {
		return nil, &ImportError{File: name, Err: fmt.Errorf("%w: %v", ErrInvalid, err)}
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
		return h, o.errorf(ErrInvalid, `"event" is empty`)
	}
	h.name = cleanLine(h.name)
	if h.ts, _, err = o.timestamp("ts", false); err != nil {
		return h, err
	}
	if h.task, err = o.ident("task_id", false); err != nil {
		return h, err
	}
	detail, ok := o.get("detail")
	if ok && jsonKind(detail) == "an object" {
		d, err := o.sub("detail")
		if err != nil {
			return h, err
		}
		if task, err := d.ident("task_id", false); err != nil {
			return h, err
		} else if task != "" {
			h.task = task
		}
	}
	return h, o.wrap(checkText("the event as a note", h.text(), MaxText, true))
}

// text is the note an entry becomes.
func (h historyEntry) text() string {
	return "history: " + h.name + " " + h.key
}

func (w *writer) importHistory(entries []historyEntry, project string, res *LegacyResult) error {
	if _, err := openProject(w, project); err != nil {
		return err
	}
	refs, err := loadRefs(w, project)
	if err != nil {
		return err
	}
	ids := newLegacyIDs(FromHistoryJSON, project)
	for n, h := range entries {
		w.e.progress(n, len(entries))
		id := ids.next(h.key)
		if w.imported(id) {
			res.Skipped++
			continue
		}
		note := projection.NoteAdded{Text: h.text(), Kind: NoteKindNote, OccurredAt: occurredAt(h.ts)}
		stream := projection.ProjectStream(project)
		if t, ok := refs.task(h.task); ok && h.task != "" {
			note.Task, stream = t, projection.TaskStream(project, t)
		}
		if err := w.emitImported(stream, project, projection.TypeNoteAdded, note, id); err != nil {
			return h.o.wrap(err)
		}
		res.Created.Notes++
	}
	return nil
}
