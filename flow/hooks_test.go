//go:build unix

package flow

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow/store"
	"pgregory.net/rapid"
)

// hookedEngine opens a new file whose engine runs the hooks of dir/.flow/hooks,
// and collects its warnings.
type hookedEngine struct {
	*Engine
	dir, path string
	mu        sync.Mutex
	warnings  []string
}

func openHooked(t *testing.T, h Hooks) *hookedEngine {
	t.Helper()
	dir := t.TempDir()
	he := &hookedEngine{dir: dir, path: filepath.Join(dir, DefaultDir, DefaultFile)}
	e, err := Open(he.path, Options{Create: true, NoSync: true, Actor: "tester", Session: "s1", Now: fixedClock(),
		Hooks: &h, Warn: func(msg string) { he.mu.Lock(); he.warnings = append(he.warnings, msg); he.mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := e.Verify(); err != nil {
			t.Errorf("Verify on cleanup: %v", err)
		}
		e.Close()
	})
	he.Engine = e
	if _, err := e.CreateProject(NewProject{Name: "p"}); err != nil {
		t.Fatal(err)
	}
	return he
}

// hook writes an executable hook script at name below the hooks directory.
func (he *hookedEngine) hook(t *testing.T, name, script string) string {
	t.Helper()
	p := filepath.Join(he.dir, DefaultDir, "hooks", filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	he.hooks = nil // found again at the next command
	return p
}

func (he *hookedEngine) sum(t *testing.T) [32]byte {
	t.Helper()
	b, err := os.ReadFile(he.path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func (he *hookedEngine) tasks(t *testing.T) int {
	t.Helper()
	p, err := he.Project("p")
	if err != nil {
		t.Fatal(err)
	}
	return p.Counters.Tasks
}

func TestHooks_Allow(t *testing.T) {
	he := openHooked(t, Hooks{})
	out := filepath.Join(he.dir, "in.jsonl")
	envOut := filepath.Join(he.dir, "env")
	he.hook(t, "pre-commit", "cat > "+out+"; env | grep '^FLOW_' | sort > "+envOut)
	task, err := he.AddTask(NewTask{Project: "p", Title: "allowed"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var line struct {
		API    int             `json:"api"`
		Hook   string          `json:"hook"`
		Event  map[string]any  `json:"event"`
		Before json.RawMessage `json:"before"`
		After  map[string]any  `json:"after"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(b), &line); err != nil {
		t.Fatalf("input %q: %v", b, err)
	}
	if line.API != 1 || line.Hook != "pre-commit" || line.Event["type"] != "task.created" || string(line.Before) != "null" ||
		line.After["title"] != "allowed" || line.After["id"] != task.ID {
		t.Errorf("input = %s", b)
	}
	for _, absent := range []string{"seq", "hash", "prev_hash", "id"} {
		if _, ok := line.Event[absent]; ok {
			t.Errorf("pre-commit event has %q: %s", absent, b)
		}
	}
	env, _ := os.ReadFile(envOut)
	for _, want := range []string{"FLOW_ACTOR=tester", "FLOW_DB=" + he.path, "FLOW_HOOK=pre-commit", "FLOW_HOOK_DEPTH=1",
		"FLOW_PROJECT=p", "FLOW_SESSION=s1", "FLOW_HOOK_RUN="} {
		if !strings.Contains(string(env), want) {
			t.Errorf("hook env lacks %s:\n%s", want, env)
		}
	}
	if he.tasks(t) != 1 {
		t.Errorf("tasks = %d, want 1", he.tasks(t))
	}
}

// wantRefused checks that err is a veto naming what, and that the file is
// byte for byte as it was (before).
func (he *hookedEngine) wantRefused(t *testing.T, err error, before [32]byte, what ...string) {
	t.Helper()
	if !errors.Is(err, ErrVetoed) || ErrorCode(err) != CodeVetoed {
		t.Fatalf("err = %v, want ErrVetoed", err)
	}
	for _, w := range what {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("err = %q, want it to name %q", err, w)
		}
	}
	if he.sum(t) != before {
		t.Error("the file changed after a veto")
	}
	if n := he.tasks(t); n != 0 {
		t.Errorf("tasks = %d after a veto, want 0", n)
	}
}

func TestHooks_Refused(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		timeout      time.Duration
		want         []string
	}{
		{"Veto", "cat >/dev/null; echo 'no tasks on Fridays' >&2; echo second line >&2; exit 2", 0,
			[]string{"pre-commit.d/10-policy vetoed: no tasks on Fridays"}},
		{"VetoSilent", "exit 2", 0, []string{"vetoed: no reason given"}},
		{"ExitOther", "echo oops >&2; exit 1", 0, []string{"pre-commit.d/10-policy failed: exit status 1", "oops"}},
		{"Crash", "kill -SEGV $$", 0, []string{"pre-commit.d/10-policy failed: killed by signal 11"}},
		{"Timeout", "sleep 30", 200 * time.Millisecond, []string{"pre-commit.d/10-policy failed: timed out after 200ms"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			he := openHooked(t, Hooks{Timeout: tc.timeout})
			he.hook(t, "pre-commit.d/10-policy", tc.script)
			before := he.sum(t)
			_, err := he.AddTask(NewTask{Project: "p", Title: "refused"})
			he.wantRefused(t, err, before, tc.want...)
		})
	}
}

// TestHooks_TimeoutKillsGroup: a hook that times out is killed with every
// process it started.
func TestHooks_TimeoutKillsGroup(t *testing.T) {
	he := openHooked(t, Hooks{Timeout: 300 * time.Millisecond})
	pidFile := filepath.Join(he.dir, "child.pid")
	he.hook(t, "pre-commit", "sleep 60 & echo $! > "+pidFile+"; wait")
	before := he.sum(t)
	start := time.Now()
	_, err := he.AddTask(NewTask{Project: "p", Title: "slow"})
	he.wantRefused(t, err, before, "timed out")
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the command took %s", d)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the hook's child %d outlived the timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive reports whether process pid runs (a zombie does not).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc: trust kill
	}
	_, rest, _ := bytes.Cut(b, []byte(") "))
	return len(rest) == 0 || rest[0] != 'Z'
}

// TestHooks_Order: the plain hook runs first, then the directory's in
// name order; the first refusal stops the rest.
func TestHooks_Order(t *testing.T) {
	he := openHooked(t, Hooks{})
	log := filepath.Join(he.dir, "order")
	he.hook(t, "pre-commit", "echo plain >> "+log)
	he.hook(t, "pre-commit.d/20-b", "echo b >> "+log+"; exit 2")
	he.hook(t, "pre-commit.d/10-a", "echo a >> "+log)
	he.hook(t, "pre-commit.d/30-c", "echo c >> "+log)
	he.hook(t, "pre-commit.d/.hidden", "echo hidden >> "+log)
	before := he.sum(t)
	_, err := he.AddTask(NewTask{Project: "p", Title: "x"})
	he.wantRefused(t, err, before, "20-b")
	if b, _ := os.ReadFile(log); string(b) != "plain\na\nb\n" {
		t.Errorf("ran %q, want plain, a, b", b)
	}
}

// TestHooks_Untrusted: a hook file others could change does not run; a
// warning names it and the command goes on without it.
func TestHooks_Untrusted(t *testing.T) {
	he := openHooked(t, Hooks{})
	p := he.hook(t, "pre-commit", "exit 2")
	if err := os.Chmod(p, 0o775); err != nil {
		t.Fatal(err)
	}
	if _, err := he.AddTask(NewTask{Project: "p", Title: "x"}); err != nil {
		t.Fatalf("AddTask: %v", err)
	}
	if len(he.warnings) == 0 || !strings.Contains(he.warnings[0], p) || !strings.Contains(he.warnings[0], "writable by group or others") {
		t.Errorf("warnings = %q, want one naming %s", he.warnings, p)
	}
	p2 := he.hook(t, "pre-commit", "exit 2")
	if err := os.Chmod(p2, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := he.AddTask(NewTask{Project: "p", Title: "y"}); err != nil {
		t.Fatalf("AddTask: %v", err)
	}
	if w := he.warnings[len(he.warnings)-1]; !strings.Contains(w, "not executable") {
		t.Errorf("warning = %q, want 'not executable'", w)
	}
}

// TestHooks_PostCommit: post-commit hooks get the committed events with
// their seq and hash; their failure is only a warning.
func TestHooks_PostCommit(t *testing.T) {
	he := openHooked(t, Hooks{})
	out := filepath.Join(he.dir, "post.jsonl")
	he.hook(t, "post-commit", "cat > "+out+"; exit 2")
	task, err := he.AddTask(NewTask{Project: "p", Title: "posted"})
	if err != nil {
		t.Fatalf("AddTask: %v (a post-commit failure must not fail the command)", err)
	}
	b, _ := os.ReadFile(out)
	var line struct {
		Hook   string          `json:"hook"`
		Event  Event           `json:"event"`
		Before json.RawMessage `json:"before"`
		After  map[string]any  `json:"after"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(b), &line); err != nil {
		t.Fatalf("input %q: %v", b, err)
	}
	evs := collect(t, he.Engine, Filter{})
	last := evs[len(evs)-1]
	if line.Hook != "post-commit" || line.Event.Seq != last.Seq || line.Event.Hash != last.Hash || line.Event.Hash == "" ||
		line.After["id"] != task.ID || string(line.Before) != "null" {
		t.Errorf("post-commit input = %s; last event seq %d hash %s", b, last.Seq, last.Hash)
	}
	if len(he.warnings) != 1 || !strings.Contains(he.warnings[0], "post-commit hook post-commit vetoed") {
		t.Errorf("warnings = %q", he.warnings)
	}
}

// TestHooks_Skip: --no-hooks runs none and marks the events.
func TestHooks_Skip(t *testing.T) {
	he := openHooked(t, Hooks{Skip: true})
	he.hook(t, "pre-commit", "exit 2")
	if _, err := he.AddTask(NewTask{Project: "p", Title: "x"}); err != nil {
		t.Fatal(err)
	}
	for _, ev := range collect(t, he.Engine, Filter{}) {
		if ev.Session != "s1 [no-hooks]" {
			t.Errorf("event %d session = %q, want %q", ev.Seq, ev.Session, "s1 [no-hooks]")
		}
	}
}

// TestHooks_InsideHook: an engine inside a hook runs no hook and marks its
// events with the hook and its run.
func TestHooks_InsideHook(t *testing.T) {
	run := store.NewID(time.Now())
	he := openHooked(t, Hooks{Depth: 1, Hook: "pre-commit.d/10-x", Run: run})
	he.hook(t, "pre-commit", "exit 2")
	if _, err := he.AddTask(NewTask{Project: "p", Title: "x"}); err != nil {
		t.Fatal(err)
	}
	evs := collect(t, he.Engine, Filter{})
	ev := evs[len(evs)-1]
	if ev.Session != "s1 [hook:pre-commit.d/10-x]" || ev.Correlation != run.String() {
		t.Errorf("event session %q correlation %q", ev.Session, ev.Correlation)
	}
}

// TestHooks_OthersWriteMeanwhile: when another writer appends while the
// pre-commit hook runs, the command is computed and asked about again.
func TestHooks_OthersWriteMeanwhile(t *testing.T) {
	he := openHooked(t, Hooks{})
	count := filepath.Join(he.dir, "count")
	started, done := filepath.Join(he.dir, "started"), filepath.Join(he.dir, "done")
	he.hook(t, "pre-commit", "echo x >> "+count+"; touch "+started+
		"; i=0; while [ ! -f "+done+" ] && [ $i -lt 200 ]; do sleep 0.02; i=$((i+1)); done")
	errc := make(chan error, 1)
	go func() { // the other writer: once the hook runs, it adds a task
		for {
			if _, err := os.Stat(started); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		e2, err := Open(he.path, Options{NoSync: true, Actor: "other"})
		if err == nil {
			_, err = e2.AddTask(NewTask{Project: "p", Title: "other's"})
			e2.Close()
		}
		os.WriteFile(done, nil, 0o644)
		errc <- err
	}()
	task, err := he.AddTask(NewTask{Project: "p", Title: "mine"})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(count); string(b) != "x\nx\n" {
		t.Errorf("the hook ran %d times, want 2 (asked again after the other write)", bytes.Count(b, []byte("x")))
	}
	if task.ID != "T-2" || he.tasks(t) != 2 {
		t.Errorf("task %s, %d tasks; want T-2 of 2", task.ID, he.tasks(t))
	}
}

// TestHooks_BusyAfterRounds: when someone else writes every time the
// hook runs, the command gives up after maxHookRounds with ErrBusy and
// appends nothing of its own.
func TestHooks_BusyAfterRounds(t *testing.T) {
	he := openHooked(t, Hooks{})
	ran := filepath.Join(he.dir, "ran")
	// Each run: say so, and wait until the other writer has written.
	he.hook(t, "pre-commit", "cat >/dev/null; touch "+ran+"; i=0; while [ -f "+ran+" ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i+1)); done")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	writes := 0
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := os.Stat(ran); err != nil {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			e2, err := Open(he.path, Options{NoSync: true, Actor: "other"})
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := e2.AddTask(NewTask{Project: "p", Title: "other's"}); err != nil {
				t.Error(err)
			}
			e2.Close()
			writes++
			os.Remove(ran)
		}
	}()
	_, err := he.AddTask(NewTask{Project: "p", Title: "mine"})
	close(stop)
	wg.Wait()
	if !errors.Is(err, store.ErrBusy) {
		t.Fatalf("err = %v, want ErrBusy", err)
	}
	if writes != maxHookRounds || he.tasks(t) != maxHookRounds {
		t.Errorf("%d writes by the other, %d tasks; want %d of each", writes, he.tasks(t), maxHookRounds)
	}
}

// TestHooks_Batch: a batch's commands are one command to the hooks: they
// see all its events at once, and a veto leaves none.
func TestHooks_Batch(t *testing.T) {
	he := openHooked(t, Hooks{})
	out := filepath.Join(he.dir, "in.jsonl")
	he.hook(t, "pre-commit", "cat > "+out+"; exit 2")
	before := he.sum(t)
	err := he.Batch(func(b *Engine) error {
		if _, err := b.AddTask(NewTask{Project: "p", Title: "one"}); err != nil {
			return err
		}
		_, err := b.AddTask(NewTask{Project: "p", Title: "two"})
		return err
	})
	he.wantRefused(t, err, before, "vetoed")
	if b, _ := os.ReadFile(out); bytes.Count(b, []byte("\n")) != 2 {
		t.Errorf("the hook saw %q, want the batch's two events", b)
	}
}

// TestHooks_VetoProperty: for any sequence of task additions, a policy
// hook that vetoes some leaves exactly the allowed tasks, in order, and
// every veto leaves the file byte for byte as it was.
func TestHooks_VetoProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		he := openHooked(t, Hooks{})
		he.hook(t, "pre-commit", `grep -q '"title":"no' && { echo refused >&2; exit 2; }; exit 0`)
		titles := rapid.SliceOfN(rapid.SampledFrom([]string{"yes", "no", "yes too", "no way"}), 1, 6).Draw(rt, "titles")
		var want []string
		for _, title := range titles {
			before := he.sum(t)
			_, err := he.AddTask(NewTask{Project: "p", Title: title})
			if strings.HasPrefix(title, "no") {
				if !errors.Is(err, ErrVetoed) || he.sum(t) != before {
					rt.Fatalf("%q: err %v, file changed %v", title, err, he.sum(t) != before)
				}
				continue
			}
			if err != nil {
				rt.Fatalf("%q: %v", title, err)
			}
			want = append(want, title)
		}
		tasks, err := he.Tasks("p", TaskFilter{})
		if err != nil {
			rt.Fatal(err)
		}
		var got []string
		for _, task := range tasks {
			got = append(got, task.Title)
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			rt.Fatalf("tasks %q, want %q", got, want)
		}
	})
}
