package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flowctl/flowctl/internal/pgtest"
	"github.com/jackc/pgx/v5"
)

// The multi-process guarantees on PostgreSQL (issue 17): flowctl
// processes (the test binary as flowctl, see TestMain) writing one
// database at once, a watch seeing each of their events once, in order,
// and writers killed with SIGKILL losing nothing they acknowledged.

// pgProc is what one flowctl process did.
type pgProc struct {
	stdout, stderr string
	code           int  // -1 when ended by a signal
	killed         bool // ended by the SIGKILL the test sent
}

// pgCommand makes a flowctl process on dsn (FLOW_DB) in dir.
func pgCommand(ctx context.Context, dir, dsn string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], append([]string{childMarker}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"FLOWCTL_TEST_MAIN=1", "FLOW_ACTOR=tester", "FLOW_DB=" + dsn, "PATH=" + os.Getenv("PATH")}
	if v, ok := os.LookupEnv("GOCOVERDIR"); ok {
		cmd.Env = append(cmd.Env, "GOCOVERDIR="+v)
	}
	return cmd
}

// pgRun runs flowctl args on dsn; killAfter > 0 sends SIGKILL that long
// after the start, unless it ended before. Safe from any goroutine.
func pgRun(t *testing.T, dir, dsn string, killAfter time.Duration, args ...string) pgProc {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := pgCommand(ctx, dir, dsn, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Errorf("starting flowctl %v: %v", args, err)
		return pgProc{code: -1}
	}
	if killAfter > 0 {
		kill := time.AfterFunc(killAfter, func() { _ = cmd.Process.Signal(syscall.SIGKILL) })
		defer kill.Stop()
	}
	err := cmd.Wait()
	r := pgProc{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Errorf("flowctl %v: %v", args, err)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		r.killed = killAfter > 0 && ws.Signal() == syscall.SIGKILL
		if !r.killed {
			t.Errorf("flowctl %v ended by %v (past 60 s?)", args, ws.Signal())
		}
	}
	return r
}

// pgMust runs a command that must succeed, in process, and returns its
// stdout.
func pgMust(t *testing.T, dsn string, args ...string) string {
	t.Helper()
	stdout, stderr, code := runCLIEnv(t, t.TempDir(), map[string]string{"FLOW_DB": dsn}, "", args...)
	if code != 0 {
		t.Fatalf("flowctl %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, stdout, stderr)
	}
	return stdout
}

// pgStore makes a store with project web and returns its URL.
func pgStore(t *testing.T) string {
	t.Helper()
	dsn, _ := pgURL(t)
	pgMust(t, dsn, "init", "--project", "web")
	return dsn
}

// pgHead verifies the store and returns its head seq.
func pgHead(t *testing.T, dsn string) uint64 {
	t.Helper()
	var rep struct {
		OK      bool   `json:"ok"`
		HeadSeq uint64 `json:"head_seq"`
	}
	out := pgMust(t, dsn, "verify", "-o", "json")
	if err := json.Unmarshal([]byte(out), &rep); err != nil || !rep.OK {
		t.Fatalf("verify: %s (%v)", out, err)
	}
	return rep.HeadSeq
}

// pgEvents reads the whole log and checks it: seqs 1..head without a gap,
// each id once, each stream's versions 1, 2, 3...
func pgEvents(t *testing.T, dsn string, head uint64) []event {
	t.Helper()
	var evs []event
	ids := map[string]bool{}
	versions := map[string]uint64{}
	for _, line := range strings.Split(strings.TrimSuffix(pgMust(t, dsn, "log", "-o", "jsonl"), "\n"), "\n") {
		var ev event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if want := uint64(len(evs)) + 1; ev.Seq != want {
			t.Fatalf("log: seq %d where %d was due", ev.Seq, want)
		}
		if ids[ev.ID] {
			t.Fatalf("log: event id %s twice", ev.ID)
		}
		ids[ev.ID] = true
		if want := versions[ev.Stream] + 1; ev.Version != want {
			t.Fatalf("log: seq %d is version %d of %s, want %d", ev.Seq, ev.Version, ev.Stream, want)
		}
		versions[ev.Stream] = ev.Version
		evs = append(evs, ev)
	}
	if uint64(len(evs)) != head {
		t.Fatalf("log holds %d events, verify says head %d", len(evs), head)
	}
	return evs
}

// pgTask is the part of 'task show -o json' these tests read.
type pgTask struct {
	ID             string         `json:"id"`
	Title          string         `json:"title"`
	Version        uint64         `json:"version"`
	ContextVersion uint64         `json:"context_version"`
	Context        map[string]any `json:"context"`
}

func decodeJSON[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("decoding %q: %v", s, err)
	}
	return v
}

// lockedBuffer is a bytes.Buffer a process writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *lockedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// waitListening waits until a connection of application appName has run
// LISTEN: a watch whose start is fixed (Follow reads the head first).
func waitListening(t *testing.T, appName string, watch *lockedBuffer) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for deadline := time.Now().Add(30 * time.Second); ; {
		var n int
		if err := conn.QueryRow(context.Background(),
			`SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND query = 'LISTEN flow_events'`, appName).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("watch is not listening after 30 s (%d connections); stderr %q", n, watch.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPostgres_MultiProcessWriters: a watch started first, and listening,
// then 4 processes × 50 task adds at once: 200 tasks, seqs 1..N without a
// gap, verify passes, and the watch prints every event appended, once
// each, in seq order.
func TestPostgres_MultiProcessWriters(t *testing.T) {
	dsn := pgStore(t)
	// The watch's connections carry an application name of their own, so
	// that the test sees its LISTEN.
	var b [6]byte
	rand.Read(b[:])
	app := "watch_" + hex.EncodeToString(b[:])
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	head := pgHead(t, dsn)
	writersWatched(t, dsn, u.String(), func(_, werr *lockedBuffer) uint64 {
		waitListening(t, app, werr)
		return head // nothing was appended since
	})
}

// TestMultiProcess_WritersWatched is TestPostgres_MultiProcessWriters on
// the bbolt file: the watch is known to have started once it printed a
// note appended after its start.
func TestMultiProcess_WritersWatched(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "web")
	writersWatched(t, f.path, f.path, func(wout, werr *lockedBuffer) uint64 {
		for deadline := time.Now().Add(30 * time.Second); !strings.Contains(wout.String(), `"note.added"`); {
			if time.Now().After(deadline) {
				t.Fatalf("watch printed %q after 30 s, no note; stderr %q", wout.String(), werr.String())
			}
			pgMust(t, f.path, "note", "add", "watch started")
			time.Sleep(100 * time.Millisecond)
		}
		first, _, _ := strings.Cut(wout.String(), "\n")
		return decodeJSON[event](t, first).Seq - 1
	})
}

// writersWatched starts watch -o jsonl on watchDSN, waits for ready,
// which returns the seq the watch starts after, then has 4 processes add
// 50 tasks each to dsn. Every task is there once, the log has no gap,
// and the watch printed every event after that seq, once each, in order.
func writersWatched(t *testing.T, dsn, watchDSN string, ready func(wout, werr *lockedBuffer) uint64) {
	const writers, each = 4, 50
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	watch := pgCommand(ctx, t.TempDir(), watchDSN, "watch", "-o", "jsonl")
	var wout, werr lockedBuffer
	watch.Stdout, watch.Stderr = &wout, &werr
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	watched := make(chan error, 1)
	go func() { watched <- watch.Wait() }()
	defer func() {
		watch.Process.Kill()
		<-watched
	}()
	head0 := ready(&wout, &werr)

	start := time.Now()
	var mu sync.Mutex
	acked := map[string]string{}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				title := fmt.Sprintf("w%d-%d", w, i)
				r := pgRun(t, t.TempDir(), dsn, 0, "task", "add", title, "-o", "json", "--lock-timeout", "30s")
				if r.code != 0 {
					t.Errorf("task add %s: exit %d, stderr %q", title, r.code, r.stderr)
					return
				}
				var tk pgTask
				if err := json.Unmarshal([]byte(r.stdout), &tk); err != nil {
					t.Errorf("task add %s printed %q", title, r.stdout)
					return
				}
				mu.Lock()
				if prev, dup := acked[tk.ID]; dup {
					t.Errorf("%s acknowledged for %q and %q", tk.ID, prev, title)
				}
				acked[tk.ID] = title
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if t.Failed() {
		return
	}
	if len(acked) != writers*each {
		t.Fatalf("%d tasks acknowledged, want %d", len(acked), writers*each)
	}
	var tasks []pgTask
	if err := json.Unmarshal([]byte(pgMust(t, dsn, "task", "ls", "-o", "json")), &tasks); err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for _, tk := range tasks {
		listed[tk.ID] = tk.Title
	}
	for id, title := range acked {
		if listed[id] != title {
			t.Errorf("acknowledged %s %q, listed as %q", id, title, listed[id])
		}
	}
	if len(tasks) != len(acked) {
		t.Errorf("%d tasks listed, want %d", len(tasks), len(acked))
	}
	head := pgHead(t, dsn)
	evs := pgEvents(t, dsn, head)

	// The watch: every event after head0, once each, in order.
	want := evs[head0:]
	var lines []string
	for deadline := time.Now().Add(30 * time.Second); ; {
		out := wout.String()
		lines = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if out == "" {
			lines = nil
		}
		if len(lines) >= len(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // anything past the last event would show now
	if err := watch.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-watched; err != nil {
		t.Errorf("watch after SIGTERM: %v, stderr %q", err, werr.String())
	}
	watched <- nil // for the deferred Kill
	lines = strings.Split(strings.TrimSuffix(wout.String(), "\n"), "\n")
	if len(lines) != len(want) {
		t.Errorf("watch printed %d events, want the %d after seq %d", len(lines), len(want), head0)
	}
	for i := range min(len(lines), len(want)) {
		var ev event
		if err := json.Unmarshal([]byte(lines[i]), &ev); err != nil {
			t.Fatalf("watch line %q: %v", lines[i], err)
		}
		if ev.Seq != want[i].Seq || ev.ID != want[i].ID {
			t.Fatalf("watch line %d: seq %d id %s, want seq %d id %s", i, ev.Seq, ev.ID, want[i].Seq, want[i].ID)
		}
	}
	t.Logf("%d processes x %d task adds in %v; head %d; the watch printed %d events", writers, each, elapsed.Round(time.Millisecond), head, len(lines))
}

// TestPostgres_MultiProcessIfVersion: 8 processes each set their own
// context key of one task to 1..5, each write a task show then a ctx set
// --if-version, again on a conflict (exit 4). No update is lost: the
// task's version grew by exactly the 40 writes, every key ends at 5, and
// ctx history holds each write once, each key's values in order.
func TestPostgres_MultiProcessIfVersion(t *testing.T) {
	const procs, each = 8, 5
	dsn := pgStore(t)
	pgMust(t, dsn, "task", "add", "contended")
	before := decodeJSON[pgTask](t, pgMust(t, dsn, "task", "show", "T-1", "-o", "json"))
	var mu sync.Mutex
	conflicts := 0
	var wg sync.WaitGroup
	for p := range procs {
		wg.Go(func() {
			dir := t.TempDir()
			key := fmt.Sprintf("p%d", p)
			for v := 1; v <= each; v++ {
				for attempt := 0; ; attempt++ {
					if attempt == 200 || t.Failed() {
						t.Errorf("%s=%d: not accepted in %d attempts", key, v, attempt)
						return
					}
					r := pgRun(t, dir, dsn, 0, "task", "show", "T-1", "-o", "json", "--lock-timeout", "30s")
					if r.code != 0 {
						t.Errorf("task show: exit %d, stderr %q", r.code, r.stderr)
						return
					}
					var tk pgTask
					if err := json.Unmarshal([]byte(r.stdout), &tk); err != nil {
						t.Errorf("task show printed %q", r.stdout)
						return
					}
					r = pgRun(t, dir, dsn, 0, "ctx", "set", "T-1", key, fmt.Sprint(v), "--if-version", fmt.Sprint(tk.Version), "--lock-timeout", "30s")
					if r.code == 0 {
						break
					}
					if r.code != 4 {
						t.Errorf("ctx set %s=%d: exit %d, stderr %q", key, v, r.code, r.stderr)
						return
					}
					mu.Lock()
					conflicts++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	after := decodeJSON[pgTask](t, pgMust(t, dsn, "task", "show", "T-1", "-o", "json"))
	if got := after.Version - before.Version; got != procs*each {
		t.Errorf("task version grew by %d, want the %d writes", got, procs*each)
	}
	if got := after.ContextVersion - before.ContextVersion; got != procs*each {
		t.Errorf("context version grew by %d, want the %d writes", got, procs*each)
	}
	for p := range procs {
		if v, _ := after.Context[fmt.Sprintf("p%d", p)].(float64); v != each {
			t.Errorf("context p%d = %v, want %d", p, after.Context[fmt.Sprintf("p%d", p)], each)
		}
	}
	history := decodeJSON[[]struct {
		Seq   uint64 `json:"seq"`
		Key   string `json:"key"`
		Value any    `json:"value"`
	}](t, pgMust(t, dsn, "ctx", "history", "T-1", "-o", "json"))
	last := map[string]float64{}
	var lastSeq uint64
	for _, h := range history {
		v, _ := h.Value.(float64)
		if h.Seq <= lastSeq || v != last[h.Key]+1 {
			t.Errorf("ctx history: seq %d %s=%v after %s=%v (seq %d): a write lost, repeated or out of order", h.Seq, h.Key, h.Value, h.Key, last[h.Key], lastSeq)
		}
		last[h.Key], lastSeq = v, h.Seq
	}
	if len(history) != procs*each {
		t.Errorf("ctx history holds %d writes, want %d", len(history), procs*each)
	}
	pgEvents(t, dsn, pgHead(t, dsn))
	t.Logf("%d processes x %d --if-version writes: %d conflicts retried", procs, each, conflicts)
}

// TestPostgres_MultiProcessKill: 4 writers add tasks, each command its own
// process, half of them sent SIGKILL at a random moment of their run.
// Every task a writer was told was added is there, once; the log has no
// gap; verify passes (a killed process's transaction is rolled back by
// the server when its connection drops).
func TestPostgres_MultiProcessKill(t *testing.T) {
	const writers, each = 4, 20
	dsn := pgStore(t)
	var mu sync.Mutex
	acked := map[string]string{}
	killed := 0
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			dir := t.TempDir()
			for i := range each {
				title := fmt.Sprintf("w%d-%d", w, i)
				var killAfter time.Duration
				if mrand.IntN(2) == 0 {
					killAfter = time.Duration(1+mrand.IntN(400)) * time.Millisecond
				}
				r := pgRun(t, dir, dsn, killAfter, "task", "add", title, "-o", "json", "--lock-timeout", "30s")
				mu.Lock()
				switch {
				case r.killed:
					killed++
				case r.code != 0:
					t.Errorf("task add %s: exit %d, stderr %q", title, r.code, r.stderr)
				default:
					var tk pgTask
					if err := json.Unmarshal([]byte(r.stdout), &tk); err != nil || tk.Title != title {
						t.Errorf("task add %s printed %q", title, r.stdout)
					} else if prev, dup := acked[tk.ID]; dup {
						t.Errorf("%s acknowledged for %q and %q", tk.ID, prev, title)
					} else {
						acked[tk.ID] = title
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	head := pgHead(t, dsn)
	pgEvents(t, dsn, head)
	var tasks []pgTask
	if err := json.Unmarshal([]byte(pgMust(t, dsn, "task", "ls", "-o", "json")), &tasks); err != nil {
		t.Fatal(err)
	}
	listed, titles := map[string]string{}, map[string]int{}
	for _, tk := range tasks {
		listed[tk.ID] = tk.Title
		titles[tk.Title]++
	}
	for id, title := range acked {
		if listed[id] != title {
			t.Errorf("acknowledged %s %q is listed as %q", id, title, listed[id])
		}
	}
	for title, n := range titles {
		if n > 1 {
			t.Errorf("task %q added %d times", title, n)
		}
	}
	t.Logf("%d task adds: %d acknowledged, %d killed, %d tasks stored (a killed one may have committed)", writers*each, len(acked), killed, len(tasks))
	if killed == 0 || len(acked) == 0 {
		t.Errorf("%d killed, %d acknowledged: the kills did not land mid-run", killed, len(acked))
	}
}
