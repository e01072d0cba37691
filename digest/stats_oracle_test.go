package digest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/internal/flowtest"
	"github.com/flowctl/flowctl/projection"
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

// plainStats is computeStats as it was first written: titles from the
// decoded tasks, CommandKey called for every record.
func plainStats(project string, alpha float64, execs []*projection.Exec, tasks []*projection.Task) *ExecStats {
	titles := map[string]string{}
	for _, t := range tasks {
		titles[t.ID] = t.Title
	}
	byCommand := map[string][]*projection.Exec{}
	byTask := map[string][]*projection.Exec{}
	byTool := map[string][]*projection.Exec{}
	sorted := append([]*projection.Exec(nil), execs...)
	for i := 1; i < len(sorted); i++ { // insertion sort by seq: plain
		for j := i; j > 0 && sorted[j].Seq < sorted[j-1].Seq; j-- {
			sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
		}
	}
	for _, x := range sorted {
		key, tool := CommandKey(x)
		byCommand[key] = append(byCommand[key], x)
		byTask[x.Task] = append(byTask[x.Task], x)
		byTool[tool] = append(byTool[tool], x)
	}
	return &ExecStats{Project: project, Alpha: alpha, Prior: EWMAPrior, Total: outcomesOf(sorted),
		Commands: commandStats(byCommand), Tasks: taskStats(byTask, titles), Tools: toolStats(byTool, alpha)}
}
