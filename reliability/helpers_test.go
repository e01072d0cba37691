package reliability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// flowctlBin is the flowctl binary built once by TestMain.
var flowctlBin string

// commandDeadline bounds every flowctl process: one that runs longer hangs,
// and fails the test.
const commandDeadline = 30 * time.Second

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "flowctl-reliability-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	flowctlBin = filepath.Join(dir, "flowctl")
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	build := exec.Command(goTool, "build", "-o", flowctlBin, "github.com/flowctl/flowctl/cmd/flowctl")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "building flowctl: %v\n", err)
		return 1
	}
	return m.Run()
}

// result is what one flowctl process did.
type result struct {
	stdout, stderr string
	code           int  // exit code; -1 when ended by a signal
	killed         bool // ended by the SIGKILL the caller asked for
	elapsed        time.Duration
}

// runFlowctl runs flowctl with args in dir. When killAfter > 0 the process
// is sent SIGKILL that long after it started (unless it ended before). A
// process that runs past commandDeadline is killed and reported as a hang.
// Safe to call from any goroutine.
func runFlowctl(t testing.TB, dir string, killAfter time.Duration, args ...string) result {
	cmd := exec.Command(flowctlBin, args...)
	cmd.Dir = dir
	cmd.Env = []string{"FLOW_ACTOR=tester", "PATH=" + os.Getenv("PATH")}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Errorf("starting flowctl %v: %v", args, err)
		return result{code: -1}
	}
	if killAfter > 0 {
		kill := time.AfterFunc(killAfter, func() { _ = cmd.Process.Signal(syscall.SIGKILL) })
		defer kill.Stop()
	}
	var hung atomic.Bool
	deadline := time.AfterFunc(commandDeadline, func() {
		hung.Store(true)
		_ = cmd.Process.Signal(syscall.SIGKILL)
	})
	err := cmd.Wait()
	deadline.Stop()
	r := result{stdout: stdout.String(), stderr: stderr.String(), code: -1, elapsed: time.Since(start)}
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Errorf("flowctl %v: %v", args, err)
		return r
	}
	r.code = cmd.ProcessState.ExitCode()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		r.killed = true
	}
	if hung.Load() {
		t.Errorf("flowctl %v ran past %v (a hang); stderr %q", args, commandDeadline, r.stderr)
		r.killed = false
	}
	return r
}

// fileArgs are the flags every command of these tests passes: the file,
// the project, a generous lock timeout (busy is rare and counted) and JSON.
func fileArgs(lockTimeout time.Duration) []string {
	return []string{"--db", "flow.db", "--project", "P", "--lock-timeout", lockTimeout.String(), "-o", "json"}
}

// flow runs one flowctl command on the test file with a 20s lock timeout.
// verify and compact work on the whole file and refuse --project.
func flow(t testing.TB, dir string, killAfter time.Duration, args ...string) result {
	extra := fileArgs(20 * time.Second)
	if args[0] == "verify" || args[0] == "compact" {
		i := slices.Index(extra, "--project")
		extra = slices.Delete(extra, i, i+2)
	}
	return runFlowctl(t, dir, killAfter, append(args, extra...)...)
}

// mustFlow runs a command that must succeed and returns its stdout.
func mustFlow(t testing.TB, dir string, args ...string) string {
	t.Helper()
	r := flow(t, dir, 0, args...)
	if r.code != 0 {
		t.Fatalf("flowctl %v: exit %d, stderr %q", args, r.code, r.stderr)
	}
	return r.stdout
}

// newFile creates flow.db with project P and task T-1 in a new directory.
func newFile(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	r := runFlowctl(t, dir, 0, "init", "--db", "flow.db", "--project", "P")
	if r.code != 0 {
		t.Fatalf("init: exit %d, stderr %q", r.code, r.stderr)
	}
	if id := decode[task](t, mustFlow(t, dir, "task", "add", "anchor")).ID; id != "T-1" {
		t.Fatalf("first task is %s, want T-1", id)
	}
	return dir
}

func decode[T any](t testing.TB, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("decoding %q: %v", s, err)
	}
	return v
}

// task is the part of 'task show -o json' these tests read.
type task struct {
	ID             string         `json:"id"`
	Title          string         `json:"title"`
	Ref            string         `json:"ref"`
	Version        uint64         `json:"version"`
	ContextVersion uint64         `json:"context_version"`
	Context        map[string]any `json:"context"`
	Steps          []step         `json:"steps"`
}

type step struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// event is the part of 'log -o jsonl' these tests read.
type event struct {
	Seq     uint64 `json:"seq"`
	ID      string `json:"id"`
	Stream  string `json:"stream"`
	Version uint64 `json:"version"`
	Type    string `json:"type"`
}

// mustVerify runs 'flowctl verify' and fails unless the file is clean and
// its projections equal a replay. It returns the head seq.
func mustVerify(t testing.TB, dir string) uint64 {
	t.Helper()
	r := flow(t, dir, 0, "verify")
	if r.code != 0 {
		t.Fatalf("verify: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	rep := decode[struct {
		OK          bool   `json:"ok"`
		HeadSeq     uint64 `json:"head_seq"`
		Projections string `json:"projections"`
	}](t, r.stdout)
	if !rep.OK || rep.Projections != "ok" {
		t.Fatalf("verify: %s", r.stdout)
	}
	return rep.HeadSeq
}

// mustEvents reads the whole log and checks that seqs run 1..head with no
// gap or duplicate, that each event id appears once and that each stream's
// versions run 1, 2, 3, ...
func mustEvents(t testing.TB, dir string, head uint64) []event {
	t.Helper()
	out := runFlowctl(t, dir, 0, "log", "--db", "flow.db", "-o", "jsonl", "--lock-timeout", "20s")
	if out.code != 0 {
		t.Fatalf("log: exit %d, stderr %q", out.code, out.stderr)
	}
	var events []event
	ids := map[string]bool{}
	versions := map[string]uint64{}
	for _, line := range strings.Split(strings.TrimSuffix(out.stdout, "\n"), "\n") {
		ev := decode[event](t, line)
		if want := uint64(len(events)) + 1; ev.Seq != want {
			t.Fatalf("seq %d where %d was due", ev.Seq, want)
		}
		if ids[ev.ID] {
			t.Fatalf("event id %s appears twice (seq %d)", ev.ID, ev.Seq)
		}
		ids[ev.ID] = true
		if want := versions[ev.Stream] + 1; ev.Version != want {
			t.Fatalf("seq %d: %s at version %d, want %d", ev.Seq, ev.Stream, ev.Version, want)
		}
		versions[ev.Stream] = ev.Version
		events = append(events, ev)
	}
	if uint64(len(events)) != head {
		t.Fatalf("log has %d events, verify says head %d", len(events), head)
	}
	return events
}

// envInt is the integer in the environment variable name, or def.
func envInt(t testing.TB, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, v)
	}
	return n
}
