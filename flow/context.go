package flow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/flowctl/flowctl/flow/internal/check"
	"github.com/flowctl/flowctl/flow/internal/history"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/vmihailenco/msgpack/v5"
)

// TaskContext is a task's context with the versions a caller needs to
// change it again.
type TaskContext struct {
	Task string `json:"task"`
	// Context is the context object in canonical form (keys sorted, no
	// insignificant space, numbers as written).
	Context projection.JSON `json:"context"`
	// Version is the task's stream version: the --if-version of the next
	// change.
	Version uint64 `json:"version"`
	// ContextVersion counts the changes the context has had.
	ContextVersion int `json:"context_version"`
}

func contextOf(t *projection.Task) *TaskContext {
	return &TaskContext{Task: t.ID, Context: t.Context, Version: t.Version, ContextVersion: t.ContextVersion}
}

// ContextPatch is the input of MergeContext: an RFC 7396 merge patch of a
// task's context, or with Replace the whole new context. Patch is the JSON
// object exactly as the user gave it; it is stored so.
type ContextPatch struct {
	Project string `json:"project"`
	ID      string `json:"id"` // task id, T-n
	Patch   string `json:"patch"`
	Replace bool   `json:"replace,omitempty"`
	Write
}

// MaxContext is the largest a task's context may grow to, in bytes of its
// canonical JSON.
const MaxContext = MaxInput

// MergeContext applies in.Patch to the task's context (objects merge
// recursively, null deletes a key, anything else, arrays included,
// replaces) or, with in.Replace, swaps the whole context for it. It
// returns the new context and the task's version. A change that would not
// change the context appends nothing. Errors: ErrInvalid (the patch is not
// a valid JSON object, or the result is over MaxContext), ErrNotFound,
// store.ErrConflict (a stale IfVersion, an archived project).
func (e *Engine) MergeContext(in ContextPatch) (*TaskContext, error) {
	if err := checkJSONObject("patch", in.Patch); err != nil {
		return nil, err
	}
	name := "ctx.merge"
	if in.Replace {
		name = "ctx.replace"
	}
	return e.changeContext(name, in, in)
}

// ContextKey is the input of SetContextKey and UnsetContextKey: one
// top-level key of a task's context and, to set it, its value as JSON.
type ContextKey struct {
	Project string `json:"project"`
	ID      string `json:"id"` // task id, T-n
	Key     string `json:"key"`
	Value   string `json:"value,omitempty"` // JSON text; ignored by UnsetContextKey
	Write
}

// SetContextKey sets one top-level key: the merge patch {key: value}, so
// an object value merges into an object already there and null deletes.
// Errors as MergeContext.
func (e *Engine) SetContextKey(in ContextKey) (*TaskContext, error) {
	if err := checkContextKey(in.Key); err != nil {
		return nil, err
	}
	if err := checkJSONText("value", in.Value); err != nil {
		return nil, err
	}
	return e.changeContext("ctx.set", in, keyPatch(in, in.Value))
}

// UnsetContextKey deletes one top-level key: the merge patch {key: null}.
// Unsetting a key that is not there appends nothing.
func (e *Engine) UnsetContextKey(in ContextKey) (*TaskContext, error) {
	if err := checkContextKey(in.Key); err != nil {
		return nil, err
	}
	in.Value = ""
	return e.changeContext("ctx.unset", in, keyPatch(in, "null"))
}

func keyPatch(in ContextKey, value string) ContextPatch {
	key, _ := json.Marshal(in.Key) // a valid UTF-8 string always marshals
	patch := "{" + string(key) + ":" + value + "}"
	return ContextPatch{Project: in.Project, ID: in.ID, Patch: patch, Write: in.Write}
}

func checkContextKey(key string) error {
	return check.Line("context key", key, MaxTitle, true)
}

// checkJSONText checks user JSON: size, UTF-8, duplicate keys, depth.
func checkJSONText(field, s string) error {
	if len(s) > MaxInput {
		return fmt.Errorf("%w: %s is %d bytes, the limit is %d", ErrInvalid, field, len(s), MaxInput)
	}
	if err := CheckJSON([]byte(s)); err != nil {
		return fmt.Errorf("%w: %s is not valid JSON: %v", ErrInvalid, field, err)
	}
	return nil
}

// checkJSONObject checks user JSON that must be an object.
func checkJSONObject(field, s string) error {
	if err := checkJSONText(field, s); err != nil {
		return err
	}
	if b := bytes.TrimLeft([]byte(s), " \t\r\n"); len(b) == 0 || b[0] != '{' {
		return fmt.Errorf("%w: %s must be a JSON object ({...})", ErrInvalid, field)
	}
	return nil
}

// changeContext runs one context change as the command name, identified
// for idempotency by input.
func (e *Engine) changeContext(name string, input any, in ContextPatch) (*TaskContext, error) {
	ref, err := e.command(in.Write, name, input, func(w *writer) (Ref, error) {
		ref := Ref{Kind: projection.KindTask, Project: in.Project, ID: in.ID}
		return ref, w.changeContext(in)
	})
	if err != nil {
		return nil, err
	}
	return readTask(e, ref.Project, ref.ID, func(t *projection.Task) (*TaskContext, error) { return contextOf(t), nil })
}

func (w *writer) changeContext(in ContextPatch) error {
	if _, err := openProject(w, in.Project); err != nil {
		return err
	}
	t, err := mustTask(w, in.Project, in.ID)
	if err != nil {
		return err
	}
	next, err := nextContext(t.Context, in)
	if err != nil {
		return err
	}
	stream := projection.TaskStream(in.Project, in.ID)
	if next == t.Context {
		return checkVersion(in.Write, t.Version, stream)
	}
	_, err = w.emit(stream, in.expect(), in.Project, projection.TypeTaskContextMerged,
		projection.TaskContextMerged{Patch: in.Patch, Replace: in.Replace})
	return err
}

// nextContext is what the context becomes after in; the fold computes the
// same from the event.
func nextContext(cur projection.JSON, in ContextPatch) (projection.JSON, error) {
	var next projection.JSON
	var err error
	if in.Replace {
		next, err = projection.Canonical(projection.JSON(in.Patch))
	} else {
		next, err = projection.MergePatch(cur, projection.JSON(in.Patch))
	}
	if err != nil {
		return "", fmt.Errorf("%w: patch: %v", ErrInvalid, err)
	}
	if len(next) > MaxContext {
		return "", fmt.Errorf("%w: the context would be %d bytes, the limit is %d", ErrInvalid, len(next), MaxContext)
	}
	return next, nil
}

// Context returns a task's context, or ErrNotFound.
func (e *Engine) Context(project, id string) (*TaskContext, error) {
	t, err := e.Task(project, id)
	if err != nil {
		return nil, err
	}
	return contextOf(t), nil
}

// ContextValue returns the value of one top-level key of a task's
// context, as JSON; ErrNotFound when the task or the key is not there.
func (e *Engine) ContextValue(project, id, key string) (projection.JSON, error) {
	c, err := e.Context(project, id)
	if err != nil {
		return "", err
	}
	keys, err := contextKeys(c.Context)
	if err != nil {
		return "", err
	}
	v, ok := keys[key]
	if !ok {
		return "", fmt.Errorf("%w: key %q in the context of task %s", ErrNotFound, key, id)
	}
	return v, nil
}

// contextKeys splits a canonical context into its top-level values, each
// kept as its exact JSON text.
func contextKeys(doc projection.JSON) (map[string]projection.JSON, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(doc), &raw); err != nil {
		return nil, &store.CorruptionError{Reason: fmt.Sprintf("a task context does not decode: %v", err)}
	}
	out := make(map[string]projection.JSON, len(raw))
	for k, v := range raw {
		out[k] = projection.JSON(v)
	}
	return out, nil
}

// Context history operations.
const (
	ContextSet      = "set"      // a merge gave the key a new value
	ContextUnset    = "unset"    // a merge (or a replace) removed the key
	ContextReplace  = "replace"  // a replace gave the key a new value
	ContextRollback = "rollback" // a rollback restored the key's value
)

// ContextEntry is one change to one top-level key of a task's context.
type ContextEntry struct {
	Seq   uint64    `json:"seq"`
	Time  time.Time `json:"time"`
	Actor string    `json:"actor"`
	Key   string    `json:"key"`
	Op    string    `json:"op"` // set | unset | replace | rollback
	// Value is the key's value after the change; null when it was removed.
	Value projection.JSON `json:"value"`
}

// ContextHistory lists every change to each top-level key of a task's
// context, oldest first (keys of one change in key order): the task's
// context changes, and the rollbacks (of the task or of its project) that
// restored it. With key, only that key's changes. A key whose value a
// change left as it was is not listed for that change.
//
// It reads the task's own stream and the rollbacks of the whole project
// after the task's first event (the project's rollback index), never the
// rest of the project's history: every event that changes a task's
// context is on its stream but those rollbacks (see history.EntityAt).
func (e *Engine) ContextHistory(project, id, key string) ([]ContextEntry, error) {
	if _, err := e.Task(project, id); err != nil {
		return nil, err
	}
	h := contextWalk{cur: map[string]projection.JSON{}, key: key, task: id, stream: projection.TaskStream(project, id)}
	recs, err := e.contextEvents(project, h.stream)
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		ev := eventOf(r)
		ev.Raw = r.Data
		if err := h.event(ev); err != nil {
			return nil, err
		}
	}
	return h.out, nil
}

// contextEvents returns, in seq order, the events that can change the
// context of the task whose stream is stream: its context changes and
// rollbacks, and the rollbacks of its whole project after its first
// event, all up to the head of one read transaction.
func (e *Engine) contextEvents(project, stream string) ([]*store.Record, error) {
	var own, rollbacks []*store.Record
	first := uint64(0)
	err := e.view(func(tx store.Tx) error {
		head, _ := tx.Head()
		err := tx.ReadStream(stream, 1, func(r *store.Record) error {
			if r.Seq > head || r.Project != project {
				return nil
			}
			if first == 0 {
				first = r.Seq
			}
			if r.Type == projection.TypeTaskContextMerged || r.Type == projection.TypeRollbackApplied {
				own = append(own, r)
			}
			return nil
		})
		if err != nil || first == 0 {
			return err
		}
		rollbacks, err = history.ProjectRollbacks(tx, project, first, head, e.warn)
		return err
	})
	if err == nil {
		err = e.release()
	}
	if err != nil {
		return nil, err
	}
	return mergeRecords(own, rollbacks), nil
}

// mergeRecords merges two lists of records, each in seq order, into one.
func mergeRecords(a, b []*store.Record) []*store.Record {
	out := make([]*store.Record, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if a[0].Seq < b[0].Seq {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}

// contextWalk folds a task's context changes, noting what each changed.
type contextWalk struct {
	cur    map[string]projection.JSON
	doc    projection.JSON
	key    string
	task   string
	stream string
	out    []ContextEntry
}

func (h *contextWalk) event(ev Event) error {
	if ev.Schema != projection.SchemaVersion {
		return nil // a newer schema: the fold skips it too
	}
	switch {
	case ev.Type == projection.TypeRollbackApplied:
		return h.rollback(ev)
	case ev.Type != projection.TypeTaskContextMerged || ev.Stream != h.stream:
		return nil
	}
	var p projection.TaskContextMerged
	if err := msgpack.Unmarshal(ev.Raw, &p); err != nil {
		return &store.CorruptionError{Seq: ev.Seq, Reason: fmt.Sprintf("context change does not decode: %v", err)}
	}
	if h.doc == "" {
		h.doc = projection.EmptyContext
	}
	next, err := nextContext(h.doc, ContextPatch{Patch: p.Patch, Replace: p.Replace})
	if err != nil {
		return &store.CorruptionError{Seq: ev.Seq, Reason: fmt.Sprintf("context change does not apply: %v", err)}
	}
	keys, err := contextKeys(next)
	if err != nil {
		return err
	}
	h.diff(ev, keys, p.Replace)
	h.doc, h.cur = next, keys
	return nil
}

// rollback takes the context a rollback restored to the task, if it
// restored the task.
func (h *contextWalk) rollback(ev Event) error {
	var p projection.RollbackApplied
	if err := msgpack.Unmarshal(ev.Raw, &p); err != nil {
		return &store.CorruptionError{Seq: ev.Seq, Reason: fmt.Sprintf("rollback does not decode: %v", err)}
	}
	for _, t := range p.Tasks {
		if t.ID != h.task {
			continue
		}
		keys, err := contextKeys(t.Context)
		if err != nil {
			return err
		}
		h.diffOp(ev, keys, ContextRollback)
		h.doc, h.cur = t.Context, keys
	}
	return nil
}

// diff notes the keys whose values differ between h.cur and next.
func (h *contextWalk) diff(ev Event, next map[string]projection.JSON, replace bool) {
	op := ContextSet
	if replace {
		op = ContextReplace
	}
	h.diffOp(ev, next, op)
}

// diffOp notes the keys whose values differ between h.cur and next, as
// changes by op (a key that went away is an unset).
func (h *contextWalk) diffOp(ev Event, next map[string]projection.JSON, op string) {
	var changed []string
	for k, v := range next {
		if old, ok := h.cur[k]; !ok || old != v {
			changed = append(changed, k)
		}
	}
	for k := range h.cur {
		if _, ok := next[k]; !ok {
			changed = append(changed, k)
		}
	}
	slices.Sort(changed)
	for _, k := range changed {
		if h.key != "" && k != h.key {
			continue
		}
		entry := ContextEntry{Seq: ev.Seq, Time: ev.Time, Actor: ev.Actor, Key: k, Op: op, Value: next[k]}
		if _, ok := next[k]; !ok {
			entry.Op, entry.Value = ContextUnset, "null"
		}
		h.out = append(h.out, entry)
	}
}
