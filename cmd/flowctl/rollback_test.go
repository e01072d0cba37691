package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow"
)

func travelRollback(t *testing.T, stdout string) flow.RollbackResult {
	t.Helper()
	var r flow.RollbackResult
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("rollback -o json printed %q: %v", stdout, err)
	}
	return r
}

// travelState is what a rollback restores, as the CLI shows it: the
// tasks without the fields every event moves (version, seq, updated_at),
// and T-1's context.
func travelState(t *testing.T, f *flowFile) (tasks []map[string]any, ctx string) {
	t.Helper()
	if err := json.Unmarshal([]byte(f.mustRun("", "task", "ls", "-o", "json")), &tasks); err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		delete(task, "version")
		delete(task, "seq")
		delete(task, "updated_at")
	}
	return tasks, f.mustRun("", "ctx", "get", "T-1", "-o", "json")
}

func TestRollback_DryRun(t *testing.T) {
	t.Parallel()
	f := travelFixture(t)
	t.Run("TextShowsTheDiffAndTheWorld", func(t *testing.T) {
		before := f.bytes()
		got := f.mustRun("", "rollback", "--to", "C-1", "--dry-run")
		want := `~ task T-1 write the parser: context.branch "fix parser" -> main, context.files (none) -> ["a.go"], context.n 3 -> (none), status done -> doing
~ task T-2 write the tests: status doing -> todo
- task T-3 three
! approval A-1 ship it?: removed; the approval was granted and may have been acted on
! exec X-1 go test ./...: removed; the command ran and is not undone by a rollback
` + fmt.Sprintf("dry run: would roll back project p to seq %d; nothing appended\n", f.cp)
		if got != want {
			t.Errorf("rollback --dry-run printed\n%s\nwant\n%s", got, want)
		}
		if !bytes.Equal(before, f.bytes()) {
			t.Fatal("rollback --dry-run changed the file")
		}
	})
	t.Run("ToATime", func(t *testing.T) {
		var at string
		for _, ev := range f.logEvents() {
			if ev.Seq == f.cp {
				at = ev.Time
			}
		}
		r := travelRollback(t, f.mustRun("", "rollback", "--to", at, "--dry-run", "-o", "json"))
		if r.ToSeq != f.cp {
			t.Fatalf("rollback --to %s (the time of seq %d) resolved to seq %d", at, f.cp, r.ToSeq)
		}
	})
	t.Run("JSON", func(t *testing.T) {
		before := f.bytes()
		r := travelRollback(t, f.mustRun("", "rollback", "--to", "C-1", "--dry-run", "-o", "json"))
		if r.Applied || r.Seq != 0 || r.ToSeq != f.cp || r.Project != "p" {
			t.Fatalf("dry run = %+v, want not applied, to seq %d", r, f.cp)
		}
		world := map[string]bool{}
		for _, c := range r.Changes {
			if c.World != "" {
				world[c.Kind+" "+c.ID] = true
			}
		}
		if want := map[string]bool{"approval A-1": true, "exec X-1": true}; !reflect.DeepEqual(world, want) {
			t.Errorf("flagged as done in the world: %v, want %v", world, want)
		}
		if !bytes.Equal(before, f.bytes()) {
			t.Fatal("rollback --dry-run -o json changed the file")
		}
	})
}

func TestRollback_Apply(t *testing.T) {
	t.Parallel()
	f := travelFixture(t)
	r := travelRollback(t, f.mustRun("", "rollback", "--to", "C-1", "--reason", "wrong approach", "-o", "json"))
	if !r.Applied || r.ToSeq != f.cp || r.Seq != f.head+1 || len(r.Changes) != 5 {
		t.Fatalf("rollback = %+v, want applied at seq %d, to seq %d, 5 changes", r, f.head+1, f.cp)
	}
	t.Run("TaskShowsTheOldState", func(t *testing.T) {
		if got := showTask(t, f.flowFile, "T-1"); got.Status != "doing" {
			t.Errorf("T-1 status = %s, want doing", got.Status)
		}
		if got := showTask(t, f.flowFile, "T-2"); got.Status != "todo" {
			t.Errorf("T-2 status = %s, want todo", got.Status)
		}
		if got := f.mustRun("", "ctx", "get", "T-1", "-o", "json"); got != `{"branch":"main","files":["a.go"]}`+"\n" {
			t.Errorf("T-1 context = %s", got)
		}
		_, stderr, code := f.run("", "task", "show", "T-3")
		wantError(t, stderr, code, 3, "T-3")
	})
	t.Run("LogKeepsEverything", func(t *testing.T) {
		evs := f.logEvents()
		last := evs[f.head]
		if len(evs) <= int(f.head) || last.Type != "rollback.applied" || last.Seq != r.Seq {
			t.Fatalf("log has %s at seq %d (%d events), want rollback.applied at %d", last.Type, last.Seq, len(evs), r.Seq)
		}
		for _, ev := range evs[f.head+1:] {
			if ev.Type != "rollback.marked" || !strings.HasPrefix(ev.Stream, "task/p/") {
				t.Errorf("after the rollback: %s on %s, want only rollback.marked on the streams of the tasks it changed", ev.Type, ev.Stream)
			}
		}
		var data struct {
			ToSeq      uint64 `json:"to_seq"`
			Checkpoint string `json:"checkpoint"`
			Reason     string `json:"reason"`
		}
		if err := json.Unmarshal(last.Data, &data); err != nil || data.ToSeq != f.cp || data.Checkpoint != "C-1" || data.Reason != "wrong approach" {
			t.Errorf("rollback.applied data = %s (%v)", last.Data, err)
		}
	})
	t.Run("TextSaysWhatWasDone", func(t *testing.T) {
		out := f.mustRun("", "task", "start", "T-2")
		if !strings.Contains(out, "T-2") {
			t.Fatalf("task start printed %q", out)
		}
		head := f.headSeq()
		got := f.mustRun("", "rollback", "--to", "C-1")
		want := fmt.Sprintf("~ task T-2 write the tests: status doing -> todo\nrolled back project p to seq %d (event seq %d)\n", f.cp, head+1)
		if got != want {
			t.Errorf("rollback printed %q, want %q", got, want)
		}
	})
	t.Run("NothingToRollBack", func(t *testing.T) {
		before := f.bytes()
		head := f.headSeq()
		got := f.mustRun("", "rollback", "--to", "HEAD")
		if got != fmt.Sprintf("nothing to roll back: project p is as it was at seq %d\n", head) {
			t.Errorf("rollback to where it is printed %q", got)
		}
		dry := f.mustRun("", "rollback", "--to", "HEAD", "--dry-run")
		if !strings.HasPrefix(dry, "dry run: nothing to roll back") || strings.Count(dry, "\n") != 1 {
			t.Errorf("dry run to where it is printed %q", dry)
		}
		if !bytes.Equal(before, f.bytes()) {
			t.Error("a rollback with nothing to do changed the file")
		}
	})
	t.Run("Verify", func(t *testing.T) {
		if _, stderr, code := f.run("", "verify"); code != 0 {
			t.Fatalf("verify after rollbacks: exit %d: %s", code, stderr)
		}
	})
}

func TestRollback_OfARollbackRestoresTheStateBeforeIt(t *testing.T) {
	t.Parallel()
	f := travelFixture(t)
	wantTasks, wantCtx := travelState(t, f.flowFile)
	r := travelRollback(t, f.mustRun("", "rollback", "--to", "C-1", "-o", "json"))
	if gotTasks, _ := travelState(t, f.flowFile); reflect.DeepEqual(gotTasks, wantTasks) {
		t.Fatal("the rollback changed no task")
	}
	back := travelRollback(t, f.mustRun("", "rollback", "--to", fmt.Sprint(r.Seq-1), "-o", "json"))
	if !back.Applied || back.ToSeq != r.Seq-1 {
		t.Fatalf("rollback of the rollback = %+v", back)
	}
	gotTasks, gotCtx := travelState(t, f.flowFile)
	if !reflect.DeepEqual(gotTasks, wantTasks) {
		t.Errorf("tasks after rolling the rollback back:\n%v\nwant\n%v", gotTasks, wantTasks)
	}
	if gotCtx != wantCtx {
		t.Errorf("T-1 context = %s, want %s", gotCtx, wantCtx)
	}
	for _, id := range []string{"X-1", "A-1"} {
		kind := map[string]string{"X-1": "exec", "A-1": "approval"}[id]
		if _, stderr, code := f.run("", kind, "show", id); code != 0 {
			t.Errorf("%s %s is not back: exit %d: %s", kind, id, code, stderr)
		}
	}
	if d := travelDiff(t, f.mustRun("", "diff", fmt.Sprint(r.Seq-1), "HEAD", "-o", "json")); len(d.Changes) != 0 {
		t.Errorf("diff between the state before the first rollback and now: %q", changeKeys(d.Changes))
	}
}

func TestRollback_Task(t *testing.T) {
	t.Parallel()
	f := travelFixture(t)
	r := travelRollback(t, f.mustRun("", "rollback", "--to", "C-1", "--task", "t-2", "-o", "json"))
	if !r.Applied || r.Task != "T-2" {
		t.Fatalf("rollback --task T-2 = %+v", r)
	}
	if got := showTask(t, f.flowFile, "T-2"); got.Status != "todo" {
		t.Errorf("T-2 status = %s, want todo", got.Status)
	}
	if got := showTask(t, f.flowFile, "T-1"); got.Status != "done" {
		t.Errorf("a rollback of T-2 moved T-1 to %s", got.Status)
	}
	if got := showTask(t, f.flowFile, "T-3"); got.Title != "three" {
		t.Errorf("a rollback of T-2 touched T-3: %+v", got)
	}
}

func TestRollback_BadInput(t *testing.T) {
	t.Parallel()
	f := travelFixture(t)
	past := fmt.Sprint(f.head + 1)
	for _, tc := range []struct {
		name string
		code int
		args []string
	}{
		{"MissingTo", 2, []string{"rollback"}},
		{"MissingToDryRun", 2, []string{"rollback", "--dry-run"}},
		{"EmptyTo", 2, []string{"rollback", "--to", ""}},
		{"BadPoint", 2, []string{"rollback", "--to", "last tuesday"}},
		{"UnknownCheckpoint", 3, []string{"rollback", "--to", "C-9"}},
		{"UnknownCheckpointDryRun", 3, []string{"rollback", "--to", "C-9", "--dry-run"}},
		{"SeqPastHead", 2, []string{"rollback", "--to", past}},
		{"TaskCreatedAfterThePoint", 4, []string{"rollback", "--to", "C-1", "--task", "T-3"}},
		{"TaskCreatedAfterThePointDryRun", 4, []string{"rollback", "--to", "C-1", "--task", "T-3", "--dry-run"}},
		{"UnknownTask", 3, []string{"rollback", "--to", "C-1", "--task", "T-99"}},
		{"BadTaskID", 2, []string{"rollback", "--to", "C-1", "--task", "three"}},
		{"UnknownFlag", 2, []string{"rollback", "--to", "C-1", "--force"}},
		{"ExtraArgument", 2, []string{"rollback", "C-1"}},
		{"StaleIfVersion", 4, []string{"rollback", "--to", "C-1", "--if-version", "1"}},
		{"ReasonTooLong", 2, []string{"rollback", "--to", "C-1", "--reason", strings.Repeat("x", flow.MaxText+1)}},
	} {
		t.Run(tc.name, func(t *testing.T) { travelUnchanged(t, f.flowFile, tc.code, tc.args...) })
	}
	t.Run("JSONError", func(t *testing.T) {
		_, stderr, code := f.run("", "rollback", "--to", "C-1", "--task", "T-3", "-o", "json")
		wantJSONError(t, stderr, code, 4, string(flow.CodeConflict))
	})
}

// TestRollback_MovesVersionsForward: a writer that read a task before a
// rollback of the project cannot overwrite the restored state with the
// version it read, and the task's stream shows the rollback.
func TestRollback_MovesVersionsForward(t *testing.T) {
	t.Parallel()
	f := travelFixture(t)
	before := showTask(t, f.flowFile, "T-1")
	r := travelRollback(t, f.mustRun("", "rollback", "--to", "C-1", "-o", "json"))
	after := showTask(t, f.flowFile, "T-1")
	if after.Version <= before.Version {
		t.Fatalf("T-1 is at version %d after the rollback, %d before it", after.Version, before.Version)
	}
	_, stderr, code := f.run("", "task", "edit", "T-1", "--title", "stale", "--if-version", fmt.Sprint(before.Version))
	wantError(t, stderr, code, 4, "version")
	if got := showTask(t, f.flowFile, "T-1"); got.Title != "write the parser" {
		t.Fatalf("a stale writer changed the restored title to %q", got.Title)
	}
	evs := f.logEvents("--stream", "task/p/T-1")
	last := evs[len(evs)-1]
	if last.Type != "rollback.marked" || last.Version != after.Version || last.Seq <= r.Seq {
		t.Fatalf("the last event of task/p/T-1 is %s (version %d, seq %d), want rollback.marked at version %d after seq %d",
			last.Type, last.Version, last.Seq, after.Version, r.Seq)
	}
	f.mustRun("", "task", "edit", "T-1", "--title", "fresh", "--if-version", fmt.Sprint(after.Version))
}

// TestRollback_PointsBeforeTheScope: a point before the project's first
// event (or, with --task, the task's) is refused with the seq of that
// event, and leaves the file as it was; a rollback never prints the
// removal of a project that stays. --at such a point says the project
// did not exist yet.
func TestRollback_PointsBeforeTheScope(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "a")
	f.mustRun("", "task", "add", "one")
	f.mustRun("", "checkpoint")
	f.mustRun("", "project", "new", "b")
	begins := fmt.Sprintf("seq %d", f.headSeq())
	f.mustRun("", "--project", "b", "task", "add", "two")
	f.mustRun("", "--project", "b", "task", "add", "three")
	three := fmt.Sprintf("seq %d", f.headSeq())
	before := f.bytes()
	for _, tc := range []struct {
		name  string
		code  int
		args  []string
		facts []string
	}{
		{"SeqZero", 4, []string{"rollback", "--to", "0"}, []string{"project b", begins}},
		{"SeqZeroDryRun", 4, []string{"rollback", "--to", "0", "--dry-run"}, []string{"project b", begins}},
		{"SeqOfAnotherProjectBefore", 4, []string{"rollback", "--to", "2"}, []string{"project b", begins}},
		{"TimeBeforeEverything", 4, []string{"rollback", "--to", "1970-01-01T00:00:00Z"}, []string{"project b", begins}},
		{"TaskBeforeIt", 4, []string{"rollback", "--to", strings.TrimPrefix(begins, "seq "), "--task", "T-2"}, []string{"task T-2", three}},
		{"SeqPastHead", 2, []string{"rollback", "--to", "99"}, []string{"99"}},
		{"CheckpointOfAnotherProject", 3, []string{"rollback", "--to", "C-1"}, []string{"C-1", "project b"}},
		{"AtBeforeTheProject", 3, []string{"task", "ls", "--at", "2"}, []string{"project b", begins}},
		{"DiffPastHead", 2, []string{"diff", "0", "99"}, []string{"99"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := f.run("", append([]string{"--project", "b"}, tc.args...)...)
			wantError(t, stderr, code, tc.code, tc.facts...)
			if stdout != "" {
				t.Errorf("printed %q on stdout", stdout)
			}
		})
	}
	if !bytes.Equal(before, f.bytes()) {
		t.Fatal("a refused point changed the file")
	}
	t.Run("DiffDescribesThePointAsItIs", func(t *testing.T) {
		got := f.mustRun("", "--project", "b", "diff", "0")
		if !strings.Contains(got, "+ project b\n") || strings.Contains(got, "- ") {
			t.Errorf("diff 0 printed %q, want project b and its tasks added", got)
		}
	})
}
