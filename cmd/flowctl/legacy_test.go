package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// legacyFile is a flow file in a directory holding a copy of
// testdata/legacy_import: the legacy system's layout (projects/<name>/
// workflow.json, workflow_history.json, context_dump/, and logs/).
func legacyFile(t *testing.T) *flowFile {
	t.Helper()
	f := mustInit(t)
	copyTree(t, filepath.Join("testdata", "legacy_import"), f.dir)
	return f
}

// legacyMigration is the migration of the README, in order.
var legacyMigration = [][]string{
	{"import", "--from", "workflow-json", "projects/myproj/workflow.json"},
	{"import", "--from", "history-json", "--project", "myproj", "projects/myproj/workflow_history.json"},
	{"import", "--from", "context-dir", "--project", "myproj", "projects/myproj/context_dump"},
	{"import", "--from", "exec-jsonl", "--project", "myproj", "logs/exec.jsonl"},
}

func TestImportLegacy_Migration(t *testing.T) {
	t.Parallel()
	f := legacyFile(t)
	var out strings.Builder
	for _, args := range legacyMigration {
		stdout, stderr, code := f.run("", args...)
		if code != 0 {
			t.Fatalf("flowctl %v: exit %d, stderr %q", args, code, stderr)
		}
		out.WriteString("$ flowctl " + strings.Join(args, " ") + "\n" + stdout)
		if stderr != "" {
			out.WriteString("(stderr) " + stderr)
		}
	}
	for _, args := range [][]string{{"task", "ls", "--project", "myproj"}, {"exec", "ls", "--project", "myproj"}, {"ctx", "get", "T-2", "--project", "myproj"}} {
		out.WriteString("$ flowctl " + strings.Join(args, " ") + "\n" + f.mustRun("", args...))
	}
	golden(t, filepath.Join("legacy_import", "migration.golden"), out.String())

	t.Run("SecondRunChangesNothing", func(t *testing.T) {
		before := f.bytes()
		for _, args := range legacyMigration {
			stdout := f.mustRun("", append([]string{"-q", "-o", "json"}, args...)...)
			var res struct {
				Read    int            `json:"read"`
				Created map[string]int `json:"created"`
				Skipped int            `json:"skipped"`
			}
			if err := json.Unmarshal([]byte(stdout), &res); err != nil {
				t.Fatalf("flowctl %v -o json: %v\n%s", args, err, stdout)
			}
			for kind, n := range res.Created {
				if n != 0 {
					t.Errorf("flowctl %v: created %d %s on the second run", args, n, kind)
				}
			}
			if res.Skipped != res.Read || res.Read == 0 {
				t.Errorf("flowctl %v: skipped %d of %d", args, res.Skipped, res.Read)
			}
		}
		if !bytes.Equal(f.bytes(), before) {
			t.Errorf("the second run changed the file")
		}
	})
}

func TestImportLegacy_JSONResult(t *testing.T) {
	t.Parallel()
	f := legacyFile(t)
	stdout, stderr, code := f.run("", "import", "--from", "workflow-json", "projects/myproj/workflow.json", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var res struct {
		Format  string         `json:"format"`
		Project string         `json:"project"`
		Read    int            `json:"read"`
		Created map[string]int `json:"created"`
		Skipped int            `json:"skipped"`
		Tasks   []struct {
			Ref, ID string
			Created bool
		} `json:"tasks"`
		Warnings []string `json:"warnings"`
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if res.Format != "workflow-json" || res.Project != "myproj" || res.Read != 5 || res.Created["projects"] != 1 ||
		res.Created["tasks"] != 5 || len(res.Tasks) != 5 || res.Tasks[2].Ref != "T004" || res.Tasks[2].ID != "T-4" {
		t.Errorf("result = %+v", res)
	}
	if len(res.Warnings) != 1 || !strings.Contains(stderr, "warning: projects/myproj/workflow.json:23") {
		t.Errorf("warnings = %q, stderr %q: want the meta.estimate warning in both", res.Warnings, stderr)
	}
}

func TestImportLegacy_Refused(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		args  []string
		exit  int
		code  string
		facts []string
	}{
		{"MalformedLine", []string{"--from", "exec-jsonl", "--project", "myproj", "logs/exec_bad_line.jsonl"}, 2, "invalid",
			[]string{"logs/exec_bad_line.jsonl:3:"}},
		{"UnknownStatus", []string{"--from", "workflow-json", "workflow_bad_status.json"}, 2, "invalid",
			[]string{"workflow_bad_status.json:6:", `"보류"`}},
		{"Cycle", []string{"--from", "workflow-json", "workflow_cycle.json"}, 4, "conflict",
			[]string{"workflow_cycle.json:5:", `"B" → "C" → "D" → "B"`}},
		{"UnknownFormat", []string{"--from", "yaml", "x.yaml"}, 2, "invalid", []string{"yaml", "workflow-json"}},
		{"MissingFile", []string{"--from", "exec-jsonl", "--project", "myproj", "logs/none.jsonl"}, 3, "not_found", []string{"none.jsonl"}},
		{"MissingProject", []string{"--from", "exec-jsonl", "--project", "nope", "logs/exec.jsonl"}, 3, "not_found", []string{"nope"}},
		{"MissingProjectNoCreate", []string{"--from", "history-json", "--project", "nope", "h.json"}, 3, "not_found", []string{"nope"}},
		{"ContextDirFromStdin", []string{"--from", "context-dir", "--project", "myproj", "-"}, 2, "invalid", []string{"context-dir"}},
		{"KoreanProjectName", []string{"--from", "workflow-json", "ko.json"}, 2, "invalid", []string{"데이터", "--project"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := legacyFile(t)
			f.mustRun("", "project", "new", "myproj")
			writeFile(t, filepath.Join(f.dir, "ko.json"), []byte(`{"project": "데이터", "tasks": []}`))
			writeFile(t, filepath.Join(f.dir, "h.json"), []byte(`[{"event": "add_task", "detail": {"task_id": "T001"}}]`))
			before := f.bytes()
			args := append([]string{"import"}, c.args...)
			_, stderr, code := f.run("", args...)
			wantError(t, stderr, code, c.exit, c.facts...)
			_, stderr, code = f.run("", append(args, "-o", "json")...)
			wantJSONError(t, stderr, code, c.exit, c.code)
			if !bytes.Equal(f.bytes(), before) {
				t.Errorf("a refused import changed the file")
			}
		})
	}
}

func TestImportLegacy_ContextDirEscape(t *testing.T) {
	t.Parallel()
	f := legacyFile(t)
	f.mustRun("", "import", "--from", "workflow-json", "projects/myproj/workflow.json")
	writeFile(t, filepath.Join(f.dir, "secret.json"), []byte(`{"task_id": "T001", "context": {"token": "s3cr3t"}}`))
	dump := filepath.Join(f.dir, "projects", "myproj", "context_dump")
	if err := os.Symlink(filepath.Join("..", "..", "..", "secret.json"), filepath.Join(dump, "zz.json")); err != nil {
		t.Skipf("symlinks: %v", err)
	}
	before := f.bytes()
	_, stderr, code := f.run("", "import", "--from", "context-dir", "--project", "myproj", "projects/myproj/context_dump")
	wantError(t, stderr, code, 2, filepath.Join("projects", "myproj", "context_dump", "zz.json"), "symbolic link")
	if !bytes.Equal(f.bytes(), before) {
		t.Errorf("a refused import changed the file")
	}
	if ctx := f.mustRun("", "ctx", "get", "T-1", "--project", "myproj"); strings.Contains(ctx, "s3cr3t") {
		t.Errorf("the file outside the directory was imported: %s", ctx)
	}
}

func TestImportLegacy_Project(t *testing.T) {
	t.Parallel()
	t.Run("EnvDoesNotOverrideTheFile", func(t *testing.T) {
		f := legacyFile(t)
		f.mustRun("", "project", "new", "other")
		_, stderr, code := runCLIEnv(t, f.dir, map[string]string{"FLOW_PROJECT": "other"}, "",
			"import", "--from", "workflow-json", "projects/myproj/workflow.json")
		if code != 0 {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		if out := f.mustRun("", "task", "ls", "--project", "myproj", "-o", "json"); !strings.Contains(out, `"ref": "T001"`) && !strings.Contains(out, `"ref":"T001"`) {
			t.Errorf("myproj has no task T001: %s", out)
		}
	})
	t.Run("FlagOverridesTheFile", func(t *testing.T) {
		f := legacyFile(t)
		stdout := f.mustRun("", "import", "--from", "workflow-json", "--project", "renamed", "projects/myproj/workflow.json", "-o", "json")
		if !strings.Contains(stdout, `"project":"renamed"`) {
			t.Errorf("result = %s, want project renamed", stdout)
		}
	})
	t.Run("Stdin", func(t *testing.T) {
		f := legacyFile(t)
		doc := `{"project": "p", "tasks": [{"id": "1", "name": "표준 입력에서 읽기", "status": "todo"}]}`
		stdout := f.mustRun(doc, "import", "--from", "workflow-json", "-")
		if !strings.Contains(stdout, "stdin into project p: read 1, created 1 project, 1 task") {
			t.Errorf("stdout = %q", stdout)
		}
	})
	t.Run("QuietDropsWarnings", func(t *testing.T) {
		f := legacyFile(t)
		_, stderr, code := f.run("", "-q", "import", "--from", "workflow-json", "projects/myproj/workflow.json")
		if code != 0 || stderr != "" {
			t.Errorf("exit %d, stderr %q; want 0 and nothing on stderr", code, stderr)
		}
	})
}

func TestImportLegacy_HistoryKeepsActorAndTime(t *testing.T) {
	t.Parallel()
	f := legacyFile(t)
	f.mustRun("", "import", "--from", "history-json", "--project", "hist", "projects/myproj/workflow_history.json")
	var events []struct {
		Type       string `json:"type"`
		Time       string `json:"time"`
		OccurredAt string `json:"occurred_at"`
		Actor      string `json:"actor"`
	}
	if err := json.Unmarshal([]byte(f.mustRun("", "log", "--project", "hist", "--limit", "2", "-o", "json")), &events); err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 {
		t.Fatalf("log = %+v, want 2 events", events)
	}
	// the newest two: remove_task (mina, its ts before the entry before
	// it: held at that entry's time) and the repeated add_task.
	got := events[0]
	if got.Type != "note.added" || got.Actor != "mina" || got.Time != "2024-04-13T10:00:00Z" || got.OccurredAt != "2024-04-13T01:05:00Z" {
		t.Errorf("remove_task = %+v, want a note by mina held at 2024-04-13T10:00:00Z, occurred 01:05", got)
	}
	out := f.mustRun("", "log", "--project", "hist", "--type", "project.created")
	if !strings.Contains(out, "2024-04-12T08:16:01Z") || !strings.Contains(out, "jun") {
		t.Errorf("log of project.created = %q, want the entry's time and user", out)
	}
}
