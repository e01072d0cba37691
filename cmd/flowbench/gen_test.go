package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/internal/workload"
	"github.com/flowctl/flowctl/projection"
)

// mustGenerate writes a history of about events events over projects
// projects into a new file and returns its path.
func mustGenerate(tb testing.TB, events, projects int) (string, genResult) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "gen.db")
	res, err := generate(context.Background(), genOptions{events: events, db: path, projects: projects, seed: 7}, func(uint64, uint64) {})
	if err != nil {
		tb.Fatal(err)
	}
	return path, res
}

func TestGenerate(t *testing.T) {
	const events, projects = 11000, 2
	path, res := mustGenerate(t, events, projects)
	if res.Events < events || res.Events > events+projects || res.Size == 0 {
		t.Fatalf("gen reported %+v, want about %d events and a size", res, events)
	}
	e, err := flow.Open(path, flow.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	rep, err := e.Verify()
	if err != nil {
		t.Fatal(err)
	}
	if rep.HeadSeq != res.Events || rep.Projects != projects || rep.Projections != "ok" {
		t.Fatalf("Verify = %+v, want head %d, %d projects, projections ok", rep, res.Events, projects)
	}
	for i := range projects {
		checkShape(t, e, workload.ProjectName(i))
	}
}

// checkShape checks that a project has the shape the generator promises:
// every task but the last done, with three completed steps, three exec
// records and a granted approval each; a plan per 40 tasks; a checkpoint
// per 5000 events.
func checkShape(t *testing.T, e *flow.Engine, project string) {
	t.Helper()
	p, err := e.Project(project)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := e.Tasks(project, flow.TaskFilter{})
	if err != nil {
		t.Fatal(err)
	}
	done, err := e.Tasks(project, flow.TaskFilter{Status: projection.StatusDone})
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) < 100 || len(done) < len(tasks)-1 {
		t.Errorf("%s: %d tasks, %d done; want over 100, all but the last done", project, len(tasks), len(done))
	}
	if want := (len(tasks) + 39) / 40; p.Counters.Plans != want {
		t.Errorf("%s: %d plans for %d tasks, want %d", project, p.Counters.Plans, len(tasks), want)
	}
	if c := p.Counters.Checkpoints; c < 1 || c > int(p.Events)/workload.DefaultCheckpointEvery {
		t.Errorf("%s: %d checkpoints in %d events, want one per %d", project, c, p.Events, workload.DefaultCheckpointEvery)
	}
	checkTask(t, e, project, done[0].ID)
}

// checkTask checks one done task's steps, context, exec records and
// approval.
func checkTask(t *testing.T, e *flow.Engine, project, id string) {
	t.Helper()
	steps, err := e.Steps(project, id)
	if err != nil || len(steps) != 3 {
		t.Fatalf("%s %s: steps %v, %v; want 3", project, id, steps, err)
	}
	for _, s := range steps {
		if s.Status != projection.StepCompleted {
			t.Errorf("%s step %s is %s, want completed", project, s.ID, s.Status)
		}
	}
	execs, err := e.Execs(project, flow.ExecFilter{Task: id})
	if err != nil || len(execs) != 3 {
		t.Errorf("%s %s: %d exec records, %v; want 3", project, id, len(execs), err)
	}
	approvals, err := e.Approvals(project, flow.ApprovalFilter{Task: id})
	if err != nil || len(approvals) != 1 || approvals[0].Status != projection.ApprovalGranted {
		t.Errorf("%s %s: approvals %+v, %v; want one granted", project, id, approvals, err)
	}
	ctx, err := e.Context(project, id)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := e.ContextValue(project, id, "phase"); err != nil || string(v) != `"wrap-up"` {
		t.Errorf("%s %s: context phase %s, %v; want \"wrap-up\" (context %+v)", project, id, v, err, ctx)
	}
}

func TestGenerate_Deterministic(t *testing.T) {
	count := func() []int {
		path, _ := mustGenerate(t, 3000, 3)
		e, err := flow.Open(path, flow.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		var n []int
		for i := range 3 {
			p, err := e.Project(workload.ProjectName(i))
			if err != nil {
				t.Fatal(err)
			}
			n = append(n, int(p.Events), p.Counters.Tasks)
		}
		return n
	}
	a, b := count(), count()
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("two runs with one seed differ: %v and %v", a, b)
		}
	}
}
