package legacy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/internal/flowtest"
	"github.com/flowctl/flowctl/projection"
	"pgregory.net/rapid"
)

// importedEvent is what the history tests check of an imported event.
type importedEvent struct {
	Type     string
	Actor    string
	Occurred string // occurred_at, RFC 3339; "" for none
}

func importedEvents(t *testing.T, e *flow.Engine, since uint64) ([]flow.Event, []importedEvent) {
	t.Helper()
	events := flowtest.Events(t, e, flow.Filter{SinceSeq: since})
	out := make([]importedEvent, len(events))
	for i, ev := range events {
		out[i] = importedEvent{Type: ev.Type, Actor: ev.Actor}
		if ev.OccurredAt != nil {
			out[i].Occurred = ev.OccurredAt.Format(time.RFC3339)
		}
	}
	return events, out
}

func headSeq(t *testing.T, e *flow.Engine) uint64 {
	t.Helper()
	events := flowtest.Events(t, e, flow.Filter{Limit: 1})
	if len(events) == 0 {
		return 0
	}
	return events[0].Seq
}

func TestImportHistory_Fidelity(t *testing.T) {
	e := flowtest.Open(t)
	legacyImport(t, e, FromWorkflowJSON, "workflow.json", "")
	head := headSeq(t, e)
	res := legacyImport(t, e, FromHistoryJSON, "history_fidelity.json", "myproj")
	if want := (Created{Tasks: 1, Steps: 1, Moves: 8, Notes: 5}); res.Created != want {
		t.Errorf("created %+v, want %+v", res.Created, want)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "history_fidelity.json:9:") ||
		!strings.Contains(res.Warnings[0], "kept as a note") {
		t.Errorf("warnings = %q, want one at line 9: todo to done is not a move", res.Warnings)
	}
	events, got := importedEvents(t, e, head+1)
	want := []importedEvent{
		{projection.TypeNoteAdded, "jun", "2024-04-12T08:16:01Z"}, // create_project: the project exists
		{projection.TypeTaskCreated, "mina", "2024-04-14T09:00:00Z"},
		{projection.TypeTaskStatusChanged, "mina", "2024-04-14T09:05:00Z"},
		{projection.TypeStepAdded, "mina", "2024-04-14T09:06:00Z"},
		{projection.TypeStepStatusChanged, "mina", "2024-04-14T09:07:00Z"},
		{projection.TypeStepStatusChanged, "mina", "2024-04-14T11:30:00Z"},
		{projection.TypeTaskStatusChanged, "jun", "2024-04-14T12:00:00Z"},
		{projection.TypeNoteAdded, "jun", "2024-04-14T12:10:00Z"}, // T004 todo -> done: refused, a note
		{projection.TypeTaskStatusChanged, "mina", "2024-04-14T13:00:00Z"},
		{projection.TypeTaskStatusChanged, "jun", "2024-04-14T14:00:00Z"},
		{projection.TypeTaskStatusChanged, "jun", "2024-04-14T15:00:00Z"},
		{projection.TypeTaskStatusChanged, "mina", "2024-04-14T16:00:00Z"},
		{projection.TypeNoteAdded, "mina", "2024-04-14T16:30:00Z"},
		{projection.TypeNoteAdded, "jun", "2024-04-14T17:00:00Z"},
		{projection.TypeNoteAdded, "mina", "2024-04-14T18:00:00Z"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("imported events:\ngot  %v\nwant %v", got, want)
	}
	wantTimesFollowSeq(t, flowtest.Events(t, e, flow.Filter{}))
	tasks := map[string]string{}
	for _, x := range legacyTasks(t, e, "myproj") {
		tasks[x.Ref] = x.Status
	}
	wantStatus := map[string]string{"T001": "done", "T002": "done", "T003": "doing", "T004": "todo", "T005": "done", "T006": "done"}
	if fmt.Sprint(tasks) != fmt.Sprint(wantStatus) {
		t.Errorf("statuses = %v, want %v", tasks, wantStatus)
	}
	t.Run("ForcedPastOpenDeps", func(t *testing.T) {
		var p projection.TaskStatusChanged
		if err := json.Unmarshal(events[10].Data, &p); err != nil || !p.Forced || p.To != "done" ||
			!strings.HasPrefix(p.Reason, "history: complete_task {") {
			t.Errorf("T005's done = %s, %v; want forced (T004 is todo) with the entry as its reason", events[10].Data, err)
		}
	})
	t.Run("StepsKeepTheirAttempt", func(t *testing.T) {
		s, err := e.Step("myproj", "T-6.1")
		if err != nil || s.Status != projection.StepCompleted || s.Title != "README 초안" {
			t.Errorf("T-6.1 = %+v, %v; want completed", s, err)
		}
	})
	t.Run("ReimportAppendsNothing", func(t *testing.T) {
		before := legacyFileBytes(t, e)
		res := legacyImport(t, e, FromHistoryJSON, "history_fidelity.json", "myproj")
		if res.Created != (Created{}) || res.Skipped != res.Read {
			t.Errorf("second import = %+v, want every entry skipped", res)
		}
		if !bytes.Equal(before, legacyFileBytes(t, e)) {
			t.Error("a second import changed the file")
		}
	})
}

func TestImportHistory_CreatesProject(t *testing.T) {
	e := flowtest.Open(t)
	res := legacyImport(t, e, FromHistoryJSON, "workflow_history.json", "myproj")
	if want := (Created{Projects: 1, Tasks: 2, Notes: 3}); res.Created != want {
		t.Errorf("created %+v, want %+v", res.Created, want)
	}
	events, got := importedEvents(t, e, 1)
	want := []importedEvent{
		{projection.TypeProjectCreated, "jun", "2024-04-12T08:16:01Z"},
		{projection.TypeTaskCreated, "jun", "2024-04-12T08:17:30Z"},
		{projection.TypeNoteAdded, "jun", "2024-04-12T09:02:11Z"}, // todo -> done is no move: a note
		{projection.TypeTaskCreated, "mina", "2024-04-13T10:00:00Z"},
		{projection.TypeNoteAdded, "mina", "2024-04-13T01:05:00Z"},
		{projection.TypeNoteAdded, "jun", "2024-04-12T08:17:30Z"}, // T001 again: it exists
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("imported events:\ngot  %v\nwant %v", got, want)
	}
	t.Run("TimeIsTheEntrysUnlessBeforeTheLast", func(t *testing.T) {
		wantTimes := []string{"2024-04-12T08:16:01Z", "2024-04-12T08:17:30Z", "2024-04-12T09:02:11.204381Z",
			"2024-04-13T10:00:00Z", "2024-04-13T10:00:00Z", "2024-04-13T10:00:00Z"}
		for i, ev := range events {
			if got := ev.Time.Format(time.RFC3339Nano); got != wantTimes[i] {
				t.Errorf("event %d (%s) at %s, want %s", i+1, ev.Type, got, wantTimes[i])
			}
		}
	})
	t.Run("AtTheEntrysTime", func(t *testing.T) {
		if seq := seqAt(t, e, "myproj", time.Date(2024, 4, 12, 12, 0, 0, 0, time.UTC)); seq != 3 {
			t.Errorf("--at 2024-04-12T12:00:00Z is seq %d, want 3", seq)
		}
	})
	t.Run("ActorRefusedIsTheImports", func(t *testing.T) {
		doc := fmt.Sprintf(`[{"event": "comment", "user": %q}]`, strings.Repeat("x", flow.MaxTitle+1))
		res, err := importText(e, FromHistoryJSON, "u.json", "myproj", doc)
		if err != nil || len(res.Warnings) != 1 {
			t.Fatalf("import = %+v, %v; want one warning", res, err)
		}
		last := flowtest.Events(t, e, flow.Filter{Limit: 1})[0]
		if last.Actor != "tester" {
			t.Errorf("actor = %q, want the import's", last.Actor)
		}
	})
}

// historyDoc is a generated workflow_history.json.
type historyDoc []map[string]any

var (
	genEvents = []string{"create_project", "add_task", "update_task", "start_task", "complete_task", "block_task",
		"cancel_task", "reopen_task", "add_step", "add_step", "step_start", "step_start", "step_done", "step_failed", "comment", "remove_task"}
	genStatuses = []string{"todo", "doing", "done", "completed", "blocked", "cancelled", "later", ""}
	genTasks    = []string{"T001", "T001", "T002", "T-1", "unknown", ""}
	genUsers    = []string{"jun", "mina", ""}
)

func genHistory(t *rapid.T) historyDoc {
	n := rapid.IntRange(0, 30).Draw(t, "entries")
	doc := make(historyDoc, n)
	base := time.Date(2024, 4, 12, 8, 0, 0, 0, time.UTC)
	for i := range doc {
		detail := map[string]any{}
		if task := rapid.SampledFrom(genTasks).Draw(t, "task"); task != "" {
			detail["task_id"] = task
		}
		if rapid.Bool().Draw(t, "has status") {
			detail["status"] = rapid.SampledFrom(genStatuses).Draw(t, "status")
		}
		if rapid.IntRange(0, 3).Draw(t, "has name") > 0 {
			detail["name"] = rapid.SampledFrom([]string{"수집", "train", "step one"}).Draw(t, "name")
		}
		if rapid.IntRange(0, 3).Draw(t, "has step") > 0 {
			detail["step_id"] = rapid.IntRange(1, 2).Draw(t, "step")
		}
		en := map[string]any{"event": rapid.SampledFrom(genEvents).Draw(t, "event"), "detail": detail}
		if u := rapid.SampledFrom(genUsers).Draw(t, "user"); u != "" {
			en["user"] = u
		}
		if rapid.IntRange(0, 4).Draw(t, "ts") > 0 { // a time, forwards or back
			en["ts"] = base.Add(time.Duration(rapid.IntRange(-3000, 3000).Draw(t, "minutes")) * time.Minute).Format(time.RFC3339)
		}
		doc[i] = en
	}
	return doc
}

// TestProperty_HistoryImport: for any history, importing it twice is
// importing it once; every entry is one event, of the kind its name maps
// to or a note; each keeps the entry's user as its actor and its ts as
// occurred_at, at a time no earlier than the event before it and no later
// than the entry's unless that was.
func TestProperty_HistoryImport(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		e := flowtest.Open(t)
		if rapid.Bool().Draw(rt, "workflow first") {
			legacyImport(t, e, FromWorkflowJSON, "workflow.json", "")
		}
		doc := genHistory(rt)
		data, err := json.Marshal(doc)
		if err != nil {
			rt.Fatal(err)
		}
		head := headSeq(t, e)
		res, err := importText(e, FromHistoryJSON, "h.json", "myproj", string(data))
		if errors.Is(err, flow.ErrNotFound) {
			return // no project, and no create_project to make it
		}
		if err != nil {
			rt.Fatalf("import: %v", err)
		}
		events := flowtest.Events(t, e, flow.Filter{SinceSeq: head + 1})
		if len(events) != len(doc) || res.Skipped != 0 {
			rt.Fatalf("%d events for %d entries (skipped %d), want one each", len(events), len(doc), res.Skipped)
		}
		checkHistoryEvents(rt, doc, events, head)
		before := legacyFileBytes(t, e)
		again, err := importText(e, FromHistoryJSON, "h.json", "myproj", string(data))
		if err != nil || again.Created != (Created{}) || again.Skipped != len(doc) || !bytes.Equal(before, legacyFileBytes(t, e)) {
			rt.Fatalf("second import = %+v, %v; want every entry skipped and the file as it was", again, err)
		}
	})
}

// checkHistoryEvents matches each event to its entry by its derived id.
func checkHistoryEvents(t *rapid.T, doc historyDoc, events []flow.Event, head uint64) {
	ids := newLegacyIDs(FromHistoryJSON, "myproj")
	byID := map[string]map[string]any{}
	for _, en := range doc {
		raw, _ := json.Marshal(en)
		id := ids.next(compactJSON(raw))
		byID[fmt.Sprintf("%x", id[:])] = en
	}
	for i, ev := range events {
		en, ok := byID[strings.ReplaceAll(ev.ID, "-", "")]
		if !ok {
			t.Fatalf("event %d (%s) is no entry's", ev.Seq, ev.Type)
		}
		name, _ := en["event"].(string)
		kinds := map[historyAct]string{actProject: projection.TypeProjectCreated, actTask: projection.TypeTaskCreated,
			actMove: projection.TypeTaskStatusChanged, actStep: projection.TypeStepAdded, actStepMove: projection.TypeStepStatusChanged}
		if own := kinds[historyEventOf(name).act]; ev.Type != projection.TypeNoteAdded && ev.Type != own {
			t.Fatalf("entry %q became %s, want %s or a note", name, ev.Type, own)
		}
		if user, _ := en["user"].(string); (user == "" && ev.Actor != "tester") || (user != "" && ev.Actor != user) {
			t.Fatalf("entry by %q has actor %q", user, ev.Actor)
		}
		ts, hasTS := en["ts"].(string)
		if !hasTS {
			if ev.OccurredAt != nil {
				t.Fatalf("entry without ts has occurred_at %s", ev.OccurredAt)
			}
			continue
		}
		want, _ := time.Parse(time.RFC3339, ts)
		if ev.OccurredAt == nil || !ev.OccurredAt.Equal(want) {
			t.Fatalf("entry at %s has occurred_at %v", ts, ev.OccurredAt)
		}
		if i > 0 && ev.Time.Before(events[i-1].Time) {
			t.Fatalf("seq %d at %s before seq %d at %s", ev.Seq, ev.Time, events[i-1].Seq, events[i-1].Time)
		}
		if ev.Time.After(want) && (i == 0 || !ev.Time.Equal(events[i-1].Time)) && head == 0 {
			t.Fatalf("seq %d at %s, after its entry's %s and not held at the event before", ev.Seq, ev.Time, want)
		}
	}
}
