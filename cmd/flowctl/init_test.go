package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInit(t *testing.T) {
	t.Parallel()

	t.Run("CreatesFile", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		stdout, stderr, code := runCLI(t, dir, "", "init")
		if code != 0 || stderr != "" {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		path := filepath.Join(dir, ".flow", "flow.db")
		if want := "Initialized empty flowctl file in " + path + "\n"; stdout != want {
			t.Errorf("stdout = %q, want %q", stdout, want)
		}
		f := &flowFile{t: t, dir: dir, path: path}
		t.Cleanup(f.mustVerify)
		if evs := f.logEvents(); len(evs) != 0 {
			t.Errorf("a new file has events: %+v", evs)
		}
	})

	t.Run("SecondInitReinitializes", func(t *testing.T) {
		t.Parallel()
		f := mustInit(t)
		before := f.bytes()
		stdout, stderr, code := f.run("", "init")
		if code != 0 || stderr != "" {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		if !strings.HasPrefix(stdout, "Reinitialized existing flowctl file in "+f.path) {
			t.Errorf("stdout = %q, want Reinitialized ...", stdout)
		}
		if !bytes.Equal(before, f.bytes()) {
			t.Errorf("a second init changed the file")
		}
	})

	t.Run("CreatesProject", func(t *testing.T) {
		t.Parallel()
		f := mustInit(t, "--project", "website")
		evs := f.logEvents()
		if len(evs) != 1 {
			t.Fatalf("log after init --project = %+v, want one event", evs)
		}
		ev := evs[0]
		if ev.Seq != 1 || ev.Stream != "project/website" || ev.Version != 1 || ev.Type != "project.created" ||
			ev.Project != "website" || ev.Actor != "tester" {
			t.Errorf("event = %+v, want seq 1, project/website@1, project.created by tester", ev)
		}
		var data struct{ Name string }
		if err := json.Unmarshal(ev.Data, &data); err != nil || data.Name != "website" {
			t.Errorf("data = %s, want {\"name\":\"website\"}", ev.Data)
		}
	})

	t.Run("ProjectOnExistingFile", func(t *testing.T) {
		t.Parallel()
		f := mustInit(t)
		stdout := f.mustRun("", "init", "--project", "website")
		if !strings.HasPrefix(stdout, "Reinitialized") || !strings.Contains(stdout, "Created project website\n") {
			t.Errorf("stdout = %q, want Reinitialized ... Created project website", stdout)
		}
	})

	t.Run("ExistingProjectIsNotAnError", func(t *testing.T) {
		t.Parallel()
		f := mustInit(t, "--project", "website")
		before := f.bytes()
		stdout := f.mustRun("", "init", "--project", "website")
		if !strings.Contains(stdout, "Project website already exists\n") {
			t.Errorf("stdout = %q, want it to say the project exists", stdout)
		}
		if !bytes.Equal(before, f.bytes()) {
			t.Errorf("init of an existing project changed the file")
		}
		if evs := f.logEvents(); len(evs) != 1 {
			t.Errorf("log = %+v, want the one project.created", evs)
		}
	})

	t.Run("ProjectFromEnv", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		if _, stderr, code := runCLIEnv(t, dir, map[string]string{"FLOW_PROJECT": "fromenv"}, "", "init"); code != 0 {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		f := &flowFile{t: t, dir: dir, path: filepath.Join(dir, ".flow", "flow.db")}
		t.Cleanup(f.mustVerify)
		if evs := f.logEvents(); len(evs) != 1 || evs[0].Project != "fromenv" {
			t.Errorf("log = %+v, want project fromenv from FLOW_PROJECT", evs)
		}
	})

	t.Run("ActorFlag", func(t *testing.T) {
		t.Parallel()
		f := mustInit(t, "--project", "p", "--actor", "carol", "--session", "s-1")
		evs := f.logEvents()
		if len(evs) != 1 || evs[0].Actor != "carol" {
			t.Errorf("log = %+v, want actor carol from --actor", evs)
		}
		if got := f.mustRun("", "log", "-o", "jsonl"); !strings.Contains(got, `"session":"s-1"`) {
			t.Errorf("log -o jsonl = %s, want session s-1", got)
		}
	})

	t.Run("JSON", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		stdout, stderr, code := runCLI(t, dir, "", "init", "--project", "website", "-o", "json")
		if code != 0 {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		f := &flowFile{t: t, dir: dir, path: filepath.Join(dir, ".flow", "flow.db")}
		t.Cleanup(f.mustVerify)
		var got initResult
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatalf("stdout %q: %v", stdout, err)
		}
		want := initResult{Path: f.path, Created: true, Project: "website", ProjectCreated: true}
		if got != want {
			t.Errorf("init -o json = %+v, want %+v", got, want)
		}
	})

	t.Run("Quiet", func(t *testing.T) {
		t.Parallel()
		f := mustInit(t, "-q")
		if stdout := f.mustRun("", "init", "-q"); stdout != "" {
			t.Errorf("init -q printed %q", stdout)
		}
	})

	t.Run("BadProjectNameCreatesNothing", func(t *testing.T) {
		t.Parallel()
		for _, name := range []string{"bad name!", "-dash", "a/b", strings.Repeat("x", 65)} {
			dir := t.TempDir()
			stdout, stderr, code := runCLI(t, dir, "", "init", "--project="+name)
			wantError(t, stderr, code, 2, "project name")
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			if _, err := os.Stat(filepath.Join(dir, ".flow")); err == nil {
				t.Errorf("init --project %q created .flow", name)
			}
		}
	})

	t.Run("BadProjectNameOnExistingFile", func(t *testing.T) {
		t.Parallel()
		f := mustInit(t)
		before := f.bytes()
		_, stderr, code := f.run("", "init", "--project", "bad name!")
		wantError(t, stderr, code, 2, `"bad name!"`)
		if !bytes.Equal(before, f.bytes()) {
			t.Errorf("a refused init changed the file")
		}
	})

	t.Run("DBIsADirectory", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		_, stderr, code := runCLI(t, dir, "", "init", "--db", dir)
		wantError(t, stderr, code, 2, "directory")
	})

	t.Run("NotAFlowFile", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		path := filepath.Join(dir, "notes.txt")
		content := []byte(strings.Repeat("not a database\n", 1000))
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := runCLI(t, dir, "", "init", "--db", path)
		wantError(t, stderr, code, 7, "notes.txt")
		if got, _ := os.ReadFile(path); !bytes.Equal(got, content) {
			t.Errorf("init --db on a foreign file changed it")
		}
	})
}
