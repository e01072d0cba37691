package legacy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/flowctl/flowctl/flow"
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
	return h, o.wrap(flow.CheckText("the event as a note", h.text(), flow.MaxText, true))
}

// text is the note an entry becomes.
func (h historyEntry) text() string {
	return "history: " + h.name + " " + h.key
}

func addHistory(im *flow.Importer, entries []historyEntry, project string, res *Result) error {
	if _, err := im.OpenProject(project); err != nil {
		return err
	}
	refs, err := loadRefs(im, project)
	if err != nil {
		return err
	}
	ids := newLegacyIDs(FromHistoryJSON, project)
	for n, h := range entries {
		im.Progress(n, len(entries))
		id := ids.next(h.key)
		if im.Imported(id) {
			res.Skipped++
			continue
		}
		note := projection.NoteAdded{Text: h.text(), Kind: flow.NoteKindNote, OccurredAt: occurredAt(h.ts)}
		if t, ok := refs.task(h.task); ok && h.task != "" {
			note.Task = t
		}
		if err := im.AddNote(project, note, id); err != nil {
			return h.o.wrap(err)
		}
		res.Created.Notes++
	}
	return nil
}
