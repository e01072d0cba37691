package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow"
)

// watchWait bounds how long a test waits for a follower to show something.
const watchWait = 20 * time.Second

// watchBuffer is a bytes.Buffer that one command writes while the test
// reads it.
type watchBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *watchBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *watchBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// watchRun is a flowctl command running in process, in a goroutine, until
// its context is cancelled (as main's is on SIGINT or SIGTERM).
type watchRun struct {
	stdout, stderr watchBuffer
	cancel         context.CancelFunc
	done           chan int
	code           int
	stopped        bool
}

// startWatch runs flowctl args in dir (with testEnv) in the background.
func startWatch(t *testing.T, dir string, args ...string) *watchRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &watchRun{cancel: cancel, done: make(chan int, 1)}
	e := env{stdin: strings.NewReader(""), stdout: &r.stdout, stderr: &r.stderr,
		getenv: func(k string) string { return testEnv[k] }, dir: dir}
	go func() { r.done <- run(ctx, args, e) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// stop cancels the command and returns its exit code.
func (r *watchRun) stop(t *testing.T) int {
	t.Helper()
	if r.stopped {
		return r.code
	}
	r.cancel()
	select {
	case r.code = <-r.done:
	case <-time.After(watchWait):
		t.Fatalf("the command did not end within %v of being cancelled", watchWait)
	}
	r.stopped = true
	return r.code
}

// exited waits for a command that should end by itself.
func (r *watchRun) exited(t *testing.T) int {
	t.Helper()
	select {
	case r.code = <-r.done:
		r.stopped = true
		return r.code
	case <-time.After(watchWait):
		t.Fatalf("the command still runs after %v; stdout %q, stderr %q", watchWait, r.stdout.String(), r.stderr.String())
	}
	return 0
}

// waitLines waits until stdout holds at least n lines and returns them.
func (r *watchRun) waitLines(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.Now().Add(watchWait)
	for {
		out := r.stdout.String()
		if lines := strings.SplitAfter(out, "\n"); strings.Count(out, "\n") >= n {
			return lines[:len(lines)-1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("stdout has %d lines after %v, want %d:\n%s\nstderr %q", strings.Count(out, "\n"), watchWait, n, out, r.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// mcpEvent is one event of `watch --format mcp`: its MCP:: line parsed,
// and the line for people after it.
type mcpEvent struct {
	name  string // after MCP::
	ev    event
	human string
}

// parseMCP checks watch's MCP output: pairs of lines, the first of each
// "MCP::<type> <JSON of the event>" with the event's own type, the second
// a line for people starting with "#<seq> ".
func parseMCP(t *testing.T, out string) []mcpEvent {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines)%2 != 0 {
		t.Fatalf("MCP output has an odd number of lines:\n%s", out)
	}
	var evs []mcpEvent
	for i := 0; i < len(lines); i += 2 {
		rest, ok := strings.CutPrefix(lines[i], "MCP::")
		if !ok {
			t.Fatalf("line %d does not start with MCP::: %q", i+1, lines[i])
		}
		name, body, ok := strings.Cut(rest, " ")
		var m mcpEvent
		dec := json.NewDecoder(strings.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&m.ev); !ok || err != nil || dec.More() {
			t.Fatalf("line %d: the text after MCP::%s is not one event's JSON (%v): %q", i+1, name, err, lines[i])
		}
		m.name, m.human = name, lines[i+1]
		if m.ev.Type != name {
			t.Errorf("line %d: MCP::%s carries an event of type %s", i+1, name, m.ev.Type)
		}
		if want := "#" + strconv.FormatUint(m.ev.Seq, 10) + " "; !strings.HasPrefix(m.human, want) {
			t.Errorf("line %d: the line for people %q does not start with %q", i+2, m.human, want)
		}
		evs = append(evs, m)
	}
	return evs
}

func wantSeqs(t *testing.T, got []uint64, from, to uint64) {
	t.Helper()
	var want []uint64
	for s := from; s <= to; s++ {
		want = append(want, s)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("seqs = %v, want %v", got, want)
	}
}

// TestWatch_SeesOtherProcesses: while watch runs, other flowctl processes
// append events in two rounds; watch prints each event once, in order, as
// an MCP:: line whose JSON parses, and ends with exit 0 when cancelled.
func TestWatch_SeesOtherProcesses(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "w") // seq 1
	w := startWatch(t, f.dir, "watch", "--format", "mcp-full", "--since", "2")
	events := 0
	for round, lists := range [][][]string{
		{{"task", "add", "one"}, {"task", "add", "two"}, {"note", "add", "hello"}},
		{{"task", "add", "three"}, {"note", "add", "MCP::fake {\"not\":\"an event\"}"}},
	} {
		for c, r := range startChildren(t, f.dir, lists) {
			if r.err != nil || r.code != 0 {
				t.Fatalf("round %d child %d: exit %d, %v, stderr %q", round, c, r.code, r.err, r.stderr)
			}
		}
		events += len(lists)
		w.waitLines(t, 2*events) // seen before the next round is written
	}
	if code := w.stop(t); code != 0 {
		t.Errorf("watch exit code = %d, want 0 (stderr %q)", code, w.stderr.String())
	}
	evs := parseMCP(t, w.stdout.String())
	var seqs []uint64
	names := map[string]int{}
	for _, m := range evs {
		seqs = append(seqs, m.ev.Seq)
		names[m.name]++
	}
	wantSeqs(t, seqs, 2, 6)
	if names["task.created"] != 3 || names["note.added"] != 2 {
		t.Errorf("event types = %v, want 3 task.created and 2 note.added", names)
	}
	if w.stderr.String() != "" {
		t.Errorf("stderr = %q, want nothing", w.stderr.String())
	}
}

// TestWatch_OnlyNewEvents: without --since, watch starts at the head: it
// shows none of the events that were there, and every event after the
// first it shows, without a gap.
func TestWatch_OnlyNewEvents(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "w")
	f.mustRun("", "task", "add", "old")
	w := startWatch(t, f.dir, "watch", "--format", "jsonl")
	// watch's first poll may come after some of these: append until it
	// has shown one, then a few more.
	for i := 0; w.stdout.String() == ""; i++ {
		if i == 500 {
			t.Fatalf("watch showed nothing of %d new events; stderr %q", i, w.stderr.String())
		}
		f.mustRun("", "note", "add", "tick "+strconv.Itoa(i))
		time.Sleep(20 * time.Millisecond)
	}
	for i := range 3 {
		f.mustRun("", "note", "add", "after "+strconv.Itoa(i))
	}
	head := f.logEvents("--limit", "1")[0].Seq
	lines := w.waitLines(t, 1)
	for len(lines) == 0 || !strings.Contains(lines[len(lines)-1], `"seq":`+strconv.FormatUint(head, 10)+",") {
		lines = w.waitLines(t, len(lines)+1)
	}
	if code := w.stop(t); code != 0 {
		t.Errorf("watch exit code = %d, want 0", code)
	}
	var seqs []uint64
	for _, line := range lines {
		var ev event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		seqs = append(seqs, ev.Seq)
	}
	if seqs[0] <= 2 {
		t.Errorf("watch showed seq %d, which was there before it started", seqs[0])
	}
	wantSeqs(t, seqs, seqs[0], head)
}

// TestWatch_Since: --since replays from a seq, then follows; the text
// format prints exactly log's lines, jsonl one event per line.
func TestWatch_Since(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "w")
	for _, title := range []string{"a", "b", "c"} {
		f.mustRun("", "task", "add", title)
	}
	f.mustRun("", "note", "add", "hello")

	t.Run("Text", func(t *testing.T) {
		w := startWatch(t, f.dir, "watch", "--since", "3")
		w.waitLines(t, 3)
		if code := w.stop(t); code != 0 {
			t.Errorf("exit code = %d, want 0", code)
		}
		if want := f.mustRun("", "log", "--since", "3"); w.stdout.String() != want {
			t.Errorf("watch --since 3 printed\n%s\nwant log's\n%s", w.stdout.String(), want)
		}
	})
	t.Run("JSONL", func(t *testing.T) {
		w := startWatch(t, f.dir, "watch", "--since", "2", "-o", "jsonl")
		w.waitLines(t, 4)
		f.mustRun("", "task", "add", "d") // seq 6, appended while it runs
		lines := w.waitLines(t, 5)
		if code := w.stop(t); code != 0 {
			t.Errorf("exit code = %d, want 0", code)
		}
		var seqs []uint64
		for _, line := range lines {
			var ev flow.Event
			if err := json.Unmarshal([]byte(line), &ev); err != nil || len(ev.Raw) != 0 {
				t.Fatalf("line %q: %v (raw %d bytes)", line, err, len(ev.Raw))
			}
			seqs = append(seqs, ev.Seq)
		}
		wantSeqs(t, seqs, 2, 6)
	})
	t.Run("Filters", func(t *testing.T) {
		w := startWatch(t, f.dir, "watch", "--since", "1", "--type", "task.*", "--format", "mcp-full")
		w.waitLines(t, 2*3)
		w.stop(t)
		for _, m := range parseMCP(t, w.stdout.String()) {
			if m.name != "task.created" {
				t.Errorf("--type 'task.*' showed %s", m.name)
			}
		}
	})
}

// TestWatch_DoesNotBlockWriters: while watch polls, writers that wait at
// most 500 ms for the lock all succeed, in other processes and in this
// one, and watch shows every event they wrote.
func TestWatch_DoesNotBlockWriters(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "w")
	w := startWatch(t, f.dir, "watch", "--since", "1", "--format", "mcp-full")
	var lists [][]string
	for i := range 4 {
		lists = append(lists, []string{"note", "add", "child " + strconv.Itoa(i), "--lock-timeout", "500ms"})
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for c, r := range startChildren(t, f.dir, lists) {
			if r.err != nil || r.code != 0 {
				t.Errorf("child %d: exit %d, %v, stderr %q", c, r.code, r.err, r.stderr)
			}
		}
	}()
	for i := range 20 {
		if _, stderr, code := f.run("", "note", "add", "here "+strconv.Itoa(i), "--lock-timeout", "500ms"); code != 0 {
			t.Errorf("write %d while watch runs: exit %d, stderr %q", i, code, stderr)
		}
		time.Sleep(5 * time.Millisecond)
	}
	wg.Wait()
	w.waitLines(t, 2*25)
	if code := w.stop(t); code != 0 {
		t.Errorf("watch exit code = %d, want 0", code)
	}
	var seqs []uint64
	for _, m := range parseMCP(t, w.stdout.String()) {
		seqs = append(seqs, m.ev.Seq)
	}
	wantSeqs(t, seqs, 1, 25)
}

// TestWatch_WaitsOutABusyFile: a writer that holds the file's lock for a
// while (longer than several polls) does not end watch; the event it
// wrote shows once it lets go.
func TestWatch_WaitsOutABusyFile(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "w")
	w := startWatch(t, f.dir, "watch", "--since", "1", "-o", "jsonl")
	w.waitLines(t, 1)
	eng, err := flow.Open(f.path, flow.Options{Actor: "holder"})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * flow.DefaultFollowInterval)
	_, err = eng.AddNote(flow.NewNote{Project: "w", Text: "held the lock"})
	time.Sleep(2 * flow.DefaultFollowInterval)
	if cerr := eng.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	lines := w.waitLines(t, 2)
	if code := w.stop(t); code != 0 || !strings.Contains(lines[1], "held the lock") {
		t.Errorf("exit code %d, lines %q, stderr %q", code, lines, w.stderr.String())
	}
}

// TestLogFollow: log --follow prints what log prints (here the last two
// events), then each new event, with log's filters.
func TestLogFollow(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "w")
	for _, title := range []string{"a", "b", "c"} {
		f.mustRun("", "task", "add", title)
	} // seqs 1-4

	t.Run("Text", func(t *testing.T) {
		w := startWatch(t, f.dir, "log", "--follow", "--limit", "2", "--project", "w")
		w.waitLines(t, 2) // seqs 3 and 4
		f.mustRun("", "note", "add", "one")
		f.mustRun("", "note", "add", "two")
		w.waitLines(t, 4)
		if code := w.stop(t); code != 0 {
			t.Errorf("exit code = %d, want 0", code)
		}
		if got, want := w.stdout.String(), f.mustRun("", "log", "--since", "3", "--until", "6"); got != want {
			t.Errorf("log --follow printed\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("Filtered", func(t *testing.T) {
		w := startWatch(t, f.dir, "log", "-f", "--type", "note.added", "-o", "jsonl")
		w.waitLines(t, 2) // the notes of Text
		f.mustRun("", "task", "add", "not a note")
		f.mustRun("", "note", "add", "three")
		lines := w.waitLines(t, 3)
		w.stop(t)
		for _, line := range lines {
			var ev event
			if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.Type != "note.added" {
				t.Errorf("line %q: type %q, %v", line, ev.Type, err)
			}
		}
	})
}

func TestWatch_BadInput(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "w")
	before := f.bytes()
	missing := filepath.Join(t.TempDir(), "none.db")
	for _, tc := range []struct {
		name string
		args []string
		code int
		fact string
	}{
		{"WatchNoFile", []string{"watch", "--db", missing}, 3, "none.db"},
		{"LogFollowNoFile", []string{"log", "--follow", "--db", missing}, 3, "none.db"},
		{"WatchNoFileHere", []string{"watch", "--since", "1"}, 3, "no .flow"},
		{"Format", []string{"watch", "--format", "xml"}, 2, "xml"},
		{"JSON", []string{"watch", "-o", "json"}, 2, "-o jsonl"},
		{"LogFollowJSON", []string{"log", "--follow", "-o", "json"}, 2, "-o jsonl"},
		{"LogFollowUntil", []string{"log", "--follow", "--until", "3"}, 2, "--until"},
		{"Since", []string{"watch", "--since", "yesterday"}, 2, "yesterday"},
		{"Argument", []string{"watch", "now"}, 2, "now"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := f.dir
			if tc.name == "WatchNoFileHere" {
				dir = t.TempDir()
			}
			w := startWatch(t, dir, tc.args...)
			code := w.exited(t)
			wantError(t, w.stderr.String(), code, tc.code, tc.fact)
			if out := w.stdout.String(); out != "" {
				t.Errorf("stdout = %q, want nothing", out)
			}
		})
	}
	if !bytes.Equal(f.bytes(), before) {
		t.Errorf("the file changed")
	}
}

// TestWatch_Signals: a real flowctl watch process ends with exit 0 on
// SIGINT and on SIGTERM.
func TestWatch_Signals(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "w")
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], childMarker, "watch", "--since", "1", "--format", "mcp")
			cmd.Dir = f.dir
			cmd.Env = []string{"FLOWCTL_TEST_MAIN=1", "FLOW_ACTOR=tester", "PATH=" + os.Getenv("PATH")}
			var stdout watchBuffer
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(watchWait)
			for !strings.Contains(stdout.String(), "\n#1 ") { // it runs and has printed seq 1
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("watch printed %q in %v", stdout.String(), watchWait)
				}
				time.Sleep(10 * time.Millisecond)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); err != nil || code != 0 {
				t.Errorf("after %v: exit %d (%v), stderr %q", sig, code, err, stderr.String())
			}
		})
	}
}
