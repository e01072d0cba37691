package digest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/internal/flowtest"
	"github.com/flowctl/flowctl/projection"
	"pgregory.net/rapid"
)

// TestStats_Oracle: Stats (titles from the status index, each command
// line split once) equals the statistics computed the plain way — every
// task decoded for its title, every record's command split — on random
// records, with a task renamed, at the head and at a point.
func TestStats_Oracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(16, 7))
	e := flowtest.Open(t)
	statusProject(t, e, "alpha")
	for i := 1; i <= 12; i++ {
		statusTask(t, e, "alpha", fmt.Sprint("task ", i))
	}
	commands := []string{"go test ./...", "go test -run X", "CGO=0 go build", `sh -c "echo hi"`, "make", "make lint", "", "  ", "'my tool' run"}
	var mid uint64
	for i := 1; i <= 120; i++ {
		x := projection.ExecRecorded{ID: projection.ShortID(projection.PrefixExec, i), Command: commands[rng.IntN(len(commands))],
			ElapsedMS: float64(rng.IntN(500))}
		if x.Command == "" && rng.IntN(2) == 0 {
			x.Code = "x = 1"
		}
		if n := rng.IntN(14); n <= 12 && n > 0 {
			x.Task = fmt.Sprint("T-", n)
		}
		if x.Success = rng.IntN(4) > 0; !x.Success {
			x.ExitCode = 1
		}
		statusExec(t, e, "alpha", x)
		if i == 60 {
			title := "renamed"
			if _, err := e.EditTask(flow.TaskEdit{Project: "alpha", ID: "T-3", Title: &title}); err != nil {
				t.Fatal(err)
			}
			if err := e.Read(func(r *flow.Reader) error { mid = r.Head(); return nil }); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, v := range []struct {
		name string
		e    *flow.Engine
	}{{"head", e}, {"at", e.At("alpha", flow.Point{Seq: mid})}} {
		got, err := Stats(v.e, "alpha", StatsOptions{Alpha: 0.4})
		if err != nil {
			t.Fatal(err)
		}
		var want *ExecStats
		err = v.e.Read(func(r *flow.Reader) error {
			execs, err := r.Execs("alpha")
			if err != nil {
				return err
			}
			tasks, err := r.Tasks("alpha")
			want = plainStats("alpha", 0.4, execs, tasks)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) || len(want.Tasks) < 10 {
			t.Errorf("%s:\n got %s\nwant %s", v.name, g, w)
		}
	}
}

// plainStats is computeStats as it was first written: on the exec
// records themselves, titles from the decoded tasks, CommandKey called
// for every record, sorted by seq (stable: execs come in id order).
func plainStats(project string, alpha float64, execs []*projection.Exec, tasks []*projection.Task) *ExecStats {
	titles := map[string]string{}
	for _, t := range tasks {
		titles[t.ID] = t.Title
	}
	byCommand := map[string][]*flow.ExecRow{}
	byTask := map[string][]*flow.ExecRow{}
	byTool := map[string][]*flow.ExecRow{}
	sorted := append([]*projection.Exec(nil), execs...)
	for i := 1; i < len(sorted); i++ { // insertion sort by seq: plain
		for j := i; j > 0 && sorted[j].Seq < sorted[j-1].Seq; j-- {
			sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
		}
	}
	var all []*flow.ExecRow
	for _, x := range sorted {
		key, tool := CommandKey(x)
		row := &flow.ExecRow{ID: x.ID, Seq: x.Seq, Task: x.Task, Command: x.Command, Code: x.Code != "", Success: x.Success, ElapsedMS: x.ElapsedMS}
		all = append(all, row)
		byCommand[key] = append(byCommand[key], row)
		byTask[x.Task] = append(byTask[x.Task], row)
		byTool[tool] = append(byTool[tool], row)
	}
	return &ExecStats{Project: project, Alpha: alpha, Prior: EWMAPrior, Total: outcomesOf(all),
		Commands: commandStats(byCommand), Tasks: plainTasks(byTask, titles), TaskCount: len(byTask), Tools: toolStats(byTool, alpha)}
}

// TestStats_SummaryOracle: Stats, which reads the exec summary, equals
// plainStats on the exec records themselves, on random histories of
// records, checkpoints and rollbacks (which remove records, and restore
// some at the rollback's seq), at the head, at a point, and after a
// rebuild.
func TestStats_SummaryOracle(t *testing.T) {
	dir := t.TempDir()
	runs := 0
	rapid.Check(t, func(t *rapid.T) {
		runs++
		e, err := flow.Open(filepath.Join(dir, fmt.Sprint(runs, ".db")), flow.Options{Create: true, NoSync: true, Actor: "ann", Now: flowtest.Clock()})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		mid := statsHistory(t, e)
		same := func(what string, e *flow.Engine) {
			got, err := Stats(e, "p", StatsOptions{Alpha: 0.4})
			if err != nil {
				t.Fatal(err)
			}
			var want *ExecStats
			err = e.Read(func(r *flow.Reader) error {
				execs, err := r.Execs("p")
				if err != nil {
					return err
				}
				tasks, err := r.Tasks("p")
				want = plainStats("p", 0.4, execs, tasks)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			if string(g) != string(w) {
				t.Fatalf("%s:\n got %s\nwant %s", what, g, w)
			}
			// TaskLimit: the first limit tasks of them all, counted and
			// titled alike, and how many there are.
			limit := rapid.IntRange(1, 4).Draw(t, "limit")
			lim, err := Stats(e, "p", StatsOptions{Alpha: 0.4, TaskLimit: limit})
			if err != nil {
				t.Fatal(err)
			}
			g, _ = json.Marshal(lim.Tasks)
			w, _ = json.Marshal(want.Tasks[:min(limit, len(want.Tasks))])
			if string(g) != string(w) || lim.TaskCount != len(want.Tasks) || got.TaskCount != len(want.Tasks) {
				t.Fatalf("%s, limit %d: %d tasks of %d (%d)\n got %s\nwant %s", what, limit, len(lim.Tasks), lim.TaskCount, len(want.Tasks), g, w)
			}
		}
		same("head", e)
		same("at", e.At("p", flow.Point{Seq: mid}))
		if _, err := e.Rebuild(); err != nil {
			t.Fatal(err)
		}
		same("rebuilt", e)
	})
}

// statsHistory writes a random history of exec records on project p and
// returns a seq in its middle.
func statsHistory(t *rapid.T, e *flow.Engine) (mid uint64) {
	must := func(err error) {
		if err != nil && (flow.ErrorCode(err) == flow.CodeInternal || flow.ErrorCode(err) == flow.CodeCorrupt) {
			t.Fatalf("%v", err)
		}
	}
	_, err := e.CreateProject(flow.NewProject{Name: "p"})
	must(err)
	for i := 1; i <= 3; i++ {
		_, err := e.AddTask(flow.NewTask{Project: "p", Title: fmt.Sprint("task ", i)})
		must(err)
	}
	checkpoints := 0
	steps := rapid.IntRange(1, 40).Draw(t, "steps")
	for i := range steps {
		if i == steps/2 {
			must(e.Read(func(r *flow.Reader) error { mid = r.Head(); return nil }))
		}
		switch rapid.IntRange(0, 9).Draw(t, "op") {
		case 0:
			if _, err := e.CreateCheckpoint(flow.NewCheckpoint{Project: "p"}); err == nil {
				checkpoints++
			}
		case 1:
			if checkpoints > 0 {
				_, err := e.Rollback(flow.RollbackInput{Project: "p", To: flow.Point{Checkpoint: fmt.Sprint("C-", rapid.IntRange(1, checkpoints).Draw(t, "to"))}})
				must(err)
			}
		default:
			x := flow.NewExec{Project: "p", Command: rapid.SampledFrom([]string{"go test ./...", "go build", "CGO=0 go vet", "make", "sh -c 'x y'", ""}).Draw(t, "command"),
				ElapsedMS: float64(rapid.IntRange(0, 900).Draw(t, "elapsed"))}
			if x.Command == "" {
				x.Code = "print(1)"
			}
			if n := rapid.IntRange(0, 3).Draw(t, "task"); n > 0 {
				x.Task = fmt.Sprint("T-", n)
			}
			x.ExitCode = rapid.IntRange(0, 1).Draw(t, "exit")
			x.Success = x.ExitCode == 0
			_, err := e.RecordExec(x)
			must(err)
		}
	}
	return mid
}

// plainTasks is each task's stats, by id, from its records.
func plainTasks(byTask map[string][]*flow.ExecRow, titles map[string]string) []TaskStats {
	ids := statsKeys(byTask)
	sortTaskIDs(ids)
	out := []TaskStats{}
	for _, id := range ids {
		out = append(out, TaskStats{Task: id, Title: titles[id], Outcomes: outcomesOf(byTask[id])})
	}
	return out
}
