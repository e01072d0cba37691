package digest

import (
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
)

// benchTasks makes n tasks, each depending on up to three of the span
// tasks before it (the whole project when span is n).
func benchTasks(n, span int) []*projection.Task {
	r := rand.New(rand.NewPCG(1, 2))
	tasks := make([]*projection.Task, n)
	for i := range n {
		tk := &projection.Task{ID: graphTaskID(i), Title: "task " + strconv.Itoa(i), Status: projection.StatusTodo}
		for range r.IntN(4) {
			if i > 0 {
				tk.Deps = append(tk.Deps, graphTaskID(i-1-r.IntN(min(i, span))))
			}
		}
		tasks[i] = tk
	}
	return tasks
}

// planTasks makes n tasks in plans of 20: each depends on one or two of
// the five before it in its plan, and the first of a plan, one time in
// four, on a task of the plan before.
func planTasks(n int) []*projection.Task {
	r := rand.New(rand.NewPCG(3, 4))
	tasks := make([]*projection.Task, n)
	for i := range n {
		tk := &projection.Task{ID: graphTaskID(i), Title: "task " + strconv.Itoa(i), Status: projection.StatusTodo}
		switch k := i % 20; {
		case k > 0:
			for range 1 + r.IntN(2) {
				tk.Deps = append(tk.Deps, graphTaskID(i-1-r.IntN(min(k, 5))))
			}
		case i > 0 && r.IntN(4) == 0:
			tk.Deps = append(tk.Deps, graphTaskID(i-1-r.IntN(20)))
		}
		tasks[i] = tk
	}
	return tasks
}

// BenchmarkGraph: laying out a few thousand tasks, and rendering them.
// Plans: tasks in plans of 20 that depend on each other (see planTasks);
// Near: each depends on up to three of the 20 before it, a quarter on
// nothing (a deep graph: hundreds of layers, long edges from layer 0);
// Far: on any earlier task (a wide one).
func BenchmarkGraph(b *testing.B) {
	for _, c := range []struct {
		name  string
		tasks []*projection.Task
	}{
		{"Plans/3000", planTasks(3000)}, {"Near/3000", benchTasks(3000, 20)}, {"Far/3000", benchTasks(3000, 3000)},
		{"Plans/10000", planTasks(10000)},
	} {
		tasks := c.tasks
		b.Run("Layout/"+c.name, func(b *testing.B) {
			for b.Loop() {
				NewGraph("bench", tasks)
			}
		})
		g := NewGraph("bench", tasks)
		b.Run("SVG/"+c.name, func(b *testing.B) {
			for b.Loop() {
				g.SVG(SVGOptions{})
			}
		})
	}
}

// BenchmarkReadGraph: what flowctl graph and the server's graph do for a
// project of 3,000 tasks in plans (planTasks): read every task at the
// head, lay them out, and render the SVG or JSON.
func BenchmarkReadGraph(b *testing.B) {
	e, err := flow.Open(filepath.Join(b.TempDir(), "flow.db"), flow.Options{Create: true, NoSync: true, Actor: "ann"})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	if _, err := e.CreateProject(flow.NewProject{Name: "bench"}); err != nil {
		b.Fatal(err)
	}
	for _, t := range planTasks(3000) {
		if _, err := e.AddTask(flow.NewTask{Project: "bench", Title: t.Title, Deps: t.Deps}); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("Read", func(b *testing.B) {
		for b.Loop() {
			if _, err := ReadGraph(e, "bench", nil, ""); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ReadSVG", func(b *testing.B) {
		for b.Loop() {
			g, err := ReadGraph(e, "bench", nil, "")
			if err != nil {
				b.Fatal(err)
			}
			g.SVG(SVGOptions{})
		}
	})
	b.Run("ReadNeighbourhood", func(b *testing.B) {
		for b.Loop() {
			if _, err := ReadGraph(e, "bench", nil, "T-1500"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
