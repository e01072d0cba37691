package digest

import (
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/flowctl/flowctl/projection"
	"pgregory.net/rapid"
)

func graphTaskID(i int) string { return projection.ShortID(projection.PrefixTask, i+1) }

// randomTasks draws up to 40 tasks; each depends on a few others: earlier
// ones only unless cycles is set (then any, itself included), and now and
// then on a task that is not there.
func randomTasks(t *rapid.T, cycles bool) []*projection.Task {
	n := rapid.IntRange(0, 40).Draw(t, "tasks")
	statuses := []string{projection.StatusTodo, projection.StatusDoing, projection.StatusDone, projection.StatusBlocked, projection.StatusCancelled}
	tasks := make([]*projection.Task, n)
	for i := range n {
		tk := &projection.Task{ID: graphTaskID(i), Title: "t" + strconv.Itoa(i), Status: rapid.SampledFrom(statuses).Draw(t, "status")}
		hi := i - 1
		if cycles {
			hi = n - 1
		}
		if hi >= 0 {
			for range rapid.IntRange(0, 3).Draw(t, "deps") {
				tk.Deps = append(tk.Deps, graphTaskID(rapid.IntRange(0, hi).Draw(t, "dep")))
			}
		}
		if rapid.IntRange(0, 9).Draw(t, "missing") == 0 {
			tk.Deps = append(tk.Deps, graphTaskID(n+5))
		}
		tasks[i] = tk
	}
	rapid.Permutation(tasks).Draw(t, "order") // NewGraph sorts them
	return tasks
}

// TestProperty_GraphLayers: every task is laid out once; every edge that
// is not broken goes from a lower layer to a higher one, and a task's
// layer is the longest path to it; an edge is broken only when it closes
// a cycle, and the broken edges are all that stands between the rest
// and a DAG; boxes do not overlap, and those of a row are in order; an edge's points run
// from its dependency's box to its dependent's, two per layer crossed.
func TestProperty_GraphLayers(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		cycles := rapid.Bool().Draw(t, "cycles")
		tasks := randomTasks(t, cycles)
		g := NewGraph("p", tasks)
		nodes := map[string]GraphNode{}
		for _, n := range g.Nodes {
			if _, dup := nodes[n.ID]; dup {
				t.Fatalf("%s laid out twice", n.ID)
			}
			nodes[n.ID] = n
		}
		if len(nodes) != len(tasks) || g.Tasks != len(tasks) {
			t.Fatalf("%d nodes of %d tasks", len(nodes), len(tasks))
		}
		longest := map[string]int{}
		reach := dependsOn(tasks)
		for _, e := range g.Edges {
			from, to := nodes[e.From], nodes[e.To]
			if e.Broken {
				if !cycles || !reach[e.From][e.To] {
					t.Fatalf("edge %s→%s broken, but %s does not depend on %s: no cycle", e.From, e.To, e.From, e.To)
				}
				continue
			}
			if from.Layer >= to.Layer {
				t.Fatalf("edge %s→%s goes from layer %d to %d", e.From, e.To, from.Layer, to.Layer)
			}
			longest[e.To] = max(longest[e.To], from.Layer+1)
			if len(e.Points) != 2*(to.Layer-from.Layer) || e.Points[0] != [2]float64{from.X, from.Y + g.NodeHeight/2} ||
				e.Points[len(e.Points)-1] != [2]float64{to.X, to.Y - g.NodeHeight/2} {
				t.Fatalf("edge %s→%s (layers %d→%d) has points %v", e.From, e.To, from.Layer, to.Layer, e.Points)
			}
		}
		for id, n := range nodes {
			if n.Layer != longest[id] {
				t.Fatalf("%s in layer %d, but its longest path is %d", id, n.Layer, longest[id])
			}
			if n.Layer >= g.Layers || n.X-g.NodeWidth/2 < 0 || n.X+g.NodeWidth/2 > g.Width || n.Y+g.NodeHeight/2 > g.Height {
				t.Fatalf("%s (layer %d at %v,%v) outside the %d layers, %vx%v", id, n.Layer, n.X, n.Y, g.Layers, g.Width, g.Height)
			}
		}
		for i := 1; i < len(g.Nodes); i++ {
			a, b := g.Nodes[i-1], g.Nodes[i]
			if a.Layer == b.Layer && (a.Order >= b.Order || a.Y == b.Y && b.X-a.X < g.NodeWidth) {
				t.Fatalf("%s (order %d, x %v) and %s (order %d, x %v) overlap or are out of order", a.ID, a.Order, a.X, b.ID, b.Order, b.X)
			}
		}
		for i, a := range g.Nodes {
			for _, b := range g.Nodes[i+1:] {
				if math.Abs(a.X-b.X) < g.NodeWidth && math.Abs(a.Y-b.Y) < g.NodeHeight {
					t.Fatalf("the boxes of %s (%v,%v) and %s (%v,%v) overlap", a.ID, a.X, a.Y, b.ID, b.X, b.Y)
				}
			}
		}
	})
}

// TestProperty_Neighbourhood: the neighbourhood of a task is the task and
// every task it reaches through dependencies, or that reaches it, as a
// transitive closure of the dependency relation says.
func TestProperty_Neighbourhood(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		tasks := randomTasks(t, rapid.Bool().Draw(t, "cycles"))
		if len(tasks) == 0 {
			return
		}
		root := rapid.SampledFrom(tasks).Draw(t, "root").ID
		got := Neighbourhood(tasks, root)
		var gotIDs []string
		for _, tk := range got {
			gotIDs = append(gotIDs, tk.ID)
		}
		var want []string
		reach := dependsOn(tasks)
		for _, tk := range tasks {
			if tk.ID == root || reach[root][tk.ID] || reach[tk.ID][root] {
				want = append(want, tk.ID)
			}
		}
		if !slices.Equal(gotIDs, want) {
			t.Fatalf("neighbourhood of %s = %v, want %v", root, gotIDs, want)
		}
	})
}

// dependsOn is the transitive closure of the dependency relation
// (Floyd–Warshall): reach[a][b] says that a depends on b, through any
// chain of tasks that are there.
func dependsOn(tasks []*projection.Task) map[string]map[string]bool {
	reach := map[string]map[string]bool{}
	for _, tk := range tasks {
		reach[tk.ID] = map[string]bool{}
	}
	for _, tk := range tasks {
		for _, d := range tk.Deps {
			if reach[d] != nil {
				reach[tk.ID][d] = true
			}
		}
	}
	for _, k := range tasks {
		for _, a := range tasks {
			if reach[a.ID][k.ID] {
				for b := range reach[k.ID] {
					reach[a.ID][b] = true
				}
			}
		}
	}
	return reach
}
