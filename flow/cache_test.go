package flow

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/flowctl/flowctl/projection"
)

// runChildProcess runs the test binary as a second process doing action
// on the file at path.
func runChildProcess(t *testing.T, path, action string, env ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append(env, "FLOW_TEST_CHILD="+action, "FLOW_TEST_DB="+path)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child %s: %v\n%s", action, err, out)
	}
}

// openShared opens the file with a cache shared across opens, as a
// long-running process that opens the file per operation would.
func openShared(t testing.TB, path string, c *Cache, readOnly bool) *Engine {
	t.Helper()
	e, err := Open(path, Options{ReadOnly: readOnly, Create: !readOnly, NoSync: true, Actor: "tester", Cache: c})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestCache_SecondProcessWriteIsNeverServedStale(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flow.db")
	c := NewCache(64)
	e := openShared(t, path, c, false)
	if _, err := e.CreateProject(NewProject{Name: "p"}); err != nil {
		t.Fatal(err)
	}
	for _, title := range []string{"one", "two"} {
		if _, err := e.AddTask(NewTask{Project: "p", Title: title}); err != nil {
			t.Fatal(err)
		}
	}
	e.Close()

	read := func(id string) string {
		e := openShared(t, path, c, true)
		defer e.Close()
		task, err := e.Task("p", id)
		if err != nil {
			t.Fatal(err)
		}
		return task.Title + "/" + task.Status
	}
	// Fill the cache, then let another process change T-1 twice.
	if got := read("T-1"); got != "one/todo" {
		t.Fatalf("first read = %q", got)
	}
	read("T-2")
	if c.lru.Len() != 2 {
		t.Fatalf("cache holds %d entities, want 2 (T-1, T-2)", c.lru.Len())
	}
	runChildProcess(t, path, "retitle", "FLOW_TEST_TITLE=uno")
	if got := read("T-1"); got != "uno/todo" {
		t.Fatalf("after the other process retitled T-1, read %q, want uno/todo", got)
	}
	runChildProcess(t, path, "start")
	if got := read("T-1"); got != "uno/doing" {
		t.Fatalf("after the other process started T-1, read %q, want uno/doing", got)
	}
	// T-2 was not touched by the other process: it stays cached.
	head := c.lru.Head()
	if _, ok := c.lru.Get(head, taskKey("p", "T-2")); !ok {
		t.Error("T-2 was evicted although no event touched it")
	}
}

// TestCache_SharedEntitiesAreChecked: the cache shares the entities it
// returns; in a test binary it panics when a caller changed one.
func TestCache_SharedEntitiesAreChecked(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(task *projection.Task) (undo func())
	}{
		{"SetField", func(task *projection.Task) func() {
			task.Title = "changed by the caller"
			return func() { task.Title = "one" }
		}},
		{"SortInPlace", func(task *projection.Task) func() {
			slices.Sort(task.Tags)
			return func() { task.Tags[0], task.Tags[1] = "b", "a" }
		}},
		{"ClearPointer", func(task *projection.Task) func() {
			claim := task.Claim
			task.Claim = nil
			return func() { task.Claim = claim }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := openShared(t, filepath.Join(t.TempDir(), "flow.db"), newCache(64, true), false)
			defer e.Close()
			addTaskTagged(t, e, "b", "a")
			if _, err := e.ClaimTask(Claim{Project: "p", ID: "T-1"}); err != nil {
				t.Fatal(err)
			}
			task, err := e.Task("p", "T-1")
			if err != nil {
				t.Fatal(err)
			}
			undo := tc.change(task)
			msg := panicOf(func() { e.Task("p", "T-1") })
			if !strings.Contains(msg, "changed while the cache shared it") {
				t.Fatalf("a hit after the caller changed the task: panic %q, want the cache's", msg)
			}
			undo()
			if _, err := e.Task("p", "T-1"); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("PanicsOnClose", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "flow.db")
		e := openShared(t, path, newCache(64, true), false)
		addTaskTagged(t, e, "a")
		task, err := e.Task("p", "T-1")
		if err != nil {
			t.Fatal(err)
		}
		task.Priority = 9
		if msg := panicOf(func() { e.Close() }); !strings.Contains(msg, "changed while the cache shared it") {
			t.Fatalf("Close after a caller changed a task: panic %q, want the cache's", msg)
		}
		// Close released the file before it panicked.
		openShared(t, path, NewCache(64), false).Close()
	})
	t.Run("AppendGetsItsOwnArray", func(t *testing.T) {
		e := openShared(t, filepath.Join(t.TempDir(), "flow.db"), newCache(64, true), false)
		defer e.Close()
		addTaskTagged(t, e, "a", "b")
		first, err := e.Task("p", "T-1")
		if err != nil {
			t.Fatal(err)
		}
		mine := append(first.Tags, "mine")
		again, err := e.Task("p", "T-1")
		if err != nil {
			t.Fatal(err)
		}
		if again != first || !slices.Equal(again.Tags, []string{"a", "b"}) || mine[2] != "mine" {
			t.Fatalf("appending to a shared task's tags reached the cache: %v", again.Tags)
		}
	})
}

// addTaskTagged creates project p and its task T-1 with tags.
func addTaskTagged(t *testing.T, e *Engine, tags ...string) {
	t.Helper()
	if _, err := e.CreateProject(NewProject{Name: "p"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.AddTask(NewTask{Project: "p", Title: "one", Tags: tags}); err != nil {
		t.Fatal(err)
	}
}

// panicOf runs fn and returns the string it panicked with, "" if none.
func panicOf(fn func()) (msg string) {
	defer func() { msg, _ = recover().(string) }()
	fn()
	return ""
}

// BenchmarkEngine_TaskCacheHit reads a task the engine's cache holds: a
// realistic one, with steps, tags, deps and a context of about 400 bytes
// (as in flowbench), and a bare one.
func BenchmarkEngine_TaskCacheHit(b *testing.B) {
	for _, bc := range []struct {
		name string
		fill func(tb testing.TB, e *Engine) string
	}{{"Realistic", addRealisticTask}, {"Bare", addBareTask}} {
		b.Run(bc.name, func(b *testing.B) {
			// Without the check for changed entities a test binary turns on.
			e := openShared(b, filepath.Join(b.TempDir(), "flow.db"), newCache(DefaultCacheSize, false), false)
			defer e.Close()
			if _, err := e.CreateProject(NewProject{Name: "p"}); err != nil {
				b.Fatal(err)
			}
			id := bc.fill(b, e)
			if _, err := e.Task("p", id); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.Task("p", id); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func addBareTask(tb testing.TB, e *Engine) string { return addBareTaskTitled(tb, e, "one") }

// addRealisticTask adds a task with two deps, three tags, three steps and
// a context of about 400 bytes, and returns its id.
func addRealisticTask(tb testing.TB, e *Engine) string {
	var deps []string
	for _, title := range []string{"design the schema", "write the migration"} {
		deps = append(deps, addBareTaskTitled(tb, e, title))
	}
	t, err := e.AddTask(NewTask{Project: "p", Title: "ship the reporting endpoint",
		Description: "Serve the weekly report as JSON, paginated, behind the feature flag.",
		Deps:        deps, Owner: "alice", Tags: []string{"backend", "api", "q3"}, Priority: 2})
	if err != nil {
		tb.Fatal(err)
	}
	for _, title := range []string{"handler and routing", "pagination", "integration tests"} {
		if _, err := e.AddStep(NewStep{Project: "p", Task: t.ID, Title: title}); err != nil {
			tb.Fatal(err)
		}
	}
	patch := `{"branch":"feature/weekly-report-json","pr":"https://git.example.com/acme/web/pull/4711",` +
		`"endpoint":"/api/v2/reports/weekly","page_size":100,"flag":"reports.weekly_json",` +
		`"notes":"cursor pagination on (week, id); reuse the CSV exporter's query; cache for 5 minutes",` +
		`"reviewers":["bob","carol"],"done_when":"p95 under 150 ms on the staging data set"}`
	if _, err := e.MergeContext(ContextPatch{Project: "p", ID: t.ID, Patch: patch}); err != nil {
		tb.Fatal(err)
	}
	return t.ID
}

func addBareTaskTitled(tb testing.TB, e *Engine, title string) string {
	t, err := e.AddTask(NewTask{Project: "p", Title: title})
	if err != nil {
		tb.Fatal(err)
	}
	return t.ID
}

// TestCache_OwnWritesAreSeenAtOnce: while an engine holds the file a
// cache hit needs no transaction (heldHead); a write through the engine,
// from any goroutine, must still be seen by every read that starts after
// it returned.
func TestCache_OwnWritesAreSeenAtOnce(t *testing.T) {
	e := mustOpen(t)
	if _, err := e.CreateProject(NewProject{Name: "p"}); err != nil {
		t.Fatal(err)
	}
	const writers, edits = 4, 25
	for range writers {
		if _, err := e.AddTask(NewTask{Project: "p", Title: "t"}); err != nil {
			t.Fatal(err)
		}
	}
	errs := make(chan error, writers)
	for w := range writers {
		id := fmt.Sprintf("T-%d", w+1)
		go func() {
			for i := range edits {
				title := fmt.Sprintf("edit %d", i)
				if _, err := e.EditTask(TaskEdit{Project: "p", ID: id, Title: &title}); err != nil {
					errs <- err
					return
				}
				// Reads of the other tasks keep the cache warm and racing.
				for o := range writers {
					if _, err := e.Task("p", fmt.Sprintf("T-%d", o+1)); err != nil {
						errs <- err
						return
					}
				}
				if got, err := e.Task("p", id); err != nil || got.Title != title {
					errs <- fmt.Errorf("%s after writing %q reads %+v, %v", id, title, got, err)
					return
				}
			}
			errs <- nil
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func TestHeldHead(t *testing.T) {
	t.Run("UnknownAtFirst", func(t *testing.T) {
		var h heldHead
		if _, _, ok := h.current(); ok {
			t.Fatal("a new heldHead knows a head")
		}
	})
	t.Run("SetRecords", func(t *testing.T) {
		var h heldHead
		_, gen, _ := h.current()
		h.set(gen, 7)
		if head, _, ok := h.current(); !ok || head != 7 {
			t.Fatalf("current = %d, %v; want 7, true", head, ok)
		}
	})
	t.Run("SetAfterForgetIsRefused", func(t *testing.T) {
		var h heldHead
		_, gen, _ := h.current()
		h.set(gen, 7)
		_, gen, _ = h.current() // a read begins
		h.forget()              // a write begins...
		h.forget()              // ...and ends
		h.set(gen, 7)           // the read saw the head before the write
		if _, _, ok := h.current(); ok {
			t.Fatal("a read that began before a write recorded its head as current")
		}
		_, gen, _ = h.current()
		h.set(gen, 8)
		if head, _, ok := h.current(); !ok || head != 8 {
			t.Fatalf("current = %d, %v; want 8, true", head, ok)
		}
	})
	t.Run("ConcurrentForgetsAllCount", func(t *testing.T) {
		var h heldHead
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(2)
			go func() { // a reader records heads
				defer wg.Done()
				for i := range 1000 {
					_, gen, _ := h.current()
					h.set(gen, uint64(g*1000+i))
				}
			}()
			go func() { // a writer forgets before and after each commit
				defer wg.Done()
				for range 1000 {
					h.forget()
					h.forget()
				}
			}()
		}
		wg.Wait()
		_, gen, _ := h.current()
		if want := uint64(4 * 1000 * 2); gen != want {
			t.Fatalf("gen %d after %d forgets", gen, want)
		}
	})
}
