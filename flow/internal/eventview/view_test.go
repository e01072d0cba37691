package eventview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow/internal/check"
	"github.com/flowctl/flowctl/projection"
	"github.com/vmihailenco/msgpack/v5"
)

var viewAt = time.Date(2026, 11, 1, 9, 0, 0, 5, time.UTC)

const viewAtText = `"2026-11-01T09:00:00.000000005Z"`

// viewOf encodes payload as a write does (marshal) and returns its view.
func viewOf(tb testing.TB, typ string, payload any) json.RawMessage {
	tb.Helper()
	data, err := marshal(payload)
	if err != nil {
		tb.Fatalf("marshal %s: %v", typ, err)
	}
	return JSON(typ, projection.SchemaVersion, data)
}

// marshal encodes v as flow's writes do: msgpack with sorted map keys.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	enc.SetCustomStructTag("msgpack")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// field returns the JSON text at path in the object data ("" if absent);
// a number in the path indexes a list.
func field(tb testing.TB, data json.RawMessage, path ...any) string {
	tb.Helper()
	cur := data
	for _, p := range path {
		var next json.RawMessage
		var err error
		if i, ok := p.(int); ok {
			var list []json.RawMessage
			if err = json.Unmarshal(cur, &list); err == nil && i < len(list) {
				next = list[i]
			}
		} else {
			var obj map[string]json.RawMessage
			err = json.Unmarshal(cur, &obj)
			next = obj[p.(string)]
		}
		if err != nil || next == nil {
			return ""
		}
		cur = next
	}
	return string(cur)
}

// TestJSON_View: event data shows stored JSON text as the JSON
// value and stored unix nanoseconds as RFC 3339 times (null for 0).
func TestJSON_View(t *testing.T) {
	ns := viewAt.UnixNano()
	flat := []struct {
		name, typ string
		payload   any
		want      string
	}{
		{"ContextMerged", projection.TypeTaskContextMerged,
			projection.TaskContextMerged{Patch: "{\"b\": [1, {\"c\": null}],\n \"a\": 123456789012345678901234567890}"},
			`{"patch":{"b":[1,{"c":null}],"a":123456789012345678901234567890}}`},
		{"ContextReplaced", projection.TypeTaskContextMerged,
			projection.TaskContextMerged{Patch: `{"<&>":"x"}`, Replace: true},
			`{"patch":{"<&>":"x"},"replace":true}`},
		{"Claimed", projection.TypeTaskClaimed,
			projection.TaskClaimed{Actor: "a", LeaseUntil: ns},
			`{"actor":"a","lease_until":` + viewAtText + `}`},
		{"ApprovalRequested", projection.TypeApprovalRequested,
			projection.ApprovalRequested{ID: "A-1", Message: "m", Action: `{"cmd":["git","push"]}`, ActionHash: "h", Expires: ns},
			`{"action":{"cmd":["git","push"]},"action_hash":"h","expires":` + viewAtText + `,"id":"A-1","message":"m"}`},
		{"ApprovalScalarAction", projection.TypeApprovalRequested,
			projection.ApprovalRequested{ID: "A-1", Message: "m", Action: `"push it"`, ActionHash: "h"},
			`{"action":"push it","action_hash":"h","id":"A-1","message":"m"}`},
		{"TextNoCheckAccepts", projection.TypeTaskContextMerged, // stored before the I-JSON check: kept as text
			projection.TaskContextMerged{Patch: `{"a":1e999}`},
			`{"patch":"{\"a\":1e999}"}`},
		{"OtherTypesAsStored", projection.TypeNoteAdded,
			projection.NoteAdded{Task: "T-1", Text: `{"a":1}`, Kind: "note"},
			`{"kind":"note","task":"T-1","text":"{\"a\":1}"}`},
	}
	for _, tt := range flat {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(viewOf(t, tt.typ, tt.payload)); got != tt.want {
				t.Errorf("view = %s\nwant   %s", got, tt.want)
			}
		})
	}
	t.Run("RollbackApplied", func(t *testing.T) {
		meta := projection.Meta{Version: 2, CreatedAt: projection.Time(ns), UpdatedAt: projection.Time(ns)}
		got := viewOf(t, projection.TypeRollbackApplied, viewRollback(`{"k":[1,2]}`, `{"merge":"x"}`, ns, meta))
		for _, w := range []struct {
			path []any
			want string
		}{
			{[]any{"tasks", 0, "context"}, `{"k":[1,2]}`},
			{[]any{"approvals", 0, "action"}, `{"merge":"x"}`},
			{[]any{"approvals", 0, "decided_at"}, "null"},
			{[]any{"tasks", 0, "created_at"}, viewAtText},
			{[]any{"tasks", 0, "updated_at"}, viewAtText},
			{[]any{"tasks", 0, "claim", "lease_until"}, viewAtText},
			{[]any{"tasks", 0, "claim", "claimed_at"}, viewAtText},
			{[]any{"tasks", 0, "steps", 0, "updated_at"}, viewAtText},
			{[]any{"approvals", 0, "expires"}, viewAtText},
			{[]any{"project", "created_at"}, viewAtText},
			{[]any{"plans", 0, "updated_at"}, viewAtText},
			{[]any{"execs", 0, "created_at"}, viewAtText},
			{[]any{"tasks", 0, "id"}, `"T-1"`},
			{[]any{"removed", 0}, `{"id":"T-2","kind":"task"}`},
		} {
			if f := field(t, got, w.path...); compact(t, f) != w.want {
				t.Errorf("%v = %s, want %s", w.path, f, w.want)
			}
		}
	})
}

func compact(tb testing.TB, s string) string {
	tb.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(s)); err != nil {
		return s
	}
	return buf.String()
}

// viewRollback is a rollback.applied payload with every kind of entity.
func viewRollback(ctx, action string, ns int64, meta projection.Meta) projection.RollbackApplied {
	at := projection.Time(ns)
	return projection.RollbackApplied{
		ToSeq: 3, Checkpoint: "C-1", Reason: "r",
		Project: &projection.Project{Name: "p", Meta: meta},
		Plans:   []projection.Plan{{Project: "p", ID: "P-1", Title: "t", Status: "open", Meta: meta}},
		Tasks: []projection.Task{{Project: "p", ID: "T-1", Title: "t", Status: "todo", Context: projection.JSON(ctx),
			Claim: &projection.Claim{Actor: "a", LeaseUntil: at, ClaimedAt: at},
			Steps: []projection.Step{{ID: "T-1.1", Title: "s", Status: "pending", UpdatedAt: at}}, Meta: meta}},
		Approvals: []projection.Approval{{Project: "p", ID: "A-1", Message: "m", Action: projection.JSON(action),
			ActionHash: "h", Expires: at, Status: "pending", Meta: meta}},
		Execs:   []projection.Exec{{Project: "p", ExecRecorded: projection.ExecRecorded{ID: "X-1", Command: "c"}, Meta: meta}},
		Removed: []projection.Removed{{Kind: "task", ID: "T-2"}},
	}
}

// viewPayloads is one payload of every event type, built from fuzz input.
func viewPayloads(s, text string, n int64, b bool) map[string]any {
	meta := projection.Meta{Version: uint64(n), CreatedAt: projection.Time(n), CreatedBy: s, UpdatedAt: projection.Time(n / 3)}
	p := &n
	i := int(n)
	return map[string]any{
		projection.TypeProjectCreated:    projection.ProjectCreated{Name: s, Description: text},
		projection.TypeProjectArchived:   projection.ProjectArchived{Reason: s},
		projection.TypePlanCreated:       projection.PlanCreated{ID: s, Title: text},
		projection.TypePlanClosed:        projection.PlanClosed{ID: s, Reason: text},
		projection.TypeTaskCreated:       projection.TaskCreated{ID: s, Title: text, Deps: []string{s}, Priority: i},
		projection.TypeTaskUpdated:       projection.TaskUpdated{Title: &s, Priority: &i},
		projection.TypeTaskDepsChanged:   projection.TaskDepsChanged{Added: []string{s}, Removed: []string{text}},
		projection.TypeTaskStatusChanged: projection.TaskStatusChanged{From: s, To: text, Forced: b},
		projection.TypeTaskClaimed:       projection.TaskClaimed{Actor: s, LeaseUntil: *p},
		projection.TypeTaskLeaseRenewed:  projection.TaskClaimed{Actor: s, LeaseUntil: *p},
		projection.TypeTaskReleased:      projection.TaskReleased{Actor: s, Reason: text},
		projection.TypeTaskContextMerged: projection.TaskContextMerged{Patch: text, Replace: b},
		projection.TypeStepAdded:         projection.StepAdded{ID: s, Title: text},
		projection.TypeStepStatusChanged: projection.StepStatusChanged{ID: s, To: text, Progress: &i},
		projection.TypeNoteAdded:         projection.NoteAdded{Text: text, Kind: s},
		projection.TypeApprovalRequested: projection.ApprovalRequested{ID: s, Message: s, Action: text, Expires: n},
		projection.TypeApprovalDecided:   projection.ApprovalDecided{ID: s, Decision: text},
		projection.TypeExecRecorded:      projection.ExecRecorded{ID: s, Command: text, ElapsedMS: float64(n)},
		projection.TypeCheckpointCreated: projection.CheckpointCreated{ID: s, AtSeq: uint64(n)},
		projection.TypeRollbackApplied:   viewRollback(text, text, n, meta),
	}
}

// checkView checks a view against its event type's rules: it is JSON, a
// field of JSON text that check.JSON accepts is shown as that value, and a
// time is null or an RFC 3339 string.
func checkView(t *testing.T, typ string, data json.RawMessage, text string) {
	t.Helper()
	if !json.Valid(data) || string(data) == "null" {
		t.Fatalf("%s: view %s is not a JSON payload", typ, data)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v", typ, err)
	}
	_, err := viewRulesOf(typ, projection.SchemaVersion).walk(v, func(k viewKind, x any) (any, error) {
		return x, checkViewValue(k, x, text)
	})
	if err != nil {
		t.Fatalf("%s: %v in %s", typ, err, data)
	}
}

func checkViewValue(kind viewKind, x any, text string) error {
	switch kind {
	case jsonText:
		if check.JSON([]byte(text)) != nil {
			var stored any // as a JSON string: invalid UTF-8 replaced
			b, _ := json.Marshal(text)
			_ = json.Unmarshal(b, &stored)
			if x != stored {
				return fmt.Errorf("JSON text check.JSON refuses is shown as %v, not as stored", x)
			}
			return nil
		}
		var want any
		_ = json.Unmarshal([]byte(text), &want)
		if fmt.Sprint(x) != fmt.Sprint(want) {
			return fmt.Errorf("JSON text %q is shown as %#v, not as its value", text, x)
		}
	case unixNanos:
		s, ok := x.(string)
		if x == nil {
			return nil
		}
		if _, err := time.Parse(time.RFC3339Nano, s); !ok || err != nil {
			return fmt.Errorf("time %v is not RFC 3339", x)
		}
	}
	return nil
}

// FuzzEventView: the view of every event type's payload, encoded as a
// write encodes it, is JSON, shows JSON text as JSON values and unix
// nanoseconds as RFC 3339 times; and import turns the view of an object
// or array back into a payload the fold reads as the same.
func FuzzEventView(f *testing.F) {
	f.Add("T-1", `{"a":[1,{"b":null}],"c":"é"}`, int64(1795619949855530242), true)
	f.Add("", `"x"`, int64(0), false)
	f.Add("x\xff", `{"a":1e999}`, int64(-1), false)
	f.Add("<&>", `[123456789012345678901234567890]`, int64(1<<63-1), true)
	f.Add("a", `not json`, int64(-1<<63), false)
	f.Fuzz(func(t *testing.T, s, text string, n int64, b bool) {
		payloads := viewPayloads(s, text, n, b)
		if len(payloads) != 20 {
			t.Fatalf("%d event types, want all 20", len(payloads))
		}
		for typ, payload := range payloads {
			if _, known := projection.Schema(typ); !known {
				t.Fatalf("%s is not an event type", typ)
			}
			view := viewOf(t, typ, payload)
			checkView(t, typ, view, text)
			checkUnview(t, typ, view, text)
		}
	})
}

// checkUnview: data alone, in the view, imports as the payload it shows
// (compared as JSON values), for the text flowctl stores: what check.JSON
// accepts. Not checked: a JSON string holding JSON text, which is shown as
// that string and which import takes for the text.
func checkUnview(t *testing.T, typ string, view json.RawMessage, text string) {
	t.Helper()
	var s string
	if check.JSON([]byte(text)) != nil || json.Unmarshal([]byte(text), &s) == nil && check.JSON([]byte(s)) == nil {
		return
	}
	v, err := Unview(typ, projection.SchemaVersion, view)
	if err != nil {
		t.Fatalf("%s: import of the view %s: %v", typ, view, err)
	}
	data, err := marshal(v)
	if err != nil {
		t.Fatalf("%s: marshal of the unviewed %s: %v", typ, view, err)
	}
	if again := JSON(typ, projection.SchemaVersion, data); !sameJSON(again, view) {
		t.Fatalf("%s: view %s imports as %s", typ, view, again)
	}
}

func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// TestEventViews_TypedFields: every projection.Time and projection.JSON
// field that a rollback.applied payload holds, however deep, has its rule,
// so that a field added to an entity is not left out of the view.
func TestEventViews_TypedFields(t *testing.T) {
	missing := typedFieldRules(reflect.TypeOf(projection.RollbackApplied{}), eventViews[projection.TypeRollbackApplied], "")
	for _, m := range missing {
		t.Errorf("rollback.applied: %s", m)
	}
}

var (
	timeType = reflect.TypeOf(projection.Time(0))
	jsonType = reflect.TypeOf(projection.JSON(""))
)

// typedFieldRules lists the fields of struct type typ whose rule is not
// what their Go type asks for.
func typedFieldRules(typ reflect.Type, rules viewRules, path string) []string {
	var missing []string
	for i := range typ.NumField() {
		sf := typ.Field(i)
		if sf.Anonymous && sf.Tag.Get("msgpack") == "" { // inlined, as Meta
			missing = append(missing, typedFieldRules(sf.Type, rules, path)...)
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("msgpack"), ",")
		rule, ok := rules[name]
		ft := sf.Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		switch {
		case ft == timeType && (!ok || rule.kind != unixNanos):
			missing = append(missing, path+name+" is a time without the time rule")
		case ft == jsonType && (!ok || rule.kind != jsonText):
			missing = append(missing, path+name+" is JSON text without the JSON rule")
		case ft.Kind() == reflect.Struct && ft != timeType:
			missing = append(missing, typedFieldRules(ft, rule.fields, path+name+".")...)
		}
	}
	return missing
}
