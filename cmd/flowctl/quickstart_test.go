package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/eventlog"
)

// commandLines returns the "$ flowctl ..." and "$ export ..." lines of a
// quickstart's output.
func commandLines(stdout string) []string {
	var out []string
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, "$ flowctl") || strings.HasPrefix(line, "$ export") {
			out = append(out, line)
		}
	}
	return out
}

// shellWords splits a printed command line the way a POSIX shell splits
// the single-quoted words shellQuote makes.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	words, err := splitShell(line)
	if err != nil {
		t.Fatal(err)
	}
	return words
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
			want := len(quickstartSession) + 1
			if run == 2 {
				want = len(quickstartAgain) + 1
			}
			if len(cmds) != want || !strings.HasPrefix(cmds[0], "$ flowctl init") || !strings.HasPrefix(cmds[want-1], "$ flowctl verify") {
				t.Fatalf("run %d printed commands %q, want %d from init to verify", run, cmds, want)
			}
			if !strings.Contains(stdout, "ok: 16 events in 3 streams, 1 project") {
				t.Errorf("run %d: output has no verify result:\n%s", run, stdout)
			}
		}
		evs := f.logEvents()
		if len(evs) != 16 || evs[0].Project != quickstartProject || evs[15].Actor != "tester" {
			t.Errorf("after two quickstarts the log has %d events, want the 16 of one session by tester", len(evs))
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
		// Replay the printed session in a new file, as a user would.
		again := filepath.Join(dir, "again")
		env := map[string]string{}
		for _, line := range commandLines(stdout) {
			words := shellWords(t, strings.TrimPrefix(line, "$ "))
			if words[0] == "export" {
				name, value, _ := strings.Cut(words[1], "=")
				env[name] = value
				continue
			}
			if !strings.Contains(line, "--db qs.db") {
				t.Errorf("%q does not pass --db on", line)
			}
			if _, stderr, code := runCLIEnv(t, dir, env, "", append(words[1:], "--db", again)...); code != 0 {
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
		for _, ev := range f.logEvents() {
			if ev.Actor != "dana" && !(ev.Type == "approval.decided" && ev.Actor == "ana") { // the grant is someone else's
				t.Fatalf("quickstart --actor dana wrote event %d by %q", ev.Seq, ev.Actor)
			}
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
