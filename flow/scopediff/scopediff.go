package scopediff

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/flowctl/flowctl/projection"
)

// FieldChange is one field of an entity that differs between two points.
type FieldChange struct {
	Field string          `json:"field"` // "status", "context.branch", "steps.T-1.2", ...
	From  json.RawMessage `json:"from"`  // null when the field was not there
	To    json.RawMessage `json:"to"`
}

// Change is what happened to one entity between two points.
type Change struct {
	Kind   string        `json:"kind"` // project | plan | task | approval | exec
	ID     string        `json:"id"`
	Op     string        `json:"op"` // added | removed | changed
	Title  string        `json:"title,omitempty"`
	Fields []FieldChange `json:"fields,omitempty"`
	// World is set on a rollback's changes for what happened outside
	// flowctl and cannot be undone by it: a command that ran, an approval
	// that was granted.
	World string `json:"world,omitempty"`
}

// Change operations.
const (
	OpAdded   = "added"
	OpRemoved = "removed"
	OpChanged = "changed"
)

// item is one entity of a scope, flattened for comparison when the other
// scope has it too (an added or removed entity is named, not compared).
type item struct {
	kind, id, title string
	v               any // what flatten reads
}

// Of lists the entities that differ from a to b, by kind, then id; never
// nil.
func Of(a, b *projection.Scope) []Change {
	ia, ib := items(a), items(b)
	var out []Change
	for _, k := range sortedKeys(ia, ib) {
		x, inA := ia[k]
		y, inB := ib[k]
		switch {
		case !inA:
			out = append(out, Change{Kind: y.kind, ID: y.id, Op: OpAdded, Title: y.title})
		case !inB:
			out = append(out, Change{Kind: x.kind, ID: x.id, Op: OpRemoved, Title: x.title})
		default:
			if fields := diffFields(flatten(x.v), flatten(y.v)); len(fields) > 0 {
				out = append(out, Change{Kind: y.kind, ID: y.id, Op: OpChanged, Title: y.title, Fields: fields})
			}
		}
	}
	return projection.NonNil(out)
}

// kindOrder orders changes: the project first, then its parts.
var kindOrder = map[string]string{"project": "0", "plan": "1", "task": "2", "approval": "3", "exec": "4"}

func sortedKeys(a, b map[string]item) []string {
	// each key parsed once: kind order, then the id as CompareIDs orders
	// it (prefix, number, string)
	type sortKey struct {
		key, order, prefix, id string
		n                      int
	}
	keys := make([]sortKey, 0, len(a)+len(b))
	add := func(k string) {
		kind, id, _ := strings.Cut(k, "\x00")
		prefix, num, _ := strings.Cut(id, "-")
		n, _ := strconv.Atoi(num)
		keys = append(keys, sortKey{key: k, order: kindOrder[kind], prefix: prefix, id: id, n: n})
	}
	for k := range a {
		add(k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			add(k)
		}
	}
	slices.SortFunc(keys, func(x, y sortKey) int {
		if c := strings.Compare(x.order, y.order); c != 0 {
			return c
		}
		if c := strings.Compare(x.prefix, y.prefix); c != 0 {
			return c
		}
		if x.n != y.n {
			return x.n - y.n
		}
		return strings.Compare(x.id, y.id)
	})
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.key
	}
	return out
}

// items flattens the entities of a scope (checkpoints are markers of
// history, not state, and are left out).
func items(s *projection.Scope) map[string]item {
	out := map[string]item{}
	add := func(kind, id, title string, v any) {
		out[kind+"\x00"+id] = item{kind: kind, id: id, title: title, v: v}
	}
	if s.Project != nil {
		add("project", s.Project.Name, s.Project.Description, struct {
			Description string `json:"description"`
			Archived    bool   `json:"archived"`
		}{s.Project.Description, s.Project.Archived})
	}
	for _, p := range s.Plans {
		add("plan", p.ID, p.Title, p)
	}
	for _, t := range s.Tasks {
		add("task", t.ID, t.Title, t)
	}
	for _, a := range s.Approvals {
		add("approval", a.ID, a.Message, a)
	}
	for _, x := range s.Execs {
		add("exec", x.ID, x.Command+x.Code, x)
	}
	return out
}

// metaFields change with every event and say nothing about the state.
var metaFields = []string{"version", "seq", "created_at", "created_by", "updated_at", "project", "id", "notes", "execs", "context_version"}

// flatten turns an entity into its JSON fields; the context is split into
// one field per key and the steps into one per step.
func flatten(v any) map[string]json.RawMessage {
	b, _ := json.Marshal(v)
	var m map[string]json.RawMessage
	_ = json.Unmarshal(b, &m)
	for _, f := range metaFields {
		delete(m, f)
	}
	if ctx, ok := m["context"]; ok {
		delete(m, "context")
		var keys map[string]json.RawMessage
		_ = json.Unmarshal(ctx, &keys)
		for k, v := range keys {
			m["context."+k] = v
		}
	}
	if steps, ok := m["steps"]; ok {
		delete(m, "steps")
		var list []map[string]json.RawMessage
		_ = json.Unmarshal(steps, &list)
		for _, s := range list {
			var id string
			_ = json.Unmarshal(s["id"], &id)
			delete(s, "updated_at")
			b, _ := json.Marshal(s)
			m["steps."+id] = b
		}
	}
	return m
}

func diffFields(a, b map[string]json.RawMessage) []FieldChange {
	var out []FieldChange
	for _, k := range slices.Sorted(mapsKeys(a, b)) {
		x, y := a[k], b[k]
		if !bytes.Equal(x, y) {
			out = append(out, FieldChange{Field: k, From: orNull(x), To: orNull(y)})
		}
	}
	return out
}

func mapsKeys(a, b map[string]json.RawMessage) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range a {
			if !yield(k) {
				return
			}
		}
		for k := range b {
			if _, ok := a[k]; !ok && !yield(k) {
				return
			}
		}
	}
}

func orNull(v json.RawMessage) json.RawMessage {
	if v == nil {
		return json.RawMessage("null")
	}
	return v
}
