package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// inTerminal runs the test binary as `flowctl args...` under a
// pseudo-terminal (util-linux's script, as the acceptance does)
// and returns everything the terminal showed. CI has script (Debian's
// bsdutils is essential); a machine without it skips.
func inTerminal(t *testing.T, dir string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("script"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("script (util-linux) is missing")
		}
		t.Skip("no script(1) to make a pseudo-terminal")
	}
	line := shellQuote(os.Args[0]) + " " + childMarker
	for _, a := range args {
		line += " " + shellQuote(a)
	}
	typescript := filepath.Join(t.TempDir(), "typescript")
	cmd := exec.Command("script", "-qec", line, typescript)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "FLOWCTL_TEST_MAIN=1", "FLOW_ACTOR=tester", "TERM=xterm")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("script %s: %v\n%s", line, err, out)
	}
	b, err := os.ReadFile(typescript)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestProgress(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "demo")
	for i := 0; i < 3; i++ {
		f.mustRun("", "task", "add", "a task")
	}
	t.Run("Terminal", func(t *testing.T) {
		t.Parallel()
		for cmd, label := range map[string]string{"rebuild": "rebuilding projections", "verify": "verifying"} {
			shown := inTerminal(t, f.dir, cmd)
			if !strings.Contains(shown, label) || !strings.Contains(shown, "events/") {
				t.Errorf("%s: no progress bar with a rate on a terminal:\n%q", cmd, shown)
			}
		}
	})
	for _, c := range []struct {
		name string
		args []string
	}{{"Quiet", []string{"-q"}}, {"JSON", []string{"-o", "json"}}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			shown := inTerminal(t, f.dir, append([]string{"rebuild"}, c.args...)...)
			if strings.Contains(shown, "rebuilding projections") {
				t.Errorf("a progress bar with %v:\n%q", c.args, shown)
			}
		})
	}
	t.Run("ImportAndExport", func(t *testing.T) {
		t.Parallel()
		export := filepath.Join(t.TempDir(), "events.jsonl")
		shown := inTerminal(t, f.dir, "export", "--output", "text", "--db", f.path)
		if strings.Contains(shown, "exporting") {
			t.Errorf("a bar between events on the terminal:\n%q", shown)
		}
		writeFile(t, export, []byte(f.mustRun("", "export")))
		dst := t.TempDir()
		shown = inTerminal(t, dst, "import", export)
		if !strings.Contains(shown, "importing") || !strings.Contains(shown, "events/") {
			t.Errorf("no import progress bar on a terminal:\n%q", shown)
		}
		_, stderr, code := runCLI(t, t.TempDir(), "", "import", export)
		if code != 0 || strings.ContainsAny(stderr, "\r\x1b") {
			t.Errorf("exit %d, stderr %q: want no bar in a pipe", code, stderr)
		}
	})
	t.Run("LegacyImport", func(t *testing.T) {
		t.Parallel()
		g := legacyFile(t)
		shown := inTerminal(t, g.dir, "import", "--from", "workflow-json", "projects/myproj/workflow.json")
		if !strings.Contains(shown, "importing workflow-json") {
			t.Errorf("no progress bar for a legacy import on a terminal:\n%q", shown)
		}
	})
	t.Run("Pipe", func(t *testing.T) {
		t.Parallel()
		_, stderr, code := f.run("", "rebuild")
		if code != 0 || strings.ContainsAny(stderr, "\r\x1b") {
			t.Errorf("exit %d, stderr %q: want no bar in a pipe", code, stderr)
		}
	})
}
