package eventview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/flowctl/flowctl/flow/internal/check"
	"github.com/flowctl/flowctl/projection"
)

// viewKind says how a stored value is shown.
type viewKind uint8

const (
	nested    viewKind = iota // an object (or a list of them): its fields have rules
	jsonText                  // a string of JSON text: shown as the JSON value
	unixNanos                 // an integer of unix ns: shown as RFC 3339, 0 as null
)

// viewRule is how one field of a payload is shown.
type viewRule struct {
	kind   viewKind
	fields viewRules // of a nested object, or of each object of a list
}

// viewRules are the rules of an object's fields, by stored key; fields
// without a rule are shown as stored.
type viewRules map[string]viewRule

var (
	textField = viewRule{kind: jsonText}
	timeField = viewRule{kind: unixNanos}
)

// withMeta adds the rules of projection.Meta, which every entity inlines.
func withMeta(r viewRules) viewRules {
	r["created_at"], r["updated_at"] = timeField, timeField
	return r
}

// eventViews are the rules of the event types, at projection.SchemaVersion,
// that store JSON text or times (see projection/events.go and state.go).
// Every type's occurred_at (an imported event's own time) is a time too.
var eventViews = everyOccurredAt(map[string]viewRules{
	projection.TypeTaskClaimed:       {"lease_until": timeField},
	projection.TypeTaskCreated:       {"due": timeField},
	projection.TypeTaskUpdated:       {"due": timeField},
	projection.TypeStepStatusChanged: {"result_data": textField},
	projection.TypeTaskContextMerged: {"patch": textField},
	projection.TypeApprovalRequested: {"action": textField, "expires": timeField},
	projection.TypeRollbackApplied: {
		"project": {fields: withMeta(viewRules{})},
		"plans":   {fields: withMeta(viewRules{})},
		"tasks": {fields: withMeta(viewRules{
			"context": textField,
			"claim":   {fields: viewRules{"lease_until": timeField, "claimed_at": timeField}},
			"steps": {fields: viewRules{"updated_at": timeField, "started_at": timeField, "completed_at": timeField,
				"result_data": textField}},
			"due": timeField,
		})},
		"approvals": {fields: withMeta(viewRules{
			"action": textField, "expires": timeField, "decided_at": timeField, "used_at": timeField,
		})},
		"execs": {fields: withMeta(viewRules{"occurred_at": timeField})},
	},
})

// everyOccurredAt gives every event type the rule of occurred_at.
func everyOccurredAt(m map[string]viewRules) map[string]viewRules {
	for _, typ := range projection.Types() {
		if m[typ] == nil {
			m[typ] = viewRules{}
		}
		m[typ]["occurred_at"] = timeField
	}
	return m
}

// Depth is how deep in an event's JSON line the deepest field of JSON
// text starts: the line, data, a list of entities, an entity.
const Depth = 4

// viewRulesOf returns the rules of an event type at a schema version, or
// nil for a type or version this binary does not know.
func viewRulesOf(typ string, schema uint32) viewRules {
	if want, known := projection.Schema(typ); !known || schema != want {
		return nil
	}
	return eventViews[typ]
}

// walk replaces, in the decoded payload v, each value that has a rule of
// a kind other than nested with f's result. Lists of objects get the rules
// of each object.
func (rs viewRules) walk(v any, f func(viewKind, any) (any, error)) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			r, ok := rs[k]
			if !ok {
				continue
			}
			var err error
			if r.kind == nested {
				t[k], err = r.fields.walk(x, f)
			} else {
				t[k], err = f(r.kind, x)
			}
			if err != nil {
				return nil, fmt.Errorf("%q: %w", k, err)
			}
		}
	case []any:
		for i, x := range t {
			var err error
			if t[i], err = rs.walk(x, f); err != nil {
				return nil, err
			}
		}
	}
	return v, nil
}

// toView shows one stored value. JSON text that check.JSON refuses (stored
// before a check existed) stays a string; so does anything unexpected.
func toView(kind viewKind, v any) (any, error) {
	switch kind {
	case jsonText:
		if s, ok := v.(string); ok && check.JSON([]byte(s)) == nil {
			return json.RawMessage(s), nil
		}
	case unixNanos:
		if n, ok := asInt64(v); ok {
			return projection.Time(n), nil
		}
	}
	return v, nil
}

// fromView turns one value of the view, as import decodes it (numbers as
// json.Number), back into what is stored. A string of JSON text is taken
// as it is (today's exports and older ones hold JSON text there), any
// other value as the JSON value itself; a time is an RFC 3339 string,
// null, or the integer stored.
func fromView(kind viewKind, v any) (any, error) {
	switch kind {
	case jsonText:
		if s, ok := v.(string); ok && check.JSON([]byte(s)) == nil {
			return s, nil
		}
		s, err := jsonTextOf(v)
		if err == nil {
			err = check.JSON([]byte(s))
		}
		return s, err
	case unixNanos:
		return nanosFromView(v)
	}
	return v, nil
}

// jsonTextOf writes v as compact JSON text, numbers as written.
func jsonTextOf(v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
}

// The times that unix nanoseconds hold.
var (
	minNanos = time.Unix(0, math.MinInt64)
	maxNanos = time.Unix(0, math.MaxInt64)
)

func nanosFromView(v any) (any, error) {
	switch t := v.(type) {
	case nil:
		return int64(0), nil
	case string:
		tm, err := time.Parse(time.RFC3339Nano, t)
		if err != nil {
			return nil, fmt.Errorf("%q is not an RFC 3339 time", t)
		}
		if tm.Before(minNanos) || tm.After(maxNanos) {
			return nil, fmt.Errorf("%q is out of the range of unix nanoseconds", t)
		}
		return tm.UnixNano(), nil
	case json.Number:
		return v, nil
	}
	return nil, fmt.Errorf("a time is an RFC 3339 string, not %v", v)
}

// asInt64 returns an integer as msgpack decodes it into an interface.
func asInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int8:
		return int64(n), true
	case int16:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case uint8:
		return int64(n), true
	case uint16:
		return int64(n), true
	case uint32:
		return int64(n), true
	case uint64:
		if n <= 1<<63-1 {
			return int64(n), true
		}
	}
	return 0, false
}
