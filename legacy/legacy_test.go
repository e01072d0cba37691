package legacy

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/internal/flowtest"
	"github.com/flowctl/flowctl/projection"
)

// legacyUpdate rewrites the golden files under testdata/legacy/. (The
// package has no shared -update flag; this one has its own name so that
// it can never collide with one added later.)
var legacyUpdate = flag.Bool("update-legacy", false, "rewrite the golden files in testdata/legacy/")

func legacyPath(name string) string { return filepath.Join("testdata", "legacy", name) }

// legacyImport imports testdata/legacy/file and fails the test on error.
func legacyImport(t *testing.T, e *flow.Engine, format, file, project string) *Result {
	t.Helper()
	res, err := Import(e, Input{Format: format, Path: legacyPath(file), Name: file, Project: project})
	if err != nil {
		t.Fatalf("Import(%s, %s): %v", format, file, err)
	}
	return res
}

// legacyGolden compares v, as indented JSON, with testdata/legacy/name.
func legacyGolden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := legacyPath(name)
	if *legacyUpdate {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./legacy -run Legacy -update-legacy to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("differs from %s (-update-legacy rewrites it)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// legacyFileBytes returns the engine's file as it is on disk.
func legacyFileBytes(t testing.TB, e *flow.Engine) []byte {
	t.Helper()
	b, err := os.ReadFile(e.Path())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// legacyTask is what the golden files keep of a task.
type legacyTask struct {
	ID       string          `json:"id"`
	Ref      string          `json:"ref"`
	Title    string          `json:"title"`
	Status   string          `json:"status"`
	Owner    string          `json:"owner"`
	Tags     []string        `json:"tags"`
	Deps     []string        `json:"deps"`
	Desc     string          `json:"description,omitempty"`
	Context  projection.JSON `json:"context"`
	Notes    int             `json:"notes"`
	Execs    int             `json:"execs"`
	Versions uint64          `json:"version"`
}

func legacyTasks(t *testing.T, e *flow.Engine, project string) []legacyTask {
	t.Helper()
	tasks, err := e.Tasks(project, flow.TaskFilter{})
	if err != nil {
		t.Fatal(err)
	}
	out := []legacyTask{}
	for _, x := range tasks {
		out = append(out, legacyTask{ID: x.ID, Ref: x.Ref, Title: x.Title, Status: x.Status, Owner: x.Owner, Tags: x.Tags,
			Deps: x.Deps, Desc: x.Description, Context: x.Context, Notes: x.Notes, Execs: x.Execs, Versions: x.Version})
	}
	return out
}

// legacyState is a project as the golden files show it after an import.
type legacyState struct {
	Result *Result            `json:"result"`
	Tasks  []legacyTask       `json:"tasks"`
	Notes  []flow.Note        `json:"notes,omitempty"`
	Execs  []*projection.Exec `json:"execs,omitempty"`
}

func TestImportLegacy_Golden(t *testing.T) {
	e := flowtest.Open(t)
	steps := []struct {
		format, file, golden string
		project              string
	}{
		{FromWorkflowJSON, "workflow.json", "workflow.golden.json", ""},
		{FromHistoryJSON, "workflow_history.json", "history.golden.json", "myproj"},
		{FromContextDir, "context_dump", "context.golden.json", "myproj"},
		{FromExecJSONL, "exec.jsonl", "exec.golden.json", "myproj"},
	}
	for _, s := range steps {
		res := legacyImport(t, e, s.format, s.file, s.project)
		st := legacyState{Result: res, Tasks: legacyTasks(t, e, "myproj")}
		switch s.format {
		case FromHistoryJSON:
			notes, err := e.Notes("myproj", flow.NoteFilter{})
			if err != nil {
				t.Fatal(err)
			}
			st.Notes = notes
		case FromExecJSONL:
			execs, err := e.Execs("myproj", flow.ExecFilter{})
			if err != nil {
				t.Fatal(err)
			}
			st.Execs = execs
		}
		legacyGolden(t, s.golden, st)
	}
}

func TestImportLegacy_ReimportChangesNothing(t *testing.T) {
	e := flowtest.Open(t)
	steps := []struct{ format, file, project string }{
		{FromWorkflowJSON, "workflow.json", ""},
		{FromHistoryJSON, "workflow_history.json", "myproj"},
		{FromContextDir, "context_dump", "myproj"},
		{FromExecJSONL, "exec.jsonl", "myproj"},
	}
	for _, s := range steps {
		legacyImport(t, e, s.format, s.file, s.project)
	}
	for _, s := range steps {
		t.Run(s.format, func(t *testing.T) {
			before := legacyFileBytes(t, e)
			res := legacyImport(t, e, s.format, s.file, s.project)
			if res.Created != (Created{}) {
				t.Errorf("second import created %+v, want nothing", res.Created)
			}
			if res.Skipped != res.Read || res.Read == 0 {
				t.Errorf("second import skipped %d of %d entries, want all", res.Skipped, res.Read)
			}
			if !bytes.Equal(legacyFileBytes(t, e), before) {
				t.Errorf("second import changed the file")
			}
		})
	}
}

func TestImportLegacy_MalformedEntryImportsNothing(t *testing.T) {
	cases := []struct {
		name, format, file string
		line               int
		class              error
	}{
		{"WorkflowUnknownStatus", FromWorkflowJSON, "workflow_bad_status.json", 6, flow.ErrInvalid},
		{"WorkflowCycle", FromWorkflowJSON, "workflow_cycle.json", 5, eventlog.ErrConflict},
		{"HistoryMissingEvent", FromHistoryJSON, "history_bad.json", 4, flow.ErrInvalid},
		{"ExecTruncatedLine", FromExecJSONL, "exec_bad_line.jsonl", 3, flow.ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := flowtest.Open(t)
			legacyImport(t, e, FromWorkflowJSON, "workflow.json", "myproj")
			before := legacyFileBytes(t, e)
			_, err := Import(e, Input{Format: c.format, Path: legacyPath(c.file), Name: c.file, Project: "myproj"})
			var ie *ImportError
			if !errors.As(err, &ie) || ie.Line != c.line || ie.File != c.file {
				t.Fatalf("err = %v, want an ImportError at %s:%d", err, c.file, c.line)
			}
			if !errors.Is(err, c.class) {
				t.Errorf("err = %v, want %v", err, c.class)
			}
			if !bytes.Equal(legacyFileBytes(t, e), before) {
				t.Errorf("a refused import changed the file")
			}
		})
	}
	t.Run("ContextNotAnObject", func(t *testing.T) {
		e := flowtest.Open(t)
		legacyImport(t, e, FromWorkflowJSON, "workflow.json", "")
		before := legacyFileBytes(t, e)
		_, err := Import(e, Input{Format: FromContextDir, Path: legacyPath("context_bad"), Name: "context_bad", Project: "myproj"})
		var ie *ImportError
		if !errors.As(err, &ie) || ie.File != filepath.Join("context_bad", "b.json") || !errors.Is(err, flow.ErrInvalid) {
			t.Fatalf("err = %v, want ErrInvalid naming context_bad/b.json", err)
		}
		if !bytes.Equal(legacyFileBytes(t, e), before) {
			t.Errorf("a refused import changed the file (a.json was good: nothing of it may stay)")
		}
	})
}

// writeLegacy writes content to dir/name and returns the path.
func writeLegacy(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// importText imports content given as a string, named name.
func importText(e *flow.Engine, format, name, project, content string) (*Result, error) {
	return Import(e, Input{Format: format, Name: name, Input: strings.NewReader(content), Project: project})
}

// wantImportError checks that err is an ImportError at line of class and
// that the file did not change.
func wantImportError(t *testing.T, e *flow.Engine, before []byte, err error, line int, class error) {
	t.Helper()
	var ie *ImportError
	if !errors.As(err, &ie) || ie.Line != line || !errors.Is(err, class) {
		t.Errorf("err = %v, want %v at line %d", err, class, line)
	}
	if !bytes.Equal(legacyFileBytes(t, e), before) {
		t.Errorf("a refused import changed the file")
	}
}

func TestImportLegacy_Workflow(t *testing.T) {
	t.Run("FileOrderWhereDepsAllow", func(t *testing.T) {
		e := flowtest.Open(t)
		res := legacyImport(t, e, FromWorkflowJSON, "workflow.json", "")
		got := map[string]string{}
		for _, x := range res.Tasks {
			got[x.Ref] = x.ID
		}
		want := map[string]string{"T001": "T-1", "T002": "T-2", "T003": "T-3", "T004": "T-4", "T005": "T-5"}
		for ref, id := range want {
			if got[ref] != id {
				t.Errorf("%s -> %s, want %s", ref, got[ref], id)
			}
		}
		t4, err := e.Task("myproj", "T-4")
		if err != nil || strings.Join(t4.Deps, ",") != "T-2,T-3" {
			t.Errorf("T-4 deps = %v, %v; want T-2,T-3", t4.Deps, err)
		}
	})
	t.Run("NewEntriesOnly", func(t *testing.T) {
		e := flowtest.Open(t)
		legacyImport(t, e, FromWorkflowJSON, "workflow.json", "")
		grown := `{"project": "myproj", "tasks": [
  {"id": "T001", "name": "데이터 수집 (이름 바뀜)", "status": "todo"},
  {"id": "T006", "name": "모니터링", "status": "todo", "deps": ["T005", "T001"]}
]}`
		res, err := importText(e, FromWorkflowJSON, "workflow.json", "", grown)
		if err != nil {
			t.Fatal(err)
		}
		if res.Created.Tasks != 1 || res.Skipped != 1 || res.Created.Projects != 0 {
			t.Errorf("result = %+v, want 1 task created, 1 skipped", res)
		}
		t6, err := e.Task("myproj", "T-6")
		if err != nil || t6.Ref != "T006" || strings.Join(t6.Deps, ",") != "T-1,T-5" {
			t.Errorf("T-6 = %+v, %v; want ref T006 and deps T-1,T-5", t6, err)
		}
		t1, _ := e.Task("myproj", "T-1")
		if t1.Title != "데이터 수집" || t1.Status != "done" {
			t.Errorf("T-1 = %q %s: a skipped entry must not change the task", t1.Title, t1.Status)
		}
	})
	t.Run("ProjectOverridesFile", func(t *testing.T) {
		e := flowtest.Open(t)
		res := legacyImport(t, e, FromWorkflowJSON, "workflow.json", "other")
		if res.Project != "other" || res.Created.Projects != 1 {
			t.Errorf("result = %+v, want project other created", res)
		}
		if ok, _ := e.ProjectExists("myproj"); ok {
			t.Errorf("myproj was created although the import named another project")
		}
	})
	t.Run("IntoExistingProject", func(t *testing.T) {
		e := flowtest.Open(t)
		if _, err := e.CreateProject(flow.NewProject{Name: "myproj"}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.AddTask(flow.NewTask{Project: "myproj", Title: "native"}); err != nil {
			t.Fatal(err)
		}
		res := legacyImport(t, e, FromWorkflowJSON, "workflow.json", "")
		if res.Created.Projects != 0 || res.Created.Tasks != 5 || res.Tasks[0].ID != "T-2" {
			t.Errorf("result = %+v, want 5 tasks from T-2 on", res)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		cases := map[string]struct {
			doc  string
			line int
		}{
			"NotAnObject":   {`[1, 2]`, 1},
			"NoTasks":       {`{"project": "p"}`, 1},
			"TasksNotArray": {`{"project": "p",` + "\n" + `"tasks": {"T1": {}}}`, 2},
			"EntryNotObject": {`{"project": "p", "tasks": [
  "T1"
]}`, 2},
			"NoID":          {`{"project": "p", "tasks": [{"name": "x"}]}`, 1},
			"NoName":        {`{"project": "p", "tasks": [` + "\n\n" + `{"id": "T1"}]}`, 3},
			"DuplicateID":   {"{\"project\": \"p\", \"tasks\": [\n{\"id\": \"T1\", \"name\": \"a\"},\n{\"id\": \"T1\", \"name\": \"b\"}]}", 3},
			"DuplicateKey":  {"{\"project\": \"p\", \"tasks\": [\n{\"id\": \"T1\", \"name\": \"a\", \"name\": \"b\"}]}", 2},
			"TagsNotArray":  {"{\"project\": \"p\", \"tasks\": [\n{\"id\": \"T1\", \"name\": \"a\", \"meta\": {\"tags\": \"x\"}}]}", 2},
			"BadPriority":   {"{\"project\": \"p\", \"tasks\": [\n{\"id\": \"T1\", \"name\": \"a\", \"priority\": 1.5}]}", 2},
			"SyntaxError":   {"{\"project\": \"p\", \"tasks\": [\n{\"id\": \"T1\",\n \"name\": }]}", 3},
			"BadUTF8":       {"{\"project\": \"p\", \"tasks\": [\n{\"id\": \"T1\", \"name\": \"\xff\"}]}", 2},
			"KoreanProject": {`{"project": "데이터", "tasks": []}`, 0},
			"NoProject":     {`{"tasks": []}`, 0},
		}
		for name, c := range cases {
			t.Run(name, func(t *testing.T) {
				e := flowtest.Open(t)
				before := legacyFileBytes(t, e)
				_, err := importText(e, FromWorkflowJSON, "workflow.json", "", c.doc)
				wantImportError(t, e, before, err, c.line, flow.ErrInvalid)
			})
		}
	})
	t.Run("UnknownDependency", func(t *testing.T) {
		e := flowtest.Open(t)
		before := legacyFileBytes(t, e)
		_, err := importText(e, FromWorkflowJSON, "w.json", "", "{\"project\": \"p\", \"tasks\": [\n{\"id\": \"T1\", \"name\": \"a\", \"deps\": [\"T9\"]}]}")
		wantImportError(t, e, before, err, 2, flow.ErrNotFound)
	})
	t.Run("SelfDependency", func(t *testing.T) {
		e := flowtest.Open(t)
		before := legacyFileBytes(t, e)
		_, err := importText(e, FromWorkflowJSON, "w.json", "", "{\"project\": \"p\", \"tasks\": [\n{\"id\": 7, \"name\": \"a\", \"deps\": [7]}]}")
		wantImportError(t, e, before, err, 2, eventlog.ErrConflict)
	})
	t.Run("ArchivedProject", func(t *testing.T) {
		e := flowtest.Open(t)
		if _, err := e.CreateProject(flow.NewProject{Name: "myproj"}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.ArchiveProject(flow.ArchiveProject{Name: "myproj"}); err != nil {
			t.Fatal(err)
		}
		before := legacyFileBytes(t, e)
		_, err := Import(e, Input{Format: FromWorkflowJSON, Path: legacyPath("workflow.json")})
		if !errors.Is(err, eventlog.ErrConflict) || !bytes.Equal(legacyFileBytes(t, e), before) {
			t.Errorf("err = %v, want a conflict and the file unchanged", err)
		}
	})
	t.Run("UnknownKeysAreWarnings", func(t *testing.T) {
		e := flowtest.Open(t)
		res := legacyImport(t, e, FromWorkflowJSON, "workflow.json", "")
		if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], `"meta.estimate"`) || !strings.Contains(res.Warnings[0], "workflow.json:23") {
			t.Errorf("warnings = %q, want one naming meta.estimate at workflow.json:23", res.Warnings)
		}
	})
}

func TestLegacyStatus(t *testing.T) {
	for in, want := range map[string]string{
		"todo": "todo", "Pending": "todo", "": "todo", "in-progress": "doing", "In Progress": "doing",
		"doing": "doing", "completed": "done", "DONE": "done", "blocked": "blocked", "failed": "blocked",
		"canceled": "cancelled", "skipped": "cancelled",
	} {
		if got, ok := Status(in); !ok || got != want {
			t.Errorf("Status(%q) = %q, %t; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"보류", "later", "todo!"} {
		if got, ok := Status(in); ok {
			t.Errorf("Status(%q) = %q, want unknown", in, got)
		}
	}
}

func TestImportLegacy_History(t *testing.T) {
	e := flowtest.Open(t)
	legacyImport(t, e, FromWorkflowJSON, "workflow.json", "")
	res := legacyImport(t, e, FromHistoryJSON, "workflow_history.json", "myproj")
	if res.Created.Notes != 6 {
		t.Fatalf("created %d notes, want 6 (the repeated entry is an event of its own)", res.Created.Notes)
	}
	t1, err := e.Notes("myproj", flow.NoteFilter{Task: "T-1"})
	if err != nil || len(t1) != 3 {
		t.Fatalf("notes of T-1 = %d, %v; want 3", len(t1), err)
	}
	if want := time.Date(2024, 4, 12, 9, 2, 11, 204381000, time.UTC); t1[1].OccurredAt == nil || !t1[1].OccurredAt.Equal(want) {
		t.Errorf("note occurred_at = %v, want the event's ts %s (no zone: UTC)", t1[1].OccurredAt, want)
	}
	if t1[1].Time.Year() != 2026 {
		t.Errorf("note time = %s, want the time of the import", t1[1].Time)
	}
	all, _ := e.Notes("myproj", flow.NoteFilter{})
	var onProject int
	for _, n := range all {
		if n.Task == "" {
			onProject++
		}
	}
	if onProject != 2 {
		t.Errorf("%d notes on the project, want 2 (create_project, and remove_task of T999 which the project lacks)", onProject)
	}
	t.Run("TextKeepsTheEvent", func(t *testing.T) {
		text := t1[0].Text
		_, js, ok := strings.Cut(text, " {")
		var ev map[string]any
		if !ok || json.Unmarshal([]byte("{"+js), &ev) != nil || ev["event"] != "add_task" || ev["user"] != "jun" {
			t.Errorf("note text %q does not end with the original event as JSON", text)
		}
	})
	t.Run("Timestamps", func(t *testing.T) {
		doc := `[{"event": "a", "ts": 1712909761.25}, {"event": "b", "ts": ""}, {"event": "c", "ts": "2024-04-12T17:16:01+09:00"}]`
		if _, err := importText(e, FromHistoryJSON, "ts.json", "myproj", doc); err != nil {
			t.Fatal(err)
		}
		notes, _ := e.Notes("myproj", flow.NoteFilter{})
		got := notes[len(notes)-3:]
		want := time.Date(2024, 4, 12, 8, 16, 1, 250e6, time.UTC)
		if got[0].OccurredAt == nil || got[2].OccurredAt == nil ||
			!got[0].OccurredAt.Equal(want) || !got[2].OccurredAt.Equal(want.Truncate(time.Second)) {
			t.Fatalf("occurred_at = %v, %v; want %s (seconds since 1970, and an RFC 3339 zone)", got[0].OccurredAt, got[2].OccurredAt, want)
		}
		if got[1].OccurredAt != nil {
			t.Errorf("an empty ts gave occurred_at %s, want none", got[1].OccurredAt)
		}
	})
	t.Run("ProjectMustExist", func(t *testing.T) { // unless the history creates it: TestImportHistory_CreatesProject
		_, err := importText(e, FromHistoryJSON, "h.json", "nope", `[{"event": "add_task", "detail": {"task_id": "T001"}}]`)
		if !errors.Is(err, flow.ErrNotFound) {
			t.Errorf("err = %v, want ErrNotFound", err)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		before := legacyFileBytes(t, e)
		for name, c := range map[string]struct {
			doc  string
			line int
		}{
			"NotAnArray":  {`{"events": []}`, 1},
			"BadTS":       {"[\n{\"event\": \"x\", \"ts\": \"yesterday\"}]", 2},
			"EventNumber": {"[\n{\"event\": 3}]", 2},
			"EntryString": {"[\n\"add_task\"]", 2},
		} {
			_, err := importText(e, FromHistoryJSON, "h.json", "myproj", c.doc)
			t.Run(name, func(t *testing.T) { wantImportError(t, e, before, err, c.line, flow.ErrInvalid) })
		}
	})
}

func TestImportLegacy_ContextDir(t *testing.T) {
	t.Run("MergesInNameOrder", func(t *testing.T) {
		e := flowtest.Open(t)
		legacyImport(t, e, FromWorkflowJSON, "workflow.json", "")
		res := legacyImport(t, e, FromContextDir, "context_dump", "myproj")
		if res.Read != 4 || res.Created.Contexts != 4 {
			t.Errorf("result = %+v, want 4 files read and merged", res)
		}
		c, err := e.Context("myproj", "T-2")
		if want := `{"options":{"dropna":true,"encoding":"utf-8"},"rows":10432,"메모":"인코딩 문제 해결"}`; err != nil || string(c.Context) != want {
			t.Errorf("T-2 context = %s, %v; want %s", c.Context, err, want)
		}
		if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], `"saved_at"`) {
			t.Errorf("warnings = %q, want one about saved_at", res.Warnings)
		}
	})
	t.Run("NoChangeAppendsNothing", func(t *testing.T) {
		e := flowtest.Open(t)
		legacyImport(t, e, FromWorkflowJSON, "workflow.json", "")
		if _, err := e.MergeContext(flow.ContextPatch{Project: "myproj", ID: "T-5", Patch: `{"branch":"deploy/staging"}`}); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		writeLegacy(t, dir, "T005.json", `{"task_id": "T005", "context": {"branch": "deploy/staging"}}`)
		before := legacyFileBytes(t, e)
		res, err := Import(e, Input{Format: FromContextDir, Path: dir, Project: "myproj"})
		if err != nil || res.Skipped != 1 || res.Created.Contexts != 0 {
			t.Fatalf("result = %+v, %v; want the file skipped", res, err)
		}
		if !bytes.Equal(legacyFileBytes(t, e), before) {
			t.Errorf("a merge that changes nothing changed the file")
		}
	})
	t.Run("LaterChangesSurviveReimport", func(t *testing.T) {
		e := flowtest.Open(t)
		legacyImport(t, e, FromWorkflowJSON, "workflow.json", "")
		legacyImport(t, e, FromContextDir, "context_dump", "myproj")
		if _, err := e.MergeContext(flow.ContextPatch{Project: "myproj", ID: "T-5", Patch: `{"branch":"main"}`}); err != nil {
			t.Fatal(err)
		}
		legacyImport(t, e, FromContextDir, "context_dump", "myproj")
		if c, _ := e.Context("myproj", "T-5"); string(c.Context) != `{"branch":"main"}` {
			t.Errorf("T-5 context = %s: a re-import must not undo a later change", c.Context)
		}
	})
	t.Run("UnknownTask", func(t *testing.T) {
		e := flowtest.Open(t)
		legacyImport(t, e, FromWorkflowJSON, "workflow.json", "")
		dir := t.TempDir()
		writeLegacy(t, dir, "a.json", `{"task_id": "T001", "context": {"k": 1}}`)
		writeLegacy(t, dir, "b.json", `{"task_id": "T404", "context": {"k": 2}}`)
		before := legacyFileBytes(t, e)
		_, err := Import(e, Input{Format: FromContextDir, Path: dir, Name: "dump", Project: "myproj"})
		var ie *ImportError
		if !errors.As(err, &ie) || ie.File != filepath.Join("dump", "b.json") || !errors.Is(err, flow.ErrNotFound) {
			t.Errorf("err = %v, want ErrNotFound naming dump/b.json", err)
		}
		if !bytes.Equal(legacyFileBytes(t, e), before) {
			t.Errorf("a refused import changed the file")
		}
	})
	t.Run("NotADirectory", func(t *testing.T) {
		e := flowtest.Open(t)
		legacyImport(t, e, FromWorkflowJSON, "workflow.json", "")
		_, err := Import(e, Input{Format: FromContextDir, Path: legacyPath("exec.jsonl"), Project: "myproj"})
		if !errors.Is(err, flow.ErrInvalid) {
			t.Errorf("err = %v, want ErrInvalid", err)
		}
		_, err = Import(e, Input{Format: FromContextDir, Path: filepath.Join(t.TempDir(), "none"), Project: "myproj"})
		if flow.ErrorCode(err) != flow.CodeNotFound {
			t.Errorf("err = %v, want not_found", err)
		}
	})
}

func TestImportLegacy_ContextDirPathEscape(t *testing.T) {
	top := t.TempDir()
	dir := filepath.Join(top, "dump")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeLegacy(t, top, "outside.json", `{"task_id": "T001", "context": {"secret": "밖에 있는 파일"}}`)
	if err := os.Mkdir(filepath.Join(top, "outdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	inside := writeLegacy(t, dir, "real.json", `{"task_id": "T001", "context": {"ok": true}}`)
	cases := map[string]struct {
		link, target string
		ok           bool
	}{
		"RelativeOutside": {"evil.json", filepath.Join("..", "outside.json"), false},
		"AbsoluteOutside": {"evil.json", filepath.Join(top, "outside.json"), false},
		"DirOutside":      {"evil.json", filepath.Join("..", "outdir"), false},
		"Dangling":        {"evil.json", "missing.json", false},
		"Inside":          {"alias.json", "real.json", true},
		// os.Root resolves links itself and takes none that is absolute.
		"InsideAbsolute": {"alias.json", inside, false},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			link := filepath.Join(dir, c.link)
			if err := os.Symlink(c.target, link); err != nil {
				t.Skipf("symlinks: %v", err)
			}
			defer os.Remove(link)
			e := flowtest.Open(t)
			legacyImport(t, e, FromWorkflowJSON, "workflow.json", "")
			before := legacyFileBytes(t, e)
			res, err := Import(e, Input{Format: FromContextDir, Path: dir, Name: "dump", Project: "myproj"})
			if c.ok {
				if err != nil || res.Read != 2 {
					t.Errorf("result = %+v, %v; want both files read", res, err)
				}
				return
			}
			var ie *ImportError
			if !errors.As(err, &ie) || ie.File != filepath.Join("dump", c.link) || !errors.Is(err, flow.ErrInvalid) || ie.Line != 0 {
				t.Errorf("err = %v, want ErrInvalid naming dump/%s", err, c.link)
			}
			if !bytes.Equal(legacyFileBytes(t, e), before) {
				t.Errorf("a refused import changed the file")
			}
			if c, _ := e.Context("myproj", "T-1"); strings.Contains(string(c.Context), "secret") {
				t.Errorf("the file outside the directory was imported: %s", c.Context)
			}
		})
	}
}

func TestImportLegacy_ExecLog(t *testing.T) {
	t.Run("OriginalTimesAndTasks", func(t *testing.T) {
		e := flowtest.Open(t)
		legacyImport(t, e, FromWorkflowJSON, "workflow.json", "")
		res := legacyImport(t, e, FromExecJSONL, "exec.jsonl", "myproj")
		if res.Read != 4 || res.Created.Execs != 4 {
			t.Fatalf("result = %+v, want 4 execs", res)
		}
		x1, err := e.Exec("myproj", "X-1")
		if err != nil {
			t.Fatal(err)
		}
		if want := time.Date(2025, 7, 23, 18, 54, 3, 123e6, time.UTC); !x1.OccurredAt.Std().Equal(want) || x1.Task != "T-2" {
			t.Errorf("X-1 occurred at %s on %s, want %s on T-2", x1.OccurredAt.Std(), x1.Task, want)
		}
		if x1.CreatedAt.Std().Year() != 2026 {
			t.Errorf("X-1 created at %s, want the time of the import", x1.CreatedAt.Std())
		}
		x3, _ := e.Exec("myproj", "X-3")
		if x3.Success || x3.ExitCode != 1 || !strings.Contains(x3.Stderr.Head, "NameError") {
			t.Errorf("X-3 = %+v, want the failed run with its stderr", x3)
		}
		x4, _ := e.Exec("myproj", "X-4")
		if x4.Task != "" || x4.Stdout.Head != "안녕하세요\n" {
			t.Errorf("X-4 = %+v, want a project exec (task_id unknown) with its stdout", x4)
		}
		if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], `"debug_info"`) || !strings.Contains(res.Warnings[0], "exec.jsonl:5") {
			t.Errorf("warnings = %q, want one about debug_info at exec.jsonl:5", res.Warnings)
		}
	})
	t.Run("FutureTimeKept", func(t *testing.T) {
		e := flowtest.Open(t)
		legacyImport(t, e, FromWorkflowJSON, "workflow.json", "")
		line := `{"task_id": "T001", "timestamp": "2100-01-01T00:00:00Z", "code": "x", "success": true}`
		if _, err := importText(e, FromExecJSONL, "x.jsonl", "myproj", line); err != nil {
			t.Fatal(err)
		}
		x, _ := e.Exec("myproj", "X-1")
		if x.CreatedAt.Std().Year() != 2026 || x.OccurredAt.Std().Year() != 2100 {
			t.Errorf("exec created at %s, occurred at %s; want the time of the import, and the line's time as it is (the log's times do not depend on it)",
				x.CreatedAt.Std(), x.OccurredAt.Std())
		}
	})
	t.Run("UnknownTaskImportsNothing", func(t *testing.T) {
		e := flowtest.Open(t)
		legacyImport(t, e, FromWorkflowJSON, "workflow.json", "")
		before := legacyFileBytes(t, e)
		doc := `{"task_id": "T001", "timestamp": "2025-07-23T18:54:03Z", "code": "a", "success": true}
{"task_id": "T001", "timestamp": "2025-07-23T18:54:04Z", "code": "b", "success": true}
{"task_id": "T404", "timestamp": "2025-07-23T18:54:05Z", "code": "c", "success": true}
`
		_, err := importText(e, FromExecJSONL, "x.jsonl", "myproj", doc)
		wantImportError(t, e, before, err, 3, flow.ErrNotFound)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		e := flowtest.Open(t)
		legacyImport(t, e, FromWorkflowJSON, "workflow.json", "")
		before := legacyFileBytes(t, e)
		good := `{"task_id": "T001", "timestamp": "2025-07-23T18:54:03Z", "code": "a", "success": true}` + "\n"
		for name, bad := range map[string]string{
			"NotObject":          `[1]`,
			"NoTimestamp":        `{"task_id": "T001", "code": "a", "success": true}`,
			"BadTimestamp":       `{"task_id": "T001", "timestamp": "23/07/2025", "code": "a", "success": true}`,
			"TimestampAfter2262": `{"task_id": "T001", "timestamp": "2999-01-01T00:00:00Z", "code": "a", "success": true}`,
			"NoCode":             `{"task_id": "T001", "timestamp": "2025-07-23T18:54:03Z", "success": true}`,
			"NoSuccess":          `{"task_id": "T001", "timestamp": "2025-07-23T18:54:03Z", "code": "a"}`,
			"SuccessString":      `{"task_id": "T001", "timestamp": "2025-07-23T18:54:03Z", "code": "a", "success": "yes"}`,
			"ElapsedString":      `{"task_id": "T001", "timestamp": "2025-07-23T18:54:03Z", "code": "a", "success": true, "elapsed_ms": "3"}`,
			"NegativeElapsed":    `{"task_id": "T001", "timestamp": "2025-07-23T18:54:03Z", "code": "a", "success": true, "elapsed_ms": -1}`,
			"VarsNotStrings":     `{"task_id": "T001", "timestamp": "2025-07-23T18:54:03Z", "code": "a", "success": true, "added_vars": [1]}`,
			"DuplicateKey":       `{"task_id": "T001", "timestamp": "2025-07-23T18:54:03Z", "code": "a", "code": "b", "success": true}`,
			"BadUTF8":            "{\"task_id\": \"T001\", \"timestamp\": \"2025-07-23T18:54:03Z\", \"code\": \"\xff\", \"success\": true}",
			"SuccessExitCode":    `{"task_id": "T001", "timestamp": "2025-07-23T18:54:03Z", "code": "a", "success": true, "exit_code": 2}`,
		} {
			_, err := importText(e, FromExecJSONL, "x.jsonl", "myproj", good+"\n"+bad+"\n"+good)
			t.Run(name, func(t *testing.T) { wantImportError(t, e, before, err, 3, flow.ErrInvalid) })
		}
	})
}

func TestImportLegacy_UnknownFormat(t *testing.T) {
	e := flowtest.Open(t)
	_, err := Import(e, Input{Format: "yaml", Path: legacyPath("workflow.json")})
	if !errors.Is(err, flow.ErrInvalid) {
		t.Errorf("err = %v, want ErrInvalid", err)
	}
}

// FuzzImportLegacy feeds arbitrary bytes to every importer: each either
// imports or returns an error of a known class; none panics, and a
// refused import leaves the file as it was.
func FuzzImportLegacy(f *testing.F) {
	for _, name := range []string{"workflow.json", "workflow_history.json", "exec.jsonl", "exec_bad_line.jsonl", "workflow_cycle.json"} {
		b, err := os.ReadFile(legacyPath(name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"task_id": "T001", "context": {"a": {"b": null}}}`))
	// One engine for the whole run, as FuzzImport: inputs meet the tasks
	// of earlier inputs, which makes skips and dependencies reachable.
	e := flowtest.Open(f)
	if _, err := e.CreateProject(flow.NewProject{Name: "myproj"}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, format := range []string{FromWorkflowJSON, FromHistoryJSON, FromExecJSONL} {
			before := legacyFileBytes(t, e)
			_, err := Import(e, Input{Format: format, Name: "fuzz", Input: bytes.NewReader(data), Project: "myproj"})
			if err != nil {
				if code := flow.ErrorCode(err); code != flow.CodeInvalid && code != flow.CodeNotFound && code != flow.CodeConflict {
					t.Fatalf("%s: err = %v (code %s)", format, err, code)
				}
				if !bytes.Equal(legacyFileBytes(t, e), before) {
					t.Fatalf("%s: a refused import changed the file", format)
				}
			}
		}
		if _, err := parseContextDump("fuzz.json", data); err != nil && flow.ErrorCode(err) != flow.CodeInvalid {
			t.Fatalf("context dump: err = %v", err)
		}
	})
}

// BenchmarkImportLegacy measures an import of n entries in one
// transaction: a workflow.json of n tasks (each depending on the one
// before), then an execution log of n lines on those tasks.
func BenchmarkImportLegacy(b *testing.B) {
	const n = 1000
	var wf, log strings.Builder
	wf.WriteString(`{"project": "bench", "tasks": [`)
	for i := range n {
		if i > 0 {
			wf.WriteString(",\n")
		}
		deps := "[]"
		if i > 0 {
			deps = fmt.Sprintf(`["L%d"]`, i-1)
		}
		fmt.Fprintf(&wf, `{"id": "L%d", "name": "작업 %d", "status": "todo", "deps": %s, "meta": {"owner": "jun", "tags": ["t"]}}`, i, i, deps)
		fmt.Fprintf(&log, `{"plan_id": "local", "task_id": "L%d", "timestamp": "2025-07-23T18:54:03.123Z", "elapsed_ms": 1.5, "code": "print(%d)", "stdout": "%d\n", "stderr": "", "success": true, "added_vars": [], "added_imports": []}`+"\n", i, i, i)
	}
	wf.WriteString("]}")
	for _, c := range []struct{ format, doc string }{{FromWorkflowJSON, wf.String()}, {FromExecJSONL, log.String()}} {
		b.Run(c.format, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				e := flowtest.Open(b)
				if c.format == FromExecJSONL {
					if _, err := importText(e, FromWorkflowJSON, "w.json", "", wf.String()); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				if _, err := importText(e, c.format, "x", "bench", c.doc); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/entry")
		})
	}
}

// TestNumbers_LegacySignalExitCodes: the seeds' Python logger writes a
// command killed by signal n as exit code -n; it imports as 128+n.
func TestNumbers_LegacySignalExitCodes(t *testing.T) {
	e := textFixture(t)
	log := `{"timestamp": "2026-01-02T03:04:05Z", "command": "sleep 100", "exit_code": -9, "success": false}` + "\n"
	if _, err := Import(e, Input{Format: FromExecJSONL, Name: "exec.jsonl", Input: strings.NewReader(log), Project: "p"}); err != nil {
		t.Fatal(err)
	}
	x, err := e.Exec("p", "X-1")
	if err != nil || x.ExitCode != 137 || x.Success {
		t.Errorf("imported exit code -9 = %+v, %v; want 137 (128+9), not a success", x, err)
	}
	bad := `{"timestamp": "2026-01-02T03:04:05Z", "command": "x", "exit_code": 99999999999}` + "\n"
	if _, err := Import(e, Input{Format: FromExecJSONL, Name: "exec.jsonl", Input: strings.NewReader(bad), Project: "p"}); !errors.Is(err, flow.ErrInvalid) {
		t.Errorf("imported exit code 99999999999 = %v, want ErrInvalid", err)
	}
}

// TestText_LegacyTitlesAreCleaned: a seed file's title with a newline or
// an escape imports, with its control characters turned into spaces.
func TestText_LegacyTitlesAreCleaned(t *testing.T) {
	e := flowtest.Open(t)
	doc := `{"project": "seed", "description": "a\u0007b", "tasks": [
{"id": "T1", "name": "fix\nthe \u001b[31mparser", "description": "one\ntwo\u0000", "meta": {"owner": "ann\r", "tags": ["x\ty"]}}]}`
	if _, err := Import(e, Input{Format: FromWorkflowJSON, Name: "workflow.json", Input: strings.NewReader(doc)}); err != nil {
		t.Fatal(err)
	}
	tk, err := e.Task("seed", "T-1")
	if err != nil {
		t.Fatal(err)
	}
	if tk.Title != "fix the  [31mparser" || tk.Description != "one\ntwo " || tk.Owner != "ann " || tk.Tags[0] != "x y" {
		t.Errorf("imported task = title %q, description %q, owner %q, tags %q", tk.Title, tk.Description, tk.Owner, tk.Tags)
	}
	if p, err := e.Project("seed"); err != nil || p.Description != "a b" {
		t.Errorf("imported project = %+v, %v", p, err)
	}
}

// TestTime_LegacyImportFollowsSeq: entries of 2024 and 2025 imported into a
// file whose events are of 2026 get the time of the import, keep their own
// as occurred_at, and --at a time before the import leaves them out.
func TestTime_LegacyImportFollowsSeq(t *testing.T) {
	e := flowtest.Open(t)
	legacyImport(t, e, FromWorkflowJSON, "workflow.json", "")
	before := flowtest.Events(t, e, flow.Filter{})
	last := before[len(before)-1]
	legacyImport(t, e, FromExecJSONL, "exec.jsonl", "myproj")
	legacyImport(t, e, FromHistoryJSON, "workflow_history.json", "myproj")
	all := flowtest.Events(t, e, flow.Filter{})
	wantTimesFollowSeq(t, all)

	if got := seqAt(t, e, "myproj", last.Time); got != last.Seq {
		t.Errorf("--at %s resolves to seq %d, want %d (the last event before the import)", last.Time, got, last.Seq)
	}
	if got := seqAt(t, e, "myproj", time.Date(2025, 7, 24, 0, 0, 0, 0, time.UTC)); got != 0 {
		t.Errorf("--at a time of the exec log resolves to seq %d, want 0 (nothing was in the file then)", got)
	}
	xs, err := e.At("myproj", flow.Point{Time: last.Time}).Execs("myproj", flow.ExecFilter{})
	if err != nil || len(xs) != 0 {
		t.Errorf("execs at %s = %d, %v; want none (they were imported later)", last.Time, len(xs), err)
	}

	x1 := all[len(before)]
	if want := time.Date(2025, 7, 23, 18, 54, 3, 123e6, time.UTC); x1.Type != "exec.recorded" || x1.OccurredAt == nil || !x1.OccurredAt.Equal(want) {
		t.Errorf("first imported event %s has occurred_at %v, want %s", x1.Type, x1.OccurredAt, want)
	}
	if last.OccurredAt != nil {
		t.Errorf("an event recorded as it happened has occurred_at %s, want none", last.OccurredAt)
	}
}
