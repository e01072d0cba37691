package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow"
)

// v1File copies eventlog's format-1 fixture (written by the flowctl of
// format 1: project "demo", 80 tasks, an exec record, a checkpoint) to
// dir/.flow/flow.db, the file commands run in dir find.
func v1File(t *testing.T) *flowFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "eventlog", "testdata", "v1", "flow.db"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, flow.DefaultDir, flow.DefaultFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	f := &flowFile{t: t, dir: dir, path: path}
	t.Cleanup(f.mustVerify)
	return f
}

func TestUpgrade(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		f := v1File(t)
		f.mustRun("", "task", "add", "--project", "demo", "added to the format-1 file")
		export := f.mustRun("", "export")
		tasks := f.mustRun("", "task", "ls", "--project", "demo", "-o", "json")
		out := f.mustRun("", "upgrade", "-o", "json")
		var rep upgradeResult
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("upgrade -o json: %v in %q", err, out)
		}
		if !rep.Upgraded || rep.FromFormat != 1 || rep.ToFormat != 2 || rep.Backup != f.path+".v1.bak" || rep.HeadSeq != 88 || len(rep.HeadHash) != 64 {
			t.Fatalf("upgrade reported %+v", rep)
		}
		if !strings.Contains(f.mustRun("", "verify"), rep.HeadHash+"@88") {
			t.Error("verify does not report the head the upgrade kept")
		}
		if got := f.mustRun("", "export"); got != export {
			t.Error("export differs after the upgrade")
		}
		if got := f.mustRun("", "task", "ls", "--project", "demo", "-o", "json"); got != tasks {
			t.Error("task ls differs after the upgrade")
		}
		if _, err := os.Stat(rep.Backup); err != nil {
			t.Errorf("backup: %v", err)
		}
		f.mustRun("", "task", "add", "--project", "demo", "added to the upgraded file")
		text := f.mustRun("", "upgrade")
		if !strings.Contains(text, "format 2, the current one") {
			t.Errorf("upgrade of a current file said %q", text)
		}
	})

	t.Run("OK/Text", func(t *testing.T) {
		f := v1File(t)
		backup := filepath.Join(t.TempDir(), "before.db")
		out := f.mustRun("", "upgrade", "--backup", backup)
		if !strings.Contains(out, "from file format 1 to 2") || !strings.Contains(out, backup) {
			t.Errorf("upgrade said %q", out)
		}
	})

	t.Run("ErrInvalid/BackupExists", func(t *testing.T) {
		f := v1File(t)
		if err := os.WriteFile(f.path+".v1.bak", []byte("older"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := f.run("", "upgrade")
		wantError(t, stderr, code, 2, "backup")
	})

	t.Run("ErrNotFound/NoFile", func(t *testing.T) {
		_, stderr, code := runCLI(t, t.TempDir(), "", "upgrade", "--db", "missing.db")
		if code == 0 || !strings.Contains(stderr, "flowctl init") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
}
