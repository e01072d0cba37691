package legacy

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/flowctl/flowctl/flow"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/flowctl/flowctl/projection"
)

// Formats of the files of the system flowctl replaces (the seed notes),
// for Import.
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

// Formats returns the formats Import reads.
func Formats() []string {
	return []string{FromWorkflowJSON, FromHistoryJSON, FromContextDir, FromExecJSONL}
}

// MaxFile bounds one imported file (and one file of a context
// directory: flow.MaxInput).
const MaxFile = 256 << 20

// Input is the input of Import.
type Input struct {
	Format string // one of Formats
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

// Result says what an import did.
type Result struct {
	Format  string  `json:"format"`
	Project string  `json:"project"`
	Read    int     `json:"read"` // entries read: tasks, history events, context files or exec lines
	Created Created `json:"created"`
	// Skipped counts the entries that were already imported (or, for a
	// context file, would change nothing).
	Skipped int `json:"skipped"`
	// Tasks maps every task entry of a workflow.json to its flowctl id,
	// in file order.
	Tasks []Task `json:"tasks,omitempty"`
	// Warnings name what was read but not imported (unknown keys).
	Warnings []string `json:"warnings,omitempty"`
}

// Created counts what an import appended, per kind.
type Created struct {
	Projects int `json:"projects"`
	Tasks    int `json:"tasks"`
	Notes    int `json:"notes"`
	Contexts int `json:"contexts"` // context merges
	Execs    int `json:"execs"`
	// Moves counts the status changes of tasks and steps, Steps the steps
	// added: the history entries that became events of those kinds.
	Moves int `json:"moves"`
	Steps int `json:"steps"`
}

// Task is one task entry of a workflow.json and its flowctl task.
type Task struct {
	Ref     string `json:"ref"`
	ID      string `json:"id"`
	Created bool   `json:"created"` // false: the ref was already imported
}

// ImportError locates a problem in an imported file: File as the import
// names it, Line from 1 (0 when the problem is the file as a whole). Err
// carries the class (flow.ErrInvalid, flow.ErrNotFound, ...).
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

// Import imports one file (or directory) of the system flowctl
// replaces, in one transaction: all of it or nothing. Importing the same
// file again appends nothing (see each format for how it knows). Errors:
// *ImportError wrapping flow.ErrInvalid (a malformed or unknown entry, with
// its line) or flow.ErrNotFound (an entry naming a task the project does not
// have); flow.ErrNotFound (the project, the file); store.ErrConflict (an
// archived project).
func Import(e *flow.Engine, in Input) (*Result, error) {
	if in.Name == "" {
		in.Name = in.Path
	}
	switch in.Format {
	case FromWorkflowJSON:
		return importWorkflow(e, in)
	case FromHistoryJSON:
		return importHistory(e, in)
	case FromContextDir:
		return importContextDir(e, in)
	case FromExecJSONL:
		return importExecLog(e, in)
	}
	return nil, fmt.Errorf("%w: import format %q: use %s", flow.ErrInvalid, in.Format, strings.Join(Formats(), ", "))
}

// read returns the content of the file to import, stripped of a UTF-8
// byte order mark.
func (in Input) read() ([]byte, error) {
	r := in.Input
	if r == nil {
		f, err := os.Open(in.Path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, MaxFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFile {
		return nil, &ImportError{File: in.Name, Err: fmt.Errorf("%w: the file is over %d bytes", flow.ErrInvalid, MaxFile)}
	}
	return bytes.TrimPrefix(b, []byte("\uFEFF")), nil
}

// runImport runs fn in one command: one write transaction. fn may run
// more than once (a group commit retries without a failed call), so it
// starts from a fresh copy of res each time.
func runImport(e *flow.Engine, format, project string, res *Result, fn func(im *flow.Importer, res *Result) error) error {
	start := *res
	start.Tasks = slices.Clone(res.Tasks)
	start.Warnings = slices.Clip(res.Warnings) // an append during a try never writes into start's
	return e.ImportEntries(format, project, func(im *flow.Importer) error {
		*res = start
		res.Tasks = slices.Clone(start.Tasks)
		return fn(im, res)
	})
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
func (g *legacyIDs) next(key string) flow.ImportID {
	n := g.seen[key]
	g.seen[key]++
	h := sha256.New()
	for _, s := range []string{"flowctl import", g.format, g.project, key, strconv.Itoa(n)} {
		h.Write(strconv.AppendInt(nil, int64(len(s)), 10))
		h.Write([]byte{':'})
		h.Write([]byte(s))
	}
	var id flow.ImportID
	copy(id[:], h.Sum(nil))
	id[6] = id[6]&0x0f | 0x80 // version 8
	id[8] = id[8]&0x3f | 0x80 // RFC 9562 variant
	return id
}

// refIndex finds a project's tasks by the ids of the legacy system: the
// ref of a task (its original id), or a flowctl id written exactly "T-n".
type refIndex struct {
	byRef map[string]string
	ids   map[string]bool
}

func loadRefs(im *flow.Importer, project string) (*refIndex, error) {
	x := &refIndex{byRef: map[string]string{}, ids: map[string]bool{}}
	tasks, err := im.Tasks(project)
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

// lineAt returns the line (from 1) of byte offset off in data.
func lineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}

// checkDocument checks a whole JSON file before it is walked: valid
// UTF-8, well-formed JSON, then the limits of flow.CheckJSON (duplicate keys,
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
		return &ImportError{File: name, Line: lineAt(data, int64(i)), Err: fmt.Errorf("%w: not valid UTF-8", flow.ErrInvalid)}
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return &ImportError{File: name, Line: lineAt(data, se.Offset), Err: fmt.Errorf("%w: not valid JSON: %v", flow.ErrInvalid, se)}
		}
		return &ImportError{File: name, Err: fmt.Errorf("%w: not valid JSON: %v", flow.ErrInvalid, err)}
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

// newObject checks raw (limits of flow.CheckJSON) and splits it into keys.
func newObject(file string, line int, what string, raw []byte) (*object, error) {
	o := &object{file: file, line: line, what: what, used: map[string]bool{}}
	if err := flow.CheckJSON(raw); err != nil {
		return nil, o.errorf(flow.ErrInvalid, "not valid JSON: %v", err)
	}
	if err := json.Unmarshal(raw, &o.keys); err != nil || o.keys == nil {
		return nil, o.errorf(flow.ErrInvalid, "is not a JSON object")
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
			return "", o.errorf(flow.ErrInvalid, "%q is missing", key)
		}
		return "", nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", o.errorf(flow.ErrInvalid, "%q is %s, not a string", key, jsonKind(v))
	}
	return s, nil
}

// ident reads an id: a string, or an integer (written as its digits).
func (o *object) ident(key string, required bool) (string, error) {
	v, ok := o.get(key)
	if ok && len(v) > 0 && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) {
		return identOf(v, func() error { return o.errorf(flow.ErrInvalid, "%q is %s, not an id", key, v) })
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
		return nil, o.errorf(flow.ErrInvalid, "%q is %s, not an array", key, jsonKind(v))
	}
	out := make([]string, 0, len(raws))
	for i, r := range raws {
		bad := func() error { return o.errorf(flow.ErrInvalid, "%q[%d] is %s, not an id", key, i, jsonKind(r)) }
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
		return nil, o.errorf(flow.ErrInvalid, "%q is %s, not an array of strings", key, jsonKind(v))
	}
	return out, nil
}

// loose reads a string, or "" when the key is missing, null or not a
// string: for keys whose value never refused an entry.
func (o *object) loose(key string) string {
	v, ok := o.get(key)
	var s string
	if !ok || json.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}

// looseID is loose for an id: a string, or an integer written as its
// digits.
func (o *object) looseID(key string) string {
	if v, ok := o.get(key); ok && len(v) > 0 && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) {
		id, _ := identOf(v, func() error { return nil })
		return id
	}
	return o.loose(key)
}

// boolean reads a boolean; ok is false when the key is missing or null.
func (o *object) boolean(key string) (b, ok bool, err error) {
	v, ok := o.get(key)
	if !ok {
		return false, false, nil
	}
	if err := json.Unmarshal(v, &b); err != nil {
		return false, false, o.errorf(flow.ErrInvalid, "%q is %s, not true or false", key, jsonKind(v))
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
		return 0, o.errorf(flow.ErrInvalid, "%q is %s, not a number", key, jsonKind(v))
	}
	return f, nil
}

// timestamp reads a time: a string flow.ParseTimestamp takes (RFC 3339,
// Python's isoformat), or a number of seconds since 1970 (time.time()). ok is false when the key is
// missing or null.
func (o *object) timestamp(key string, required bool) (t time.Time, ok bool, err error) {
	v, ok := o.get(key)
	if !ok {
		if required {
			return t, false, o.errorf(flow.ErrInvalid, "%q is missing", key)
		}
		return t, false, nil
	}
	t, ok, err = flow.ParseTimestamp(key, v)
	switch {
	case err != nil:
		return t, false, o.wrap(err)
	case !ok && required:
		return t, false, o.errorf(flow.ErrInvalid, "%q is empty", key)
	}
	return t, ok, nil
}

// sub reads a nested object (nil when missing or null).
func (o *object) sub(key string) (*object, error) {
	v, ok := o.get(key)
	if !ok {
		return nil, nil
	}
	s := &object{file: o.file, line: o.line, what: o.what, used: map[string]bool{}}
	if err := json.Unmarshal(v, &s.keys); err != nil || s.keys == nil {
		return nil, o.errorf(flow.ErrInvalid, "%q is %s, not an object", key, jsonKind(v))
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

// occurredAt is t as a payload's occurred_at: 0 (omitted) for no time.
func occurredAt(t time.Time) projection.Time {
	if t.IsZero() {
		return 0
	}
	return projection.TimeOf(t)
}
