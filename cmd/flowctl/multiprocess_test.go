package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// childResult is what one flowctl child process did.
type childResult struct {
	stdout, stderr string
	code           int
	err            error // the process could not be run at all
}

// startChildren runs the test binary as flowctl (see TestMain) once per
// argument list, all at once, and waits for all of them. The children see
// FLOW_ACTOR=tester and nothing else of the environment but PATH.
func startChildren(t *testing.T, dir string, argLists [][]string) []childResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	results := make([]childResult, len(argLists))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, args := range argLists {
		cmd := exec.CommandContext(ctx, os.Args[0], append([]string{childMarker}, args...)...)
		cmd.Dir = dir
		cmd.Env = []string{"FLOWCTL_TEST_MAIN=1", "FLOW_ACTOR=tester", "PATH=" + os.Getenv("PATH")}
		if v, ok := os.LookupEnv("GOCOVERDIR"); ok {
			cmd.Env = append(cmd.Env, "GOCOVERDIR="+v)
		}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			err := cmd.Run()
			r := childResult{stdout: stdout.String(), stderr: stderr.String(), code: -1}
			if cmd.ProcessState != nil {
				r.code = cmd.ProcessState.ExitCode()
			}
			if _, exited := err.(*exec.ExitError); err != nil && !exited {
				r.err = err
			}
			results[i] = r
		}()
	}
	close(start)
	wg.Wait()
	return results
}

// TestMultiProcess_ConcurrentImports: six processes import six different
// exports into one file at once. With a 20s lock timeout none gives up,
// every event lands exactly once, seqs stay gap-free and the chain holds.
func TestMultiProcess_ConcurrentImports(t *testing.T) {
	t.Parallel()
	const children, perChild = 6, 3
	work := t.TempDir()

	// One export per child, made in a scratch file of its own.
	wantIDs := map[string]bool{}
	exports := make([]string, children)
	for c := range children {
		scratch := filepath.Join(work, fmt.Sprintf("scratch%d.db", c))
		for e := range perChild {
			if _, stderr, code := runCLI(t, work, "", "init", "--db", scratch, "--project", fmt.Sprintf("p%d-%d", c, e)); code != 0 {
				t.Fatalf("init: exit %d, stderr %q", code, stderr)
			}
		}
		stdout, stderr, code := runCLI(t, work, "", "export", "--db", scratch)
		if code != 0 {
			t.Fatalf("export: exit %d, stderr %q", code, stderr)
		}
		for _, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
			var ev event
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				t.Fatal(err)
			}
			wantIDs[ev.ID] = true
		}
		exports[c] = filepath.Join(work, fmt.Sprintf("export%d.jsonl", c))
		writeFile(t, exports[c], []byte(stdout))
	}
	if len(wantIDs) != children*perChild {
		t.Fatalf("exported %d distinct ids, want %d", len(wantIDs), children*perChild)
	}

	shared := mustInitAt(t, work, filepath.Join(work, "shared.db"), "--db", "shared.db")
	argLists := make([][]string, children)
	for c := range children {
		argLists[c] = []string{"import", exports[c], "--db", "shared.db", "--lock-timeout", "20s"}
	}
	busy := 0
	for c, r := range startChildren(t, work, argLists) {
		switch {
		case r.err != nil:
			t.Errorf("child %d did not run: %v", c, r.err)
		case r.code == 5:
			busy++
			t.Errorf("child %d gave up waiting for the lock (exit 5) within 20s: %q", c, r.stderr)
		case r.code != 0:
			t.Errorf("child %d: exit %d, stderr %q", c, r.code, r.stderr)
		case r.stdout != fmt.Sprintf("read %d events: %d appended, 0 already present\n", perChild, perChild):
			t.Errorf("child %d printed %q", c, r.stdout)
		}
	}
	t.Logf("%d children, %d busy", children, busy)

	stdout := shared.mustRun("", "log", "-o", "jsonl", "--db", "shared.db")
	seen := map[string]int{}
	var seq uint64
	for _, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		var ev event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		seq++
		if ev.Seq != seq {
			t.Errorf("seq %d follows seq %d", ev.Seq, seq-1)
			seq = ev.Seq
		}
		seen[ev.ID]++
	}
	if seq != uint64(len(wantIDs)) {
		t.Errorf("head seq %d, want %d", seq, len(wantIDs))
	}
	for id := range wantIDs {
		if seen[id] != 1 {
			t.Errorf("event %s is in the log %d times, want once", id, seen[id])
		}
	}
	for id, n := range seen {
		if !wantIDs[id] {
			t.Errorf("event %s (%d times) was never exported", id, n)
		}
	}
	// shared's cleanup runs verify.
}

// TestMultiProcess_SameProject: processes racing to create one project all
// succeed; exactly one creates it.
func TestMultiProcess_SameProject(t *testing.T) {
	t.Parallel()
	const children = 4
	f := mustInit(t)
	argLists := make([][]string, children)
	for c := range argLists {
		argLists[c] = []string{"init", "--project", "contended", "--lock-timeout", "20s"}
	}
	created := 0
	for c, r := range startChildren(t, f.dir, argLists) {
		switch {
		case r.err != nil:
			t.Errorf("child %d did not run: %v", c, r.err)
		case r.code != 0:
			t.Errorf("child %d: exit %d, stderr %q", c, r.code, r.stderr)
		case strings.Contains(r.stdout, "Created project contended"):
			created++
		case !strings.Contains(r.stdout, "Project contended already exists"):
			t.Errorf("child %d printed %q", c, r.stdout)
		}
	}
	if created != 1 {
		t.Errorf("%d processes created the project, want exactly 1", created)
	}
	if evs := f.logEvents(); len(evs) != 1 {
		t.Errorf("log = %+v, want one project.created", evs)
	}
}
