package flow

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// Formats of the files of the system flowctl replaces (the seed notes),
// for ImportLegacy.
const (
	// FromWorkflowJSON is projects/<name>/workflow.json: {"project": ...,
	// "tasks": [{id, name, status, deps, meta: {owner, tags}}]}.
	FromWorkflowJSON = "workflow-json"
	// FromHistoryJSON is projects/<name>/workflow_history.json: a JSON
	// array of {ts, event, user, detail}.
	FromHistoryJSON = "history-json"
	// FromContextDir is a directory of *.json dumps, each {task_id, context}.
	FromContextDir = "context-dir"
	// FromExecJSONL is the execution log: one JSON object per line with
	// plan_id, task_id, timestamp, elapsed_ms, code, stdout, stderr,
	// success, added_vars and added_imports.
	FromExecJSONL = "exec-jsonl"
)

// LegacyFormats returns the formats ImportLegacy reads.
func LegacyFormats() []string {
	return []string{FromWorkflowJSON, FromHistoryJSON, FromContextDir, FromExecJSONL}
}

// MaxLegacyFile bounds one imported file (and one file of a context
// directory: MaxInput).
const MaxLegacyFile = 256 << 20

// LegacyImport is the input of ImportLegacy.
type LegacyImport struct {
	Format string // one of LegacyFormats
	// Path is the file to read, or the directory for FromContextDir.
	Path string
	// Name is how errors and warnings name the file; empty: Path.
	Name string
	// Input, when set, is read instead of the file at Path (not for
	// FromContextDir).
	Input io.Reader
	// Project is the project to import into. It must exist, except for
	// FromWorkflowJSON, which creates it and where an empty Project means
	// the file's "project".
	Project string
}

// LegacyResult says what an import did.
type LegacyResult struct {
	Format  string        `json:"format"`
	Project string        `json:"project"`
	Read    int           `json:"read"` // entries read: tasks, history events, context files or exec lines
	Created LegacyCreated `json:"created"`
	// Skipped counts the entries that were already imported (or, for a
	// context file, would change nothing).
	Skipped int `json:"skipped"`
	// Tasks maps every task entry of a workflow.json to its flowctl id,
	// in file order.
	Tasks []LegacyTask `json:"tasks,omitempty"`
	// Warnings name what was read but not imported (unknown keys).
	Warnings []string `json:"warnings,omitempty"`
}

// LegacyCreated counts what an import appended, per kind.
type LegacyCreated struct {
	Projects int `json:"projects"`
	Tasks    int `json:"tasks"`
	Notes    int `json:"notes"`
	Contexts int `json:"contexts"` // context merges
	Execs    int `json:"execs"`
}

// LegacyTask is one task entry of a workflow.json and its flowctl task.
type LegacyTask struct {
	Ref     string `json:"ref"`
	ID      string `json:"id"`
	Created bool   `json:"created"` // false: the ref was already imported
}

// ImportError locates a problem in an imported file: File as the import
// names it, Line from 1 (0 when the problem is the file as a whole). Err
// carries the class (ErrInvalid, ErrNotFound, ...).
type ImportError struct {
	File string
	Line int
	Err  error
}

func (e *ImportError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.File, e.Err)
}

func (e *ImportError) Unwrap() error { return e.Err }

// ImportLegacy imports one file (or directory) of the system flowctl
// replaces, in one transaction: all of it or nothing. Importing the same
// file again appends nothing (see each format for how it knows). Errors:
// *ImportError wrapping ErrInvalid (a malformed or unknown entry, with
// its line) or ErrNotFound (an entry naming a task the project does not
// have); ErrNotFound (the project, the file); store.ErrConflict (an
// archived project).
func (e *Engine) ImportLegacy(in LegacyImport) (*LegacyResult, error) {
	if in.Name == "" {
		in.Name = in.Path
	}
	switch in.Format {
	case FromWorkflowJSON:
		return e.importWorkflow(in)
	case FromHistoryJSON:
		return e.importHistory(in)
	case FromContextDir:
		return e.importContextDir(in)
	case FromExecJSONL:
		return e.importExecLog(in)
	}
	return nil, fmt.Errorf("%w: import format %q: use %s", ErrInvalid, in.Format, strings.Join(LegacyFormats(), ", "))
}

// read returns the content of the file to import, stripped of a UTF-8
// byte order mark.
func (in LegacyImport) read() ([]byte, error) {
	r := in.Input
	if r == nil {
		f, err := os.Open(in.Path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, MaxLegacyFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxLegacyFile {
		return nil, &ImportError{File: in.Name, Err: fmt.Errorf("%w: the file is over %d bytes", ErrInvalid, MaxLegacyFile)}
	}
	return bytes.TrimPrefix(b, []byte("\uFEFF")), nil
}

// runImport runs fn in one command: one write transaction. fn may run
// more than once (a group commit retries without a failed call), so it
// starts from a fresh copy of res each time.
func (e *Engine) runImport(format, project string, res *LegacyResult, fn func(w *writer, res *LegacyResult) error) error {
	start := *res
	start.Tasks = slices.Clone(res.Tasks)
	_, err := e.command(Write{}, "import."+format, nil, func(w *writer) (Ref, error) {
		*res = start
		res.Tasks = slices.Clone(start.Tasks)
		err := fn(w, res)
		e.progress(1, 1) // done, whatever the entries were
		return Ref{Kind: projection.KindProject, Project: project}, err
	})
	return err
}

// emitImported appends one imported event with a given (deterministic)
// id, and folds it. It is emit with the id set. The event's time is the
// time of the import, like any event's: the time the file gives an entry
// is in the payload (occurred_at), so that event times follow seqs and
// --at TIME names a prefix of the log.
func (w *writer) emitImported(stream, project, typ string, payload any, id store.ID) error {
	schema, _ := projection.Schema(typ)
	ev, err := w.e.newEvent(typ, schema, project, payload)
	if err != nil {
		return err
	}
	ev.ID = id
	_, err = w.emitEvent(stream, store.Any, ev)
	return err
}

// legacyIDs derives the event ids of an import from what the entries
// say, so that importing the same entry again finds its id stored and
// skips it. The n-th entry with the same key in one file gets its own id.
type legacyIDs struct {
	format, project string
	seen            map[string]int
}

func newLegacyIDs(format, project string) *legacyIDs {
	return &legacyIDs{format: format, project: project, seen: map[string]int{}}
}

// next returns the id of the next entry whose content is key: a UUID of
// version 8 (custom) made of SHA-256 bits.
func (g *legacyIDs) next(key string) store.ID {
	n := g.seen[key]
	g.seen[key]++
	h := sha256.New()
	for _, s := range []string{"flowctl import", g.format, g.project, key, strconv.Itoa(n)} {
		h.Write(strconv.AppendInt(nil, int64(len(s)), 10))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	var id store.ID
	copy(id[:], h.Sum(nil))
	id[6] = id[6]&0x0f | 0x80 // version 8
	id[8] = id[8]&0x3f | 0x80 // RFC 9562 variant
	return id
}

// imported reports whether an event with id is already in the log.
func (w *writer) imported(id store.ID) bool { return w.tx.SeqOf(id) != 0 }

// refIndex finds a project's tasks by the ids of the legacy system: the
// ref of a task (its original id), or a flowctl id written exactly "T-n".
type refIndex struct {
	byRef map[string]string
	ids   map[string]bool
}

func loadRefs(src source, project string) (*refIndex, error) {
	x := &refIndex{byRef: map[string]string{}, ids: map[string]bool{}}
	tasks, err := src.Tasks(project)
	for _, t := range tasks { // in id order: the oldest task of a ref wins
		x.add(t.Ref, t.ID)
	}
	return x, err
}

func (x *refIndex) add(ref, id string) {
	x.ids[id] = true
	if _, dup := x.byRef[ref]; ref != "" && !dup {
		x.byRef[ref] = id
	}
}

// ref returns the task whose ref is s.
func (x *refIndex) ref(s string) (string, bool) {
	id, ok := x.byRef[s]
	return id, ok
}

// task returns the task s names: by ref first, then as a flowctl id.
func (x *refIndex) task(s string) (string, bool) {
	if id, ok := x.byRef[s]; ok {
		return id, true
	}
	return s, x.ids[s]
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

// lineAt returns the line (from 1) of byte offset off in data.
func lineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}

// checkDocument checks a whole JSON file before it is walked: valid
// UTF-8, well-formed JSON, then the limits of CheckJSON (duplicate keys,
// depth), each located by line when it can be.
func checkDocument(name string, data []byte) error {
	if !utf8.Valid(data) {
		i := 0
		for i < len(data) {
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			i += size
		}
		return &ImportError{File: name, Line: lineAt(data, int64(i)), Err: fmt.Errorf("%w: not valid UTF-8", ErrInvalid)}
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return &ImportError{File: name, Line: lineAt(data, se.Offset), Err: fmt.Errorf("%w: not valid JSON: %v", ErrInvalid, se)}
		}
		return &ImportError{File: name, Err: fmt.Errorf("%w: not valid JSON: %v", ErrInvalid, err)}
	}
	return nil
}

// rawEntry is one value of a JSON array in a file, with its line.
type rawEntry struct {
	line int
	raw  json.RawMessage
}

// arrayEntries reads the JSON array that dec is at, returning each
// element with the line it starts on. data is the whole document dec
// reads, so offsets are its offsets.
func arrayEntries(dec *json.Decoder, data []byte) ([]rawEntry, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, errNotArray
	}
	var out []rawEntry
	for dec.More() {
		off := dec.InputOffset()
		for off < int64(len(data)) && strings.IndexByte(" \t\r\n,", data[off]) >= 0 {
			off++
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		out = append(out, rawEntry{line: lineAt(data, off), raw: raw})
	}
	_, err = dec.Token()
	return out, err
}

var errNotArray = errors.New("not a JSON array")

// object is one JSON object of an imported file, read key by key: each
// getter marks its key used, so that unused reports the keys left over.
type object struct {
	file string
	line int
	what string // how errors name the entry: `task 3 ("T003")`
	keys map[string]json.RawMessage
	used map[string]bool
}

// newObject checks raw (limits of CheckJSON) and splits it into keys.
func newObject(file string, line int, what string, raw []byte) (*object, error) {
	o := &object{file: file, line: line, what: what, used: map[string]bool{}}
	if err := CheckJSON(raw); err != nil {
		return nil, o.errorf(ErrInvalid, "not valid JSON: %v", err)
	}
	if err := json.Unmarshal(raw, &o.keys); err != nil || o.keys == nil {
		return nil, o.errorf(ErrInvalid, "is not a JSON object")
	}
	return o, nil
}

func (o *object) errorf(class error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if o.what != "" {
		msg = o.what + ": " + msg
	}
	return &ImportError{File: o.file, Line: o.line, Err: fmt.Errorf("%w: %s", class, msg)}
}

// wrap locates err (from a check of the engine) at the entry.
func (o *object) wrap(err error) error {
	if err == nil {
		return nil
	}
	if o.what != "" {
		err = fmt.Errorf("%s: %w", o.what, err)
	}
	return &ImportError{File: o.file, Line: o.line, Err: err}
}

func (o *object) get(key string) (json.RawMessage, bool) {
	o.used[key] = true
	v, ok := o.keys[key]
	if ok && string(v) == "null" {
		return nil, false
	}
	return v, ok
}

// str reads a string; a missing or null key is "" (an error if required).
func (o *object) str(key string, required bool) (string, error) {
	v, ok := o.get(key)
	if !ok {
		if required {
			return "", o.errorf(ErrInvalid, "%q is missing", key)
		}
		return "", nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", o.errorf(ErrInvalid, "%q is %s, not a string", key, jsonKind(v))
	}
	return s, nil
}

// ident reads an id: a string, or an integer (written as its digits).
func (o *object) ident(key string, required bool) (string, error) {
	v, ok := o.get(key)
	if ok && len(v) > 0 && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) {
		return identOf(v, func() error { return o.errorf(ErrInvalid, "%q is %s, not an id", key, v) })
	}
	return o.str(key, required)
}

func identOf(v json.RawMessage, bad func() error) (string, error) {
	var n json.Number
	if err := json.Unmarshal(v, &n); err != nil {
		return "", bad()
	}
	if _, err := n.Int64(); err != nil {
		return "", bad()
	}
	return n.String(), nil
}

// idents reads an array of ids.
func (o *object) idents(key string) ([]string, error) {
	v, ok := o.get(key)
	if !ok {
		return nil, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(v, &raws); err != nil {
		return nil, o.errorf(ErrInvalid, "%q is %s, not an array", key, jsonKind(v))
	}
	out := make([]string, 0, len(raws))
	for i, r := range raws {
		bad := func() error { return o.errorf(ErrInvalid, "%q[%d] is %s, not an id", key, i, jsonKind(r)) }
		var s string
		if err := json.Unmarshal(r, &s); err == nil {
			out = append(out, s)
			continue
		}
		id, err := identOf(r, bad)
		if err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, nil
}

// strs reads an array of strings.
func (o *object) strs(key string) ([]string, error) {
	v, ok := o.get(key)
	if !ok {
		return nil, nil
	}
	var out []string
	if err := json.Unmarshal(v, &out); err != nil {
		return nil, o.errorf(ErrInvalid, "%q is %s, not an array of strings", key, jsonKind(v))
	}
	return out, nil
}

// boolean reads a boolean; ok is false when the key is missing or null.
func (o *object) boolean(key string) (b, ok bool, err error) {
	v, ok := o.get(key)
	if !ok {
		return false, false, nil
	}
	if err := json.Unmarshal(v, &b); err != nil {
		return false, false, o.errorf(ErrInvalid, "%q is %s, not true or false", key, jsonKind(v))
	}
	return b, true, nil
}

// number reads a number; a missing key is 0.
func (o *object) number(key string) (float64, error) {
	v, ok := o.get(key)
	if !ok {
		return 0, nil
	}
	var f float64
	if err := json.Unmarshal(v, &f); err != nil {
		return 0, o.errorf(ErrInvalid, "%q is %s, not a number", key, jsonKind(v))
	}
	return f, nil
}

// timestamp reads a time: a string parseLegacyTime takes, or a number of
// seconds since 1970 (Python's time.time()). ok is false when the key is
// missing or null.
func (o *object) timestamp(key string, required bool) (t time.Time, ok bool, err error) {
	v, ok := o.get(key)
	if !ok {
		if required {
			return t, false, o.errorf(ErrInvalid, "%q is missing", key)
		}
		return t, false, nil
	}
	t, ok, err = timestampOf(key, v)
	switch {
	case err != nil:
		return t, false, o.wrap(err)
	case !ok && required:
		return t, false, o.errorf(ErrInvalid, "%q is empty", key)
	}
	return t, ok, nil
}

// timestampOf reads a time given as JSON: a string parseLegacyTime takes,
// or a number of seconds since 1970 (Python's time.time()), within the
// years an event can hold. ok is false for nothing, null or "". Errors
// are ErrInvalid.
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

// sub reads a nested object (nil when missing or null).
func (o *object) sub(key string) (*object, error) {
	v, ok := o.get(key)
	if !ok {
		return nil, nil
	}
	s := &object{file: o.file, line: o.line, what: o.what, used: map[string]bool{}}
	if err := json.Unmarshal(v, &s.keys); err != nil || s.keys == nil {
		return nil, o.errorf(ErrInvalid, "%q is %s, not an object", key, jsonKind(v))
	}
	return s, nil
}

// unused returns a warning naming the keys no getter read, or "".
func (o *object) unused(prefix string) string {
	var left []string
	for _, k := range o.unusedKeys() {
		left = append(left, strconv.Quote(prefix+k))
	}
	if len(left) == 0 {
		return ""
	}
	where := o.file
	if o.line > 0 {
		where = fmt.Sprintf("%s:%d", o.file, o.line)
	}
	if o.what != "" {
		where += ": " + o.what
	}
	return fmt.Sprintf("%s: ignored %s (not a field flowctl imports)", where, strings.Join(left, ", "))
}

// unusedKeys returns the keys no getter read, sorted.
func (o *object) unusedKeys() []string {
	var left []string
	for k := range o.keys {
		if !o.used[k] {
			left = append(left, k)
		}
	}
	slices.Sort(left)
	return left
}

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

// compactJSON returns v without insignificant space, keys and numbers as
// written.
func compactJSON(v []byte) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return string(v)
	}
	return buf.String()
}
