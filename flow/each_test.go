package flow

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/projection"
	"pgregory.net/rapid"
)

// listProject fills a project with tasks, plans, approvals and exec
// records whose fields overlap as bytes (owner "ann" is in "anna", tag "a"
// in "ab", plan P-1 in P-10), so that the streamed lists' byte test lets
// through entities it must then refuse.
func listProject(t *rapid.T, e *Engine) {
	must := func(err error) {
		if err != nil && (ErrorCode(err) == CodeInternal || ErrorCode(err) == CodeCorrupt) {
			t.Fatalf("%v", err)
		}
	}
	_, err := e.CreateProject(NewProject{Name: "p"})
	must(err)
	for i := 0; i < 11; i++ {
		_, err := e.AddPlan(NewPlan{Project: "p", Title: fmt.Sprint("plan ", i)})
		must(err)
	}
	n := rapid.IntRange(0, 25).Draw(t, "tasks")
	for i := 1; i <= n; i++ {
		var deps []string
		for _, d := range rapid.SliceOfN(rapid.IntRange(1, max(i-1, 1)), 0, 2).Draw(t, "deps") {
			if d < i {
				deps = append(deps, projection.ShortID(projection.PrefixTask, d))
			}
		}
		_, err := e.AddTask(NewTask{Project: "p", Title: fmt.Sprint("task ", i), Deps: deps,
			Plan:  rapid.SampledFrom([]string{"", "P-1", "P-10", "P-11"}).Draw(t, "plan"),
			Owner: rapid.SampledFrom([]string{"", "ann", "anna", "bob"}).Draw(t, "owner"),
			Tags:  rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"a", "ab", "b"}), 0, 2, rapid.ID).Draw(t, "tags")})
		must(err)
		id := projection.ShortID(projection.PrefixTask, i)
		for _, to := range rapid.SliceOfN(rapid.SampledFrom([]string{"doing", "done", "blocked", "cancelled", "todo"}), 0, 2).Draw(t, "moves") {
			_, err := e.MoveTask(Move{Project: "p", ID: id, To: to, Force: true})
			must(err)
		}
		if rapid.Bool().Draw(t, "approval") {
			a, err := e.RequestApproval(NewApproval{Project: "p", Task: id, Message: "ok?"})
			must(err)
			if a != nil && rapid.Bool().Draw(t, "decide") {
				_, err := e.As("reviewer", "r1").DecideApproval(Decision{Project: "p", ID: a.ID, Grant: rapid.Bool().Draw(t, "grant")})
				must(err)
			}
		}
		if rapid.Bool().Draw(t, "exec") {
			code := rapid.IntRange(0, 1).Draw(t, "exit")
			_, err := e.RecordExec(NewExec{Project: "p", Task: id, Command: "make", ExitCode: code, Success: code == 0})
			must(err)
		}
	}
}

// TestEach_SameAsSlices checks the streamed lists against what the lists
// returned before they streamed: every entity of the project decoded,
// filtered, in id order.
func TestEach_SameAsSlices(t *testing.T) {
	dir := t.TempDir()
	runs := 0
	rapid.Check(t, func(t *rapid.T) {
		runs++
		e, err := Open(filepath.Join(dir, fmt.Sprint(runs, ".db")), Options{Create: true, NoSync: true, Actor: "ann", Now: fixedClock()})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		listProject(t, e)
		for i := 0; i < 10; i++ {
			tf := TaskFilter{
				Status: rapid.SampledFrom([]string{"", "todo", "doing", "done", "blocked", "cancelled"}).Draw(t, "status"),
				Plan:   rapid.SampledFrom([]string{"", "P-1", "P-10"}).Draw(t, "fplan"),
				Owner:  rapid.SampledFrom([]string{"", "ann", "anna"}).Draw(t, "fowner"),
				Tag:    rapid.SampledFrom([]string{"", "a", "ab"}).Draw(t, "ftag"),
			}
			task := rapid.SampledFrom([]string{"", "T-1", "T-2"}).Draw(t, "ftask")
			af := ApprovalFilter{Status: rapid.SampledFrom([]string{"", "pending", "granted", "denied"}).Draw(t, "astatus"), Task: task}
			xf := ExecFilter{Task: task, Failed: rapid.Bool().Draw(t, "failed")}
			checkSame(t, "Tasks", ids(e.Tasks("p", tf)), ids(oldList(e, func(src source) ([]*projection.Task, error) { return src.Tasks("p") }, tf.match)))
			if task == "" || !errors.Is(checkTask(e, task), ErrNotFound) {
				checkSame(t, "Approvals", ids(e.Approvals("p", af)), ids(oldList(e, func(src source) ([]*projection.Approval, error) { return src.Approvals("p") }, af.match)))
				checkSame(t, "Execs", ids(e.Execs("p", xf)), ids(oldList(e, func(src source) ([]*projection.Exec, error) { return src.Execs("p") }, func(x *projection.Exec) bool {
					return (xf.Task == "" || x.Task == xf.Task) && !(xf.Failed && x.Success)
				})))
			}
			if task != "" && checkTask(e, task) == nil {
				d, err := e.TaskDeps("p", task)
				if err != nil {
					t.Fatal(err)
				}
				old, err := oldList(e, func(src source) ([]*projection.Task, error) { return src.Tasks("p") }, func(o *projection.Task) bool { return slices.Contains(o.Deps, task) })
				checkSame(t, "TaskDeps", ids(d.Dependents, nil), ids(old, err))
			}
			checkReady(t, e, rapid.Bool().Draw(t, "all"))
		}
		checkSame(t, "Plans", ids(e.Plans("p")), ids(oldList(e, func(src source) ([]*projection.Plan, error) { return src.Plans("p") }, nil)))
	})
}

func checkTask(e *Engine, id string) error {
	_, err := e.Task("p", id)
	return err
}

// oldList is how the lists read before they streamed.
func oldList[T any](e *Engine, list func(src source) ([]*T, error), match func(*T) bool) ([]*T, error) {
	var out []*T
	err := e.read(func(src source) error {
		all, err := list(src)
		for _, v := range all {
			if match == nil || match(v) {
				out = append(out, v)
			}
		}
		return err
	})
	return out, err
}

// checkReady compares ReadyFor with its old reading: every task (or the
// todo ones) and the statuses of all of them.
func checkReady(t *rapid.T, e *Engine, all bool) {
	got, err := e.ReadyFor("p", "ann", all)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := oldList(e, func(src source) ([]*projection.Task, error) { return src.Tasks("p") }, nil)
	if err != nil {
		t.Fatal(err)
	}
	status := statusByID(tasks)
	var want []string
	for _, tk := range tasks {
		if !all && tk.Status != projection.StatusTodo {
			continue
		}
		reasons := notReady(tk, status, "ann", e.opts.Now())
		if len(reasons) == 0 || all {
			want = append(want, fmt.Sprint(tk.ID, reasons))
		}
	}
	var have []string
	for _, r := range got {
		have = append(have, fmt.Sprint(r.Task.ID, r.Reasons))
	}
	checkSame(t, fmt.Sprintf("ReadyFor(all=%v)", all), have, want)
}

func ids[T interface{ EntityID() string }](items []T, err error) []string {
	if err != nil {
		return []string{"error: " + err.Error()}
	}
	var out []string
	for _, v := range items {
		out = append(out, v.EntityID())
	}
	return out
}

func checkSame(t *rapid.T, what string, got, want []string) {
	if !slices.Equal(got, want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

// TestEachTask_Stop checks that ErrStop ends the walk with nil after what
// was taken, which is the list's first items.
func TestEachTask_Stop(t *testing.T) {
	e := mustOpen(t)
	if _, err := e.CreateProject(NewProject{Name: "p"}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 12; i++ {
		if _, err := e.AddTask(NewTask{Project: "p", Title: "t"}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := e.Tasks("p", TaskFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{1, 2, 10, 12} {
		var got []*projection.Task
		err := e.EachTask("p", TaskFilter{}, func(tk *projection.Task) error {
			if len(got) == limit {
				return ErrStop
			}
			got = append(got, tk)
			return nil
		})
		if err != nil {
			t.Fatalf("limit %d: %v", limit, err)
		}
		if g, w := fmt.Sprint(ids(got, nil)), fmt.Sprint(ids(all[:limit], nil)); g != w {
			t.Errorf("limit %d: got %s, want %s", limit, g, w)
		}
	}
	boom := errors.New("boom")
	if err := e.EachTask("p", TaskFilter{}, func(*projection.Task) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("an error of fn: got %v, want it returned", err)
	}
	if err := e.EachTask("nope", TaskFilter{}, func(*projection.Task) error { return nil }); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown project: got %v, want ErrNotFound", err)
	}
}

// TestEachID_AnyCounter checks that the index's ids come in id order
// whether EachID probes them by number (dense) or reads and sorts them
// (sparse), and whatever the counter says: ids past it (a counter set back)
// come after the others.
func TestEachID_AnyCounter(t *testing.T) {
	e := mustOpen(t)
	if _, err := e.CreateProject(NewProject{Name: "p"}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 30; i++ {
		if _, err := e.AddTask(NewTask{Project: "p", Title: "t"}); err != nil {
			t.Fatal(err)
		}
		to := map[int]string{0: "doing", 1: "blocked", 2: "cancelled"}[i%7]
		if i%11 == 0 {
			to = "done"
		}
		moves := []string{to}
		if to == "done" {
			moves = []string{"doing", "done"}
		}
		for _, to := range moves {
			if to == "" {
				continue
			}
			if _, err := e.MoveTask(Move{Project: "p", ID: projection.ShortID("T", i), To: to, Force: true}); err != nil {
				t.Fatal(err)
			}
		}
	}
	err := e.read(func(src source) error {
		tx := src.(*projstore.Tx)
		for _, status := range []string{"", "todo", "doing", "done", "blocked", "cancelled", "nosuch"} {
			want, err := tx.IndexIDs(projstore.BucketTasks, "p", status)
			if err != nil {
				return err
			}
			for last := 0; last <= 32; last++ {
				var got []string
				err := tx.EachID(projstore.BucketTasks, "p", status, projection.PrefixTask, last, appendTo(&got))
				if err != nil {
					return err
				}
				if !slices.Equal(got, want) {
					t.Errorf("status %q, last %d: got %v, want %v", status, last, got, want)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
