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
	kind, id string
	titleOf  func(any) string // v's title: what the change is titled by
	v        any              // what flatten reads
}

func (it *item) title() string { return it.titleOf(it.v) }

// pair is one id of a kind: its entity in a and in b (nil: not there).
type pair struct {
	id     string
	prefix string // the id parsed once, as projection.CompareIDs orders it
	n      int
	x, y   *item
}

// Of lists the entities that differ from a to b, by kind, then id; never
// nil.
//
// Kinds come in their order (the project, plans, tasks, approvals,
// execs), each kind's ids in the order of projection.CompareIDs (prefix,
// number, then the id), matched within their kind: no key is built per
// entity and only what differs is flattened.
func Of(a, b *projection.Scope) []Change {
	var out []Change
	for k := range kinds {
		ia, ib := items(a, k), items(b, k)
		for _, p := range pairs(ia, ib) {
			x, y := p.x, p.y
			switch {
			case x == nil:
				out = append(out, Change{Kind: y.kind, ID: y.id, Op: OpAdded, Title: y.title()})
			case y == nil:
				out = append(out, Change{Kind: x.kind, ID: x.id, Op: OpRemoved, Title: x.title()})
			default:
				if fields := diffFields(flatten(x.v), flatten(y.v)); len(fields) > 0 {
					out = append(out, Change{Kind: y.kind, ID: y.id, Op: OpChanged, Title: y.title(), Fields: fields})
				}
			}
		}
	}
	return projection.NonNil(out)
}

// kinds is how many kinds of entity a diff compares (items' k).
const kinds = 5

// pairs matches the items of one kind by id (the last of an id in a list
// wins) and sorts them: kind order is the caller's. Pointers are sorted,
// not the pairs.
func pairs(a, b []item) []*pair {
	at := make(map[string]*pair, len(a))
	all := make([]pair, 0, len(a)+len(b)) // never grown: out points into it
	out := make([]*pair, 0, len(a)+len(b))
	add := func(it *item, inB bool) {
		p := at[it.id]
		if p == nil {
			prefix, num, _ := strings.Cut(it.id, "-")
			n, _ := strconv.Atoi(num)
			all = append(all, pair{id: it.id, prefix: prefix, n: n})
			p = &all[len(all)-1]
			at[it.id] = p
			out = append(out, p)
		}
		if inB {
			p.y = it
		} else {
			p.x = it
		}
	}
	for i := range a {
		add(&a[i], false)
	}
	for i := range b {
		add(&b[i], true)
	}
	slices.SortFunc(out, func(x, y *pair) int {
		if c := strings.Compare(x.prefix, y.prefix); c != 0 {
			return c
		}
		if x.n != y.n {
			return x.n - y.n // as projection.CompareIDs
		}
		return strings.Compare(x.id, y.id)
	})
	return out
}

// items flattens the entities of kind k of a scope (0 the project, then
// plans, tasks, approvals, execs; checkpoints are markers of history,
// not state, and are left out).
func items(s *projection.Scope, k int) []item {
	switch k {
	case 0:
		if s.Project == nil {
			return nil
		}
		p := s.Project
		return []item{{kind: "project", id: p.Name, titleOf: projectTitle, v: projectFields{p.Description, p.Archived}}}
	case 1:
		return itemsOf(s.Plans, "plan", func(p *projection.Plan) string { return p.Title })
	case 2:
		return itemsOf(s.Tasks, "task", func(t *projection.Task) string { return t.Title })
	case 3:
		return itemsOf(s.Approvals, "approval", func(a *projection.Approval) string { return a.Message })
	}
	return itemsOf(s.Execs, "exec", func(x *projection.Exec) string { return x.Command + x.Code })
}

// projectFields are what a diff compares of a project.
type projectFields struct {
	Description string `json:"description"`
	Archived    bool   `json:"archived"`
}

func projectTitle(v any) string { return v.(projectFields).Description }

func itemsOf[V interface{ EntityID() string }](list []V, kind string, title func(V) string) []item {
	out := make([]item, len(list))
	titleOf := func(v any) string { return title(v.(V)) }
	for i, v := range list {
		out[i] = item{kind: kind, id: v.EntityID(), titleOf: titleOf, v: v}
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
