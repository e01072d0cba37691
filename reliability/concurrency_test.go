package reliability

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// procs is the number of concurrent flowctl processes of each test.
const procs = 8

// busyCheck fails the test if a busy exit (5) came before the lock timeout
// (or with any other message than busy), and counts busy exits.
type busyCheck struct {
	timeout time.Duration
	n       atomic.Int64
}

func (b *busyCheck) check(t *testing.T, args []string, r result) {
	if r.code != 5 {
		return
	}
	b.n.Add(1)
	if r.elapsed < b.timeout {
		t.Errorf("flowctl %v: busy after %v, before the lock timeout %v", args, r.elapsed, b.timeout)
	}
}

// TestConcurrency_IfVersionLosesNoUpdate: 8 processes each do N
// read-modify-writes of one task's context key (task show, then ctx set
// --if-version), while 2 readers read it. Every attempt is accepted or a
// conflict (exit 4); the task's context version and its version count
// exactly the accepted writes, 'ctx history' holds every accepted value
// and nothing else, and the log's seqs have no gap or duplicate.
// FLOW_CONC_WRITES sets N (default 200).
func TestConcurrency_IfVersionLosesNoUpdate(t *testing.T) {
	n := envInt(t, "FLOW_CONC_WRITES", 200)
	if testing.Short() {
		n = min(n, 20)
	}
	dir := newFile(t)
	before := decode[task](t, mustFlow(t, dir, "task", "show", "T-1"))
	busy := &busyCheck{timeout: 20 * time.Second}
	var accepted, conflicts atomic.Int64
	var mu sync.Mutex
	values := map[string]bool{} // the accepted values
	start := time.Now()
	done := make(chan struct{})
	var readers sync.WaitGroup
	var reads atomic.Int64
	for range 2 {
		readers.Go(func() { readLoop(t, dir, busy, done, &reads) })
	}
	var wg sync.WaitGroup
	for p := range procs {
		wg.Go(func() {
			for i := 0; i < n && !t.Failed(); i++ {
				value := fmt.Sprintf("p%d-%d", p, i)
				r := flow(t, dir, 0, "task", "show", "T-1")
				busy.check(t, []string{"task", "show"}, r)
				if r.code != 0 {
					t.Errorf("task show: exit %d, stderr %q", r.code, r.stderr)
					return
				}
				v := decode[task](t, r.stdout).Version
				args := []string{"ctx", "set", "T-1", "k", value, "--if-version", fmt.Sprint(v)}
				r = flow(t, dir, 0, args...)
				busy.check(t, args, r)
				switch r.code {
				case 0:
					accepted.Add(1)
					mu.Lock()
					values[value] = true
					mu.Unlock()
				case 4:
					conflicts.Add(1)
				case 5:
				default:
					t.Errorf("flowctl %v: exit %d, stderr %q", args, r.code, r.stderr)
				}
			}
		})
	}
	wg.Wait()
	close(done)
	readers.Wait()
	elapsed := time.Since(start)
	if t.Failed() {
		return
	}

	attempts := int64(procs * n)
	if got := accepted.Load() + conflicts.Load() + busy.n.Load(); got != attempts {
		t.Errorf("accepted %d + conflicts %d + busy %d = %d, want %d attempts", accepted.Load(), conflicts.Load(), busy.n.Load(), got, attempts)
	}
	after := decode[task](t, mustFlow(t, dir, "task", "show", "T-1"))
	if got := int64(after.ContextVersion - before.ContextVersion); got != accepted.Load() {
		t.Errorf("context version grew by %d, want the %d accepted writes", got, accepted.Load())
	}
	if got := int64(after.Version - before.Version); got != accepted.Load() {
		t.Errorf("task version grew by %d, want the %d accepted writes", got, accepted.Load())
	}
	history := decode[[]struct {
		Seq   uint64 `json:"seq"`
		Key   string `json:"key"`
		Value any    `json:"value"`
	}](t, mustFlow(t, dir, "ctx", "history", "T-1"))
	seen := map[string]bool{}
	for _, h := range history {
		s, _ := h.Value.(string)
		if h.Key != "k" || !values[s] || seen[s] {
			t.Errorf("ctx history: seq %d %s=%v was not accepted, or is there twice", h.Seq, h.Key, h.Value)
		}
		seen[s] = true
	}
	if len(seen) != len(values) {
		t.Errorf("ctx history holds %d of the %d accepted values: an update was lost", len(seen), len(values))
	}
	head := mustVerify(t, dir)
	events := mustEvents(t, dir, head)
	t.Logf("%d processes x %d read-modify-writes in %v: %d accepted, %d conflicts, %d busy; %d reads; %d events",
		procs, n, elapsed.Round(time.Millisecond), accepted.Load(), conflicts.Load(), busy.n.Load(), reads.Load(), len(events))
	if accepted.Load() == 0 || conflicts.Load() == 0 {
		t.Errorf("%d accepted, %d conflicts: the writers did not contend", accepted.Load(), conflicts.Load())
	}
}

// readLoop reads T-1 until done, checking that its version never goes back.
func readLoop(t *testing.T, dir string, busy *busyCheck, done <-chan struct{}, reads *atomic.Int64) {
	var last uint64
	for {
		select {
		case <-done:
			return
		default:
		}
		args := []string{"task", "show", "T-1"}
		r := flow(t, dir, 0, args...)
		busy.check(t, args, r)
		if r.code == 5 {
			continue
		}
		if r.code != 0 {
			t.Errorf("reader: task show: exit %d, stderr %q", r.code, r.stderr)
			return
		}
		tk := decode[task](t, r.stdout)
		if tk.Version < last {
			t.Errorf("reader saw T-1 at version %d after version %d", tk.Version, last)
		}
		last = tk.Version
		reads.Add(1)
	}
}

// TestConcurrency_TaskAddsAllPresent: 8 processes add tasks at once; every
// acknowledged task is in the file once, under its own T-n.
func TestConcurrency_TaskAddsAllPresent(t *testing.T) {
	perProc := envInt(t, "FLOW_CONC_TASKS", 25)
	dir := newFile(t)
	busy := &busyCheck{timeout: 20 * time.Second}
	start := time.Now()
	acked := addTasks(t, dir, perProc, busy)
	elapsed := time.Since(start)
	if t.Failed() {
		return
	}
	wantTasksListed(t, dir, acked)
	t.Logf("%d processes x %d task adds in %v: %d acknowledged, %d busy", procs, perProc, elapsed.Round(time.Millisecond), len(acked), busy.n.Load())
}

// addTasks has procs processes add perProc tasks each and returns the
// acknowledged ones, id -> title, failing t if an id is acknowledged
// twice. An exit 5 is checked by busy and skipped; without busy, every
// exit but 0 fails t.
func addTasks(t *testing.T, dir string, perProc int, busy *busyCheck) map[string]string {
	var mu sync.Mutex
	acked := map[string]string{}
	var wg sync.WaitGroup
	for p := range procs {
		wg.Go(func() {
			for i := range perProc {
				title := fmt.Sprintf("p%d-%d", p, i)
				args := []string{"task", "add", title}
				r := flow(t, dir, 0, args...)
				if busy != nil {
					busy.check(t, args, r)
					if r.code == 5 {
						continue
					}
				}
				if r.code != 0 {
					t.Errorf("flowctl %v: exit %d, stderr %q", args, r.code, r.stderr)
					return
				}
				id := decode[task](t, r.stdout).ID
				mu.Lock()
				if prev, dup := acked[id]; dup {
					t.Errorf("%s acknowledged for both %q and %q", id, prev, title)
				}
				acked[id] = title
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return acked
}

// wantTasksListed checks that the file lists exactly T-1 and the
// acknowledged tasks, each once, and verifies it.
func wantTasksListed(t *testing.T, dir string, acked map[string]string) {
	t.Helper()
	tasks := decode[[]task](t, mustFlow(t, dir, "task", "ls"))
	listed := map[string]string{}
	for _, tk := range tasks {
		if _, dup := listed[tk.ID]; dup {
			t.Errorf("%s listed twice", tk.ID)
		}
		listed[tk.ID] = tk.Title
	}
	for id, title := range acked {
		if listed[id] != title {
			t.Errorf("acknowledged %s %q, listed as %q", id, title, listed[id])
		}
	}
	if len(tasks) != len(acked)+1 {
		t.Errorf("%d tasks listed, want the %d acknowledged and T-1", len(tasks), len(acked))
	}
	head := mustVerify(t, dir)
	mustEvents(t, dir, head)
}

// TestConcurrency_BusyOnlyAfterLockTimeout: while another process holds
// the file's lock, a write waits the whole --lock-timeout and then exits 5
// (never sooner, never a hang); a write whose timeout outlasts the holder
// waits and succeeds. Then 8 processes with a 20ms lock timeout contend:
// each exit is 0 or 5, every busy exit came after the timeout, and the
// file counts exactly the successful writes.
func TestConcurrency_BusyOnlyAfterLockTimeout(t *testing.T) {
	dir := newFile(t)
	t.Run("HeldLock", func(t *testing.T) {
		f, err := os.OpenFile(filepath.Join(dir, "flow.db"), os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			t.Fatal(err)
		}
		const timeout = 300 * time.Millisecond
		for _, args := range [][]string{{"ctx", "set", "T-1", "k", "1"}, {"task", "show", "T-1"}} {
			r := runFlowctl(t, dir, 0, append(args, fileArgs(timeout)...)...)
			if r.code != 5 || r.elapsed < timeout {
				t.Errorf("flowctl %v with the lock held: exit %d after %v, want 5 after at least %v; stderr %q", args, r.code, r.elapsed, timeout, r.stderr)
			}
		}
		fd := int(f.Fd())
		released := make(chan struct{})
		go func() {
			defer close(released)
			time.Sleep(300 * time.Millisecond)
			_ = syscall.Flock(fd, syscall.LOCK_UN)
		}()
		r := runFlowctl(t, dir, 0, append([]string{"ctx", "set", "T-1", "k", "2"}, fileArgs(10*time.Second)...)...)
		<-released
		if r.code != 0 {
			t.Errorf("ctx set while the lock is held for 300ms with a 10s timeout: exit %d after %v, stderr %q", r.code, r.elapsed, r.stderr)
		}
	})
	t.Run("Contention", func(t *testing.T) {
		const timeout = 20 * time.Millisecond
		busy := &busyCheck{timeout: timeout}
		before := decode[task](t, mustFlow(t, dir, "task", "show", "T-1"))
		var ok atomic.Int64
		var wg sync.WaitGroup
		for p := range procs {
			wg.Go(func() {
				for i := range 30 {
					args := append([]string{"ctx", "set", "T-1", fmt.Sprintf("p%d", p), fmt.Sprint(i)}, fileArgs(timeout)...)
					r := runFlowctl(t, dir, 0, args...)
					busy.check(t, args, r)
					switch r.code {
					case 0:
						ok.Add(1)
					case 5:
					default:
						t.Errorf("flowctl %v: exit %d, stderr %q", args, r.code, r.stderr)
					}
				}
			})
		}
		wg.Wait()
		after := decode[task](t, mustFlow(t, dir, "task", "show", "T-1"))
		if got := int64(after.ContextVersion - before.ContextVersion); got != ok.Load() {
			t.Errorf("context version grew by %d, want the %d successful writes", got, ok.Load())
		}
		mustEvents(t, dir, mustVerify(t, dir))
		t.Logf("%d processes x 30 writes with a %v lock timeout: %d succeeded, %d busy", procs, timeout, ok.Load(), busy.n.Load())
	})
}

// TestConcurrency_CompactLosesNoWrite: while 8 processes add tasks,
// another compacts the file again and again, each time renaming a new
// file over the one the writers wait for. Every acknowledged task must be
// in the file at the end, once: a writer that waited on the replaced
// file must have opened the new one.
func TestConcurrency_CompactLosesNoWrite(t *testing.T) {
	perProc := envInt(t, "FLOW_CONC_TASKS", 25)
	dir := newFile(t)
	done := make(chan struct{})
	compactions := 0
	var compactor sync.WaitGroup
	compactor.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			if r := flow(t, dir, 0, "compact"); r.code != 0 {
				t.Errorf("compact: exit %d, stderr %q", r.code, r.stderr)
				return
			}
			compactions++
		}
	})
	acked := addTasks(t, dir, perProc, nil)
	close(done)
	compactor.Wait()
	if t.Failed() {
		return
	}
	if compactions < 2 {
		t.Fatalf("only %d compactions ran beside the writers", compactions)
	}
	wantTasksListed(t, dir, acked)
	t.Logf("%d processes x %d task adds beside %d compactions: %d acknowledged", procs, perProc, compactions, len(acked))
}
