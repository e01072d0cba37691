package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// viewFile is a file with context merges (one nested 64 levels deep), a
// claim, an approval with an action and an expiry, a checkpoint and two
// rollbacks: every event whose data holds JSON text or times.
func viewFile(t *testing.T) *flowFile {
	t.Helper()
	f := mustInit(t, "--project", "demo")
	deep := strings.Repeat(`{"d":`, 63) + "1" + strings.Repeat("}", 63)
	for _, args := range [][]string{
		{"task", "add", "first"},
		{"task", "claim", "T-1"},
		{"ctx", "merge", "T-1", `{"branch":"parser","big":123456789012345678901234567890}`},
		{"ctx", "merge", "T-1", `{"deep":` + deep + `}`},
		{"step", "add", "T-1", "sketch"},
		{"approval", "request", "--task", "T-1", "-m", "merge?", "--action", `{"merge":"parser","n":[1,2]}`, "--expires", "1h"},
		{"checkpoint", "--label", "before"},
		{"ctx", "replace", "T-1", `{"fresh":true}`},
		{"task", "add", "second"},
		{"rollback", "--to", "C-1", "--reason", "wrong approach"},
		{"ctx", "set", "T-1", "mood", `"good"`},
		{"rollback", "--to", "C-1", "--task", "T-1"},
	} {
		f.mustRun("", args...)
	}
	return f
}

// viewData is the data of an event as a tree of JSON values.
func viewData(t *testing.T, ev event) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(ev.Data, &v); err != nil {
		t.Fatalf("seq %d %s: data %s is not an object: %v", ev.Seq, ev.Type, ev.Data, err)
	}
	return v
}

func wantObject(t *testing.T, ev event, name string, v any) {
	t.Helper()
	if _, ok := v.(map[string]any); !ok {
		t.Errorf("seq %d %s: %s = %#v, want a JSON object", ev.Seq, ev.Type, name, v)
	}
}

func wantTime(t *testing.T, ev event, name string, v any) {
	t.Helper()
	s, ok := v.(string)
	if _, err := time.Parse(time.RFC3339Nano, s); !ok || err != nil || !strings.HasSuffix(s, "Z") {
		t.Errorf("seq %d %s: %s = %#v, want an RFC 3339 UTC time", ev.Seq, ev.Type, name, v)
	}
}

// TestLog_EventDataView: in log, export and watch output, event data shows
// stored JSON text (context patches, actions, a rollback's contexts) as
// JSON values and stored unix nanoseconds as RFC 3339 times.
func TestLog_EventDataView(t *testing.T) {
	t.Parallel()
	f := viewFile(t)
	seen := map[string]int{}
	for _, ev := range f.logEvents() {
		d := viewData(t, ev)
		seen[ev.Type]++
		switch ev.Type {
		case "task.context_merged":
			wantObject(t, ev, "patch", d["patch"])
		case "task.claimed":
			wantTime(t, ev, "lease_until", d["lease_until"])
		case "approval.requested":
			wantObject(t, ev, "action", d["action"])
			wantTime(t, ev, "expires", d["expires"])
		case "rollback.applied":
			task := d["tasks"].([]any)[0].(map[string]any)
			wantObject(t, ev, "tasks[0].context", task["context"])
			wantTime(t, ev, "tasks[0].created_at", task["created_at"])
			wantTime(t, ev, "tasks[0].updated_at", task["updated_at"])
			wantTime(t, ev, "tasks[0].claim.lease_until", task["claim"].(map[string]any)["lease_until"])
			wantTime(t, ev, "tasks[0].steps[0].updated_at", task["steps"].([]any)[0].(map[string]any)["updated_at"])
		}
	}
	if seen["task.context_merged"] != 4 || seen["rollback.applied"] != 2 || seen["task.claimed"] != 1 || seen["approval.requested"] != 1 {
		t.Errorf("events by type = %v", seen)
	}
	t.Run("ExactNumbers", func(t *testing.T) {
		if out := f.mustRun("", "log", "-o", "json", "--type", "task.context_merged"); !strings.Contains(out, `"big":123456789012345678901234567890`) {
			t.Errorf("log lost the long integer of the patch:\n%s", out)
		}
	})
	logged := f.logEvents()
	t.Run("Export", func(t *testing.T) {
		sameData(t, strings.Split(strings.TrimSuffix(f.mustRun("", "export"), "\n"), "\n"), logged)
	})
	t.Run("Watch", func(t *testing.T) {
		w := startWatch(t, f.dir, "watch", "--since", "1", "-o", "jsonl")
		lines := w.waitLines(t, len(logged))
		w.stop(t)
		sameData(t, lines, logged)
	})
}

// sameData checks that JSON lines of events carry log's data.
func sameData(t *testing.T, lines []string, logged []event) {
	t.Helper()
	if len(lines) != len(logged) {
		t.Fatalf("%d lines, want %d", len(lines), len(logged))
	}
	for i, line := range lines {
		var ev event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		if string(ev.Data) != string(logged[i].Data) {
			t.Errorf("line %d data = %s, want log's %s", i+1, ev.Data, logged[i].Data)
		}
	}
}

// TestImport_RoundTripView: export then import into an empty file gives the
// same chain (verify --expect-head of the source's head passes) and the
// same log and export, with context merges (one 64 levels deep, which the
// view nests deeper in the line), rollbacks and times in it.
func TestImport_RoundTripView(t *testing.T) {
	t.Parallel()
	src := viewFile(t)
	exported := exportTo(t, src, t.TempDir(), "events.jsonl")
	head := verifyHead(t, src)
	dir := t.TempDir()
	dst := mustInitAt(t, dir, filepath.Join(dir, "other.db"), "--db", "other.db")
	dst.mustRun("", "import", exported, "--db", "other.db")
	dst.mustRun("", "verify", "--db", "other.db", "--expect-head", head)
	if got, want := dst.mustRun("", "log", "-o", "json", "--db", "other.db"), src.mustRun("", "log", "-o", "json"); got != want {
		t.Errorf("log -o json after import differs from the source's")
	}
	if got, want := dst.mustRun("", "export", "--db", "other.db"), src.mustRun("", "export"); got != want {
		t.Errorf("export after import differs from the source's")
	}
}

// v1Head is the head of testdata/export_v1.jsonl, an export written before
// the view (JSON text in strings, times as unix nanoseconds).
const v1Head = "2c6987eaa5c7885d98c2693f699d6129cfaf280342ec4681346ebe8d3697d021@17"

// TestImport_ExportV1: an export in the format of before the view imports
// into the same chain; its events are then shown in the view; and its data
// alone (no raw) still imports and folds to the same task.
func TestImport_ExportV1(t *testing.T) {
	t.Parallel()
	fixture, err := filepath.Abs(filepath.Join("testdata", "export_v1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	f := mustInit(t)
	if out := f.mustRun("", "import", fixture); out != "read 17 events: 17 appended, 0 already present\n" {
		t.Errorf("import printed %q", out)
	}
	f.mustRun("", "verify", "--expect-head", v1Head)
	for _, ev := range f.logEvents("--type", "task.context_merged") {
		wantObject(t, ev, "patch", viewData(t, ev)["patch"])
	}
	want := f.mustRun("", "task", "show", "T-1", "-o", "json", "--project", "alpha")

	t.Run("DataOnly", func(t *testing.T) {
		t.Parallel()
		g := mustInit(t)
		old, err := os.ReadFile(fixture)
		if err != nil {
			t.Fatal(err)
		}
		g.mustRun(stripRaw(t, string(old)), "import", "-")
		if got := g.mustRun("", "task", "show", "T-1", "-o", "json", "--project", "alpha"); got != want {
			t.Errorf("task after a data-only import of the old format:\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("DataOnlyOfTheView", func(t *testing.T) {
		t.Parallel()
		g := mustInit(t)
		g.mustRun(stripRaw(t, f.mustRun("", "export")), "import", "-")
		if got := g.mustRun("", "task", "show", "T-1", "-o", "json", "--project", "alpha"); got != want {
			t.Errorf("task after a data-only import of the view:\n%s\nwant\n%s", got, want)
		}
	})
}

// stripRaw drops "raw" from every line of an export.
func stripRaw(t *testing.T, export string) string {
	t.Helper()
	var out strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(export, "\n"), "\n") {
		var ev map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		delete(ev, "raw")
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(append(b, '\n'))
	}
	return out.String()
}

// TestIJSON_OutOfRange: every JSON input refuses a number beyond the range
// of a double (I-JSON, RFC 7493) with exit 2 and the file unchanged, and
// keeps a long integer within the range as written.
func TestIJSON_OutOfRange(t *testing.T) {
	t.Parallel()
	f := ctxFixture(t)
	line := `{"id":"` + newID1 + `","stream":"s/x","version":1,"type":"x.y","time":"2026-02-01T00:00:00Z","data":{"a":1e999}}` + "\n"
	runBadInputs(t, f, []badInput{
		{name: "CtxMerge", args: []string{"ctx", "merge", "T-1", `{"a":1e999}`}, code: 2, facts: []string{"1e999", "double"}},
		{name: "CtxMergeNegative", args: []string{"ctx", "merge", "T-1", `{"a":[-1e999]}`}, code: 2, facts: []string{"-1e999"}},
		{name: "CtxReplace", args: []string{"ctx", "replace", "T-1", `{"a":1e400}`}, code: 2, facts: []string{"1e400"}},
		{name: "CtxSet", args: []string{"ctx", "set", "T-1", "k", `1e999`}, code: 2, facts: []string{"1e999"}},
		{name: "ApprovalAction", args: []string{"approval", "request", "-m", "m", "--action", `{"n":1e999}`}, code: 2, facts: []string{"1e999"}},
		{name: "ExecRecord", args: []string{"exec", "record", `{"command":"x","success":true,"elapsed_ms":1e999}`}, code: 2, facts: []string{"1e999"}},
		{name: "Import", stdin: line, args: []string{"import", "-"}, code: 2, facts: []string{"1e999", "line 1"}},
	})
	t.Run("LongIntegerKept", func(t *testing.T) {
		f.mustRun("", "ctx", "merge", "T-2", `{"n":123456789012345678901234567890}`)
		if got := f.mustRun("", "ctx", "get", "T-2", "--key", "n"); strings.TrimSpace(got) != "123456789012345678901234567890" {
			t.Errorf("ctx get n = %q, want the integer as written", got)
		}
	})
}

// TestLog_OccurredAtView: an exec record's original time (seed 003's
// timestamp) is an RFC 3339 time in the event's data, as in its envelope.
func TestLog_OccurredAtView(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "demo")
	f.mustRun("", "task", "add", "one")
	f.mustRun(`{"task_id":"T-1","plan_id":"local","timestamp":"2025-07-23T18:54:03Z","code":"x=1","stdout":"","stderr":"","success":true,"elapsed_ms":1,"added_vars":["x"],"added_imports":[]}`, "exec", "record", "-")
	evs := f.logEvents("--type", "exec.recorded")
	if len(evs) != 1 {
		t.Fatalf("%d exec events", len(evs))
	}
	var data struct {
		OccurredAt any `json:"occurred_at"`
	}
	if err := json.Unmarshal(evs[0].Data, &data); err != nil {
		t.Fatal(err)
	}
	if data.OccurredAt != "2025-07-23T18:54:03Z" || evs[0].Occurred != "2025-07-23T18:54:03Z" {
		t.Errorf("data.occurred_at = %#v, envelope occurred_at = %q; want both 2025-07-23T18:54:03Z", data.OccurredAt, evs[0].Occurred)
	}
}
