package flow

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/projection"
)

// Export writes every event with seq >= since as one JSON object per line
// (the Event contract, with Raw set), oldest first, and returns how many
// it wrote.
func (e *Engine) Export(w io.Writer, since uint64) (int, error) {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	n := 0
	err := e.Events(Filter{SinceSeq: since, Raw: true}, func(ev Event) error {
		n++
		return enc.Encode(ev)
	})
	if err != nil {
		return n, err
	}
	return n, bw.Flush()
}

// ImportResult counts what Import did.
type ImportResult struct {
	Read     int `json:"read"`
	Appended int `json:"appended"`
	Skipped  int `json:"skipped"` // already present (same id, same content)
}

// maxImportLine bounds one line of an import file: a 1 MiB payload in
// base64 and as JSON, with room for the envelope.
const maxImportLine = 4*eventlog.MaxPayload + 64<<10

// Import appends the events of an export (JSONL) in one transaction: all
// of them or none. Events already present (same id, same content) are
// skipped, so importing twice changes nothing. Each event must continue
// its stream: version n needs the stream at n-1.
func (e *Engine) Import(r io.Reader) (ImportResult, error) {
	events, err := readImport(r)
	if err != nil {
		return ImportResult{}, err
	}
	return e.importEvents(events)
}

// importEvents appends and folds events in one transaction (see Import).
func (e *Engine) importEvents(events []importEvent) (ImportResult, error) {
	res := ImportResult{Read: len(events)}
	var unknown map[string]int // events kept but not folded, by type
	err := e.update(func(tx *eventlog.Tx) error {
		res.Appended, res.Skipped, unknown = 0, 0, map[string]int{}
		store := newTxStore(tx)
		for _, ie := range events {
			out, err := tx.Append(ie.stream, eventlog.Exact(ie.version-1), ie.event)
			if err != nil {
				return fmt.Errorf("%s: %w", ie.at, err)
			}
			if out.Duplicate {
				res.Skipped++
				continue
			}
			res.Appended++
			if err := foldSeq(tx, store, out.Seqs[0], unknown); errors.Is(err, ErrInvalid) {
				return fmt.Errorf("%s: %w", ie.at, err)
			} else if err != nil {
				return fmt.Errorf("%w: %s: %v", ErrInvalid, ie.at, err)
			}
		}
		return store.flush()
	})
	if err != nil {
		return ImportResult{}, err
	}
	for _, typ := range slices.Sorted(maps.Keys(unknown)) {
		e.warn("kept %d events of type %s without folding them: this flowctl does not know the type", unknown[typ], typ)
	}
	return res, nil
}

// foldSeq folds the record at seq into store, refusing one on a stream the
// commands would not put it on. Events of types this binary does not know
// are kept in the log and skipped by the fold.
func foldSeq(tx *eventlog.Tx, store *txStore, seq uint64, unknown map[string]int) error {
	r, err := tx.Record(seq)
	if err != nil {
		return err
	}
	// Reads of one entity at a point fold only its own stream: an event
	// that changes an entity from another stream would make them wrong.
	if err := checkPlacement(store, r); err != nil {
		return err
	}
	err = projection.Apply(store, r)
	if errors.Is(err, projection.ErrUnknown) {
		unknown[r.Type]++
		return nil
	}
	return err
}

type importEvent struct {
	at      string // where it was read: "line 3" of an import, "seq 3" of a recovery
	stream  string
	version uint64
	event   eventlog.Event
}

func readImport(r io.Reader) ([]importEvent, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxImportLine)
	var out []importEvent
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		ie, err := parseImportLine(b)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrInvalid, line, err)
		}
		ie.at = "line " + strconv.Itoa(line)
		out = append(out, ie)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%w: line %d is over %d bytes", ErrInvalid, line+1, maxImportLine)
		}
		return nil, err
	}
	return out, nil
}

func parseImportLine(b []byte) (importEvent, error) {
	if err := CheckJSON(b); err != nil {
		return importEvent{}, err
	}
	var ev Event
	if err := json.Unmarshal(b, &ev); err != nil {
		return importEvent{}, fmt.Errorf("not an event object: %v", decodeError(err))
	}
	switch {
	case ev.Stream == "":
		return importEvent{}, errors.New(`"stream" is missing`)
	case ev.Type == "":
		return importEvent{}, errors.New(`"type" is missing`)
	case ev.Version == 0:
		return importEvent{}, errors.New(`"version" is missing or 0`)
	case ev.Time.IsZero():
		return importEvent{}, errors.New(`"time" is missing`)
	}
	id, err := eventlog.ParseID(ev.ID)
	if err != nil || id.IsZero() {
		return importEvent{}, fmt.Errorf(`"id" %q is not a UUID`, ev.ID)
	}
	out := importEvent{stream: ev.Stream, version: ev.Version, event: eventlog.Event{
		ID: id, Type: ev.Type, Schema: ev.Schema, Time: ev.Time.UTC(),
		Actor: ev.Actor, Session: ev.Session, Project: ev.Project,
	}}
	if out.event.Correlation, err = parseOptionalID("correlation", ev.Correlation); err != nil {
		return importEvent{}, err
	}
	if out.event.Causation, err = parseOptionalID("causation", ev.Causation); err != nil {
		return importEvent{}, err
	}
	out.event.Data, err = importPayload(ev)
	return out, err
}

func parseOptionalID(name, s string) (eventlog.ID, error) {
	if s == "" {
		return eventlog.ID{}, nil
	}
	id, err := eventlog.ParseID(s)
	if err != nil {
		return id, fmt.Errorf("%q %q is not a UUID", name, s)
	}
	return id, nil
}

// importPayload takes Raw when present (the exact stored bytes), else
// encodes Data as msgpack with sorted keys.
func importPayload(ev Event) ([]byte, error) {
	if ev.Raw != nil {
		return ev.Raw, nil
	}
	if len(ev.Data) == 0 || string(ev.Data) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(ev.Data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf(`"data": %v`, err)
	}
	return marshal(numbers(v))
}

// numbers turns json.Number into int64, uint64 or float64.
func numbers(v any) any {
	switch t := v.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		if u, err := strconv.ParseUint(t.String(), 10, 64); err == nil {
			return u
		}
		f, _ := t.Float64()
		return f
	case map[string]any:
		for k, x := range t {
			t[k] = numbers(x)
		}
	case []any:
		for i, x := range t {
			t[i] = numbers(x)
		}
	}
	return v
}
