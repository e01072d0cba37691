package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/eventlog"
)

// commandLines returns the "$ flowctl ..." lines of a quickstart's output.
func commandLines(stdout string) []string {
	var out []string
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, "$ flowctl") {
			out = append(out, line)
		}
	}
	return out
}

func TestQuickstart(t *testing.T) {
	t.Parallel()

	t.Run("EmptyDirectoryThenAgain", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		f := &flowFile{t: t, dir: dir, path: filepath.Join(dir, ".flow", "flow.db")}
		t.Cleanup(f.mustVerify)
		for run := 1; run <= 2; run++ {
			stdout, stderr, code := runCLI(t, dir, "", "quickstart")
			if code != 0 || stderr != "" {
				t.Fatalf("run %d: exit %d, stderr %q", run, code, stderr)
			}
			cmds := commandLines(stdout)
			wantPrefixes := []string{"$ flowctl init", "$ flowctl log", "$ flowctl verify"}
			if len(cmds) != len(wantPrefixes) {
				t.Fatalf("run %d printed commands %q, want %d of them", run, cmds, len(wantPrefixes))
			}
			for i, p := range wantPrefixes {
				if !strings.HasPrefix(cmds[i], p) {
					t.Errorf("run %d command %d = %q, want %q...", run, i+1, cmds[i], p)
				}
			}
			if !strings.Contains(stdout, "ok: 1 event in 1 stream, 1 project") {
				t.Errorf("run %d: output has no verify result:\n%s", run, stdout)
			}
		}
		evs := f.logEvents()
		if len(evs) != 1 || evs[0].Project != quickstartProject || evs[0].Actor != "tester" {
			t.Errorf("after two quickstarts the log is %+v, want one project.created of %q by tester", evs, quickstartProject)
		}
	})

	t.Run("PrintedCommandsReproduce", func(t *testing.T) {
		t.Parallel()
		// Each printed command, run again as printed, succeeds.
		dir := t.TempDir()
		f := &flowFile{t: t, dir: dir, path: filepath.Join(dir, "qs.db")}
		t.Cleanup(f.mustVerify)
		stdout, stderr, code := runCLI(t, dir, "", "quickstart", "--db", "qs.db")
		if code != 0 {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		for _, line := range commandLines(stdout) {
			args := strings.Fields(strings.TrimPrefix(line, "$ flowctl "))
			if !strings.Contains(line, "--db qs.db") {
				t.Errorf("%q does not pass --db on", line)
			}
			if _, stderr, code := runCLI(t, dir, "", args...); code != 0 {
				t.Errorf("%q: exit %d, stderr %q", line, code, stderr)
			}
		}
	})

	t.Run("PassesActorOn", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		f := &flowFile{t: t, dir: dir, path: filepath.Join(dir, ".flow", "flow.db")}
		t.Cleanup(f.mustVerify)
		if _, stderr, code := runCLI(t, f.dir, "", "quickstart", "--actor", "dana"); code != 0 {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		if evs := f.logEvents(); len(evs) != 1 || evs[0].Actor != "dana" {
			t.Errorf("quickstart --actor dana wrote %+v, want the event by dana", evs)
		}
	})

	t.Run("BusyExitsFive", func(t *testing.T) {
		t.Parallel()
		// A step's exit code is the quickstart's, and --lock-timeout reaches it.
		f := mustInit(t)
		holder, err := eventlog.Open(f.path, eventlog.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer holder.Close()
		start := time.Now()
		stdout, stderr, code := f.run("", "quickstart", "--lock-timeout", "200ms")
		if elapsed := time.Since(start); elapsed > 1500*time.Millisecond {
			t.Errorf("quickstart gave up after %v, want about 200ms", elapsed)
		}
		if code != 5 {
			t.Errorf("exit %d, want 5 (busy); stderr %q", code, stderr)
		}
		if !strings.Contains(stderr, "locked") || !strings.Contains(stderr, "quickstart stopped") {
			t.Errorf("stderr %q does not say the file is locked and the quickstart stopped", stderr)
		}
		if cmds := commandLines(stdout); len(cmds) != 1 || !strings.Contains(cmds[0], "--lock-timeout 200ms") {
			t.Errorf("printed commands %q, want only the init step, with --lock-timeout 200ms", cmds)
		}
	})
}
