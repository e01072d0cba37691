package digest

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
	"pgregory.net/rapid"
)

// reportTaskFull is ReportTask as it was before it read the task's own
// stream: every approval and exec record of the project, filtered by
// task. It is the oracle of TestProperty_ReportsEqualFullReads.
func reportTaskFull(e *flow.Engine, project, id string) (*TaskReport, error) {
	r := &TaskReport{Project: project}
	err := e.Read(func(src *flow.Reader) error {
		r.HeadSeq = src.Head()
		if _, err := src.Project(project); err != nil {
			return err
		}
		t, err := src.Task(project, id)
		if err != nil {
			return err
		}
		r.Task, r.Deps = t, []flow.TaskBrief{}
		for _, d := range t.Deps {
			dt, err := src.Task(project, d)
			if err != nil {
				return err
			}
			r.Deps = append(r.Deps, flow.BriefOf(dt))
		}
		approvals, err := src.Approvals(project)
		r.Approvals = keepIf(approvals, func(a *projection.Approval) bool { return a.Task == id })
		if err != nil {
			return err
		}
		execs, err := src.Execs(project)
		r.Execs = keepIf(execs, func(x *projection.Exec) bool { return x.Task == id })
		return err
	})
	if err != nil {
		return nil, err
	}
	approvals := map[string]bool{}
	for _, a := range r.Approvals {
		approvals[a.ID] = true
	}
	var evs []flow.Event
	err = e.Events(flow.Filter{Project: project, UntilSeq: r.HeadSeq, Raw: true}, func(ev flow.Event) error {
		if ev.Stream == projection.TaskStream(project, id) ||
			(ev.Stream == projection.ProjectStream(project) && namesTask(ev, id, approvals)) {
			evs = append(evs, ev)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	r.Timeline, r.Notes = timelineOf(evs), []ReportNote{}
	for _, ev := range evs {
		if n, ok := reportNoteOf(ev); ok {
			r.Notes = append(r.Notes, n)
		}
	}
	r.Markdown = r.markdown()
	return r, nil
}

// TestProperty_ReportsEqualFullReads: over random projects with
// rollbacks of the project and of single tasks, the report of every task
// is the one built from every approval, exec record and event of the
// project (reportTaskFull), and the project report shows exactly the
// open tasks and plans (with their task counts), the pending and last
// approvals and the last exec records that the full lists hold.
func TestProperty_ReportsEqualFullReads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		w := newPrimeWorld(rt, filepath.Join(dir, strconv.Itoa(n)))
		defer w.close()
		primeRandomProject(rt, w)
		e := w.as("ann")
		randomRollbacks(rt, e)
		tasks := primeMust(e.Tasks("p", flow.TaskFilter{})).in(rt)
		for _, task := range tasks {
			got, err := ReportTask(e, "p", task.ID)
			if err != nil {
				rt.Fatal(err)
			}
			want, err := reportTaskFull(e, "p", task.ID)
			if err != nil {
				rt.Fatal(err)
			}
			a, b := primeMust(json.Marshal(got)).in(rt), primeMust(json.Marshal(want)).in(rt)
			if string(a) != string(b) {
				rt.Fatalf("report of %s differs from the full read's:\n%s\n%s", task.ID, a, b)
			}
		}
		checkProjectReport(rt, e)
	})
}

func checkProjectReport(rt *rapid.T, e *flow.Engine) {
	r, err := ReportProject(e, "p")
	if err != nil {
		rt.Fatal(err)
	}
	var tasks []*projection.Task
	var plans []*projection.Plan
	var approvals []*projection.Approval
	var execs []*projection.Exec
	err = e.Read(func(src *flow.Reader) error {
		var err error
		if tasks, err = src.Tasks("p"); err != nil {
			return err
		}
		if plans, err = src.Plans("p"); err != nil {
			return err
		}
		if approvals, err = src.Approvals("p"); err != nil {
			return err
		}
		execs, err = src.Execs("p")
		return err
	})
	if err != nil {
		rt.Fatal(err)
	}
	ids := func(n int, id func(i int) string) []string {
		out := []string{}
		for i := range n {
			out = append(out, id(i))
		}
		return out
	}
	same := func(what string, got, want []string) {
		if !slices.Equal(got, want) {
			rt.Fatalf("project report %s = %v, want %v", what, got, want)
		}
	}
	open := keepIf(tasks, func(t *projection.Task) bool {
		return t.Status == projection.StatusTodo || t.Status == projection.StatusDoing || t.Status == projection.StatusBlocked
	})
	same("tasks", ids(len(r.Tasks), func(i int) string { return r.Tasks[i].ID }), ids(len(open), func(i int) string { return open[i].ID }))
	openPlans := keepIf(plans, func(p *projection.Plan) bool { return p.Status != "closed" })
	same("plans", ids(len(r.Plans), func(i int) string { return r.Plans[i].ID }), ids(len(openPlans), func(i int) string { return openPlans[i].ID }))
	for _, p := range openPlans {
		var c PlanTasks
		for _, t := range tasks {
			if t.Plan == p.ID {
				c.Tasks++
				if t.Status == projection.StatusDone {
					c.Done++
				}
			}
		}
		if r.PlanTasks[p.ID] != c {
			rt.Fatalf("plan %s counts %+v, want %+v", p.ID, r.PlanTasks[p.ID], c)
		}
	}
	last := approvals[max(0, len(approvals)-ReportRecentApprovals):]
	shown := keepIf(approvals, func(a *projection.Approval) bool {
		return a.Status == projection.ApprovalPending || slices.Contains(last, a)
	})
	same("approvals", ids(len(r.Approvals), func(i int) string { return r.Approvals[i].ID }), ids(len(shown), func(i int) string { return shown[i].ID }))
	execs = execs[max(0, len(execs)-ReportRecentExecs):] // by id: the last recorded
	same("execs", ids(len(r.Execs), func(i int) string { return r.Execs[i].ID }), ids(len(execs), func(i int) string { return execs[i].ID }))
	checkReportGraph(rt, r.Graph, tasks, open)
}

// checkReportGraph: the report's graph is the graph of the open tasks
// and every task one of them depends on, from the full task list, cut to
// its first ReportGraphTasks by layer.
func checkReportGraph(rt *rapid.T, g *Graph, tasks, open []*projection.Task) {
	drawn := map[string]bool{}
	for _, t := range open {
		drawn[t.ID] = true
		for _, d := range t.Deps {
			drawn[d] = true
		}
	}
	want := NewGraph("p", keepIf(tasks, func(t *projection.Task) bool { return drawn[t.ID] })).Limit(ReportGraphTasks)
	want.HeadSeq = g.HeadSeq
	a, b := primeMust(json.Marshal(g)).in(rt), primeMust(json.Marshal(want)).in(rt)
	if string(a) != string(b) {
		rt.Fatalf("project report graph differs from the full read's:\n%s\n%s", a, b)
	}
	if len(g.Nodes) > ReportGraphTasks || (g.Tasks > ReportGraphTasks) != (len(g.Nodes) < g.Tasks) {
		rt.Fatalf("report graph draws %d of %d tasks (limit %d)", len(g.Nodes), g.Tasks, ReportGraphTasks)
	}
}

// randomRollbacks rolls project p, or one of its tasks, back a few times
// to random seqs; refusals are part of the game.
func randomRollbacks(rt *rapid.T, e *flow.Engine) {
	for range rapid.IntRange(0, 3).Draw(rt, "rollbacks") {
		var head uint64
		primeMust(0, e.Read(func(src *flow.Reader) error { head = src.Head(); return nil })).in(rt)
		p := primeMust(e.Project("p")).in(rt)
		in := flow.RollbackInput{Project: "p", Reason: "test", To: flow.Point{Seq: rapid.Uint64Range(1, head).Draw(rt, "to")}}
		if p.Counters.Tasks > 0 && rapid.Bool().Draw(rt, "one task") {
			in.Task = projection.ShortID(projection.PrefixTask, rapid.IntRange(1, p.Counters.Tasks).Draw(rt, "task"))
		}
		if _, err := e.Rollback(in); err != nil {
			if c := flow.ErrorCode(err); c == flow.CodeInternal || c == flow.CodeCorrupt {
				rt.Fatal(err)
			}
		}
	}
}
