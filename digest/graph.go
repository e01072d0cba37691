package digest

import (
	"cmp"
	"slices"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
)

// Graph is a project's task dependency DAG, laid out in layers: an edge
// goes from a dependency to the task that depends on it (the dependency
// comes first), and a task's layer is the length of the longest path to
// it from a task that depends on nothing (layer 0), so every edge goes
// from a lower layer to a higher one. Nodes are sorted by layer, then by
// their order in it; edges by their ends' ids.
//
// A task with no dependency and no dependent is in layer 0, but drawn in
// a grid below the layers (see layout).
//
// The coordinates are those of the SVG (see SVG): X, Y of a node are the
// centre of its box, NodeWidth by NodeHeight; Points of an edge run from
// the bottom of its dependency's box to the top of its dependent's,
// passing each layer it crosses from the top of the layer's boxes to
// their bottom (two points per layer crossed).
type Graph struct {
	Project string `json:"project"`
	HeadSeq uint64 `json:"head_seq"`
	// Root is the task whose neighbourhood the graph holds (its
	// dependencies and dependents, transitively); "" for the whole project.
	Root string `json:"root,omitempty"`
	// Open is set on a graph of the open work only (ReadOpenGraph): the
	// tasks todo, doing or blocked and the tasks they depend on.
	Open bool `json:"open,omitempty"`
	// Tasks is how many tasks the graph was made from; Nodes holds fewer
	// when it was limited (see Limit).
	Tasks      int         `json:"tasks"`
	Layers     int         `json:"layers"`
	Width      float64     `json:"width"`
	Height     float64     `json:"height"`
	NodeWidth  float64     `json:"node_width"`
	NodeHeight float64     `json:"node_height"`
	Nodes      []GraphNode `json:"nodes"`
	Edges      []GraphEdge `json:"edges"`
}

// GraphNode is a task of a Graph: Layer and Order (its place in the
// layer, from the left) place it, X and Y are the centre of its box.
type GraphNode struct {
	ID     string  `json:"id"`
	Title  string  `json:"title"`
	Status string  `json:"status"`
	Plan   string  `json:"plan,omitempty"`
	Layer  int     `json:"layer"`
	Order  int     `json:"order"`
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
}

// GraphEdge says that task To depends on task From. Broken marks an edge
// of a dependency cycle, which only a damaged file can hold: it is left
// out of the layering, and drawn straight.
type GraphEdge struct {
	From   string       `json:"from"`
	To     string       `json:"to"`
	Broken bool         `json:"broken,omitempty"`
	Points [][2]float64 `json:"points"`
}

// ReadGraph reads the dependency graph of project: as it stands, or at
// point at when at is not nil (as flowctl's --at: ErrNotFound when the
// project did not exist yet there). With root set, the graph holds only
// that task and its dependencies and dependents, transitively. It
// returns flow.ErrNotFound for an unknown project or root task, and the
// errors of a point that does not resolve.
func ReadGraph(e *flow.Engine, project string, at *flow.Point, root string) (*Graph, error) {
	if at != nil {
		if err := e.Begun(project, *at); err != nil {
			return nil, err
		}
		e = e.At(project, *at)
	}
	var tasks []*projection.Task
	var head uint64
	err := e.Read(func(src *flow.Reader) error {
		head = src.Head()
		if _, err := src.Project(project); err != nil {
			return err
		}
		if root != "" {
			if _, err := src.Task(project, root); err != nil {
				return err
			}
		}
		var err error
		tasks, err = src.Tasks(project)
		return err
	})
	if err != nil {
		return nil, err
	}
	if root != "" {
		tasks = Neighbourhood(tasks, root)
	}
	g := NewGraph(project, tasks)
	g.HeadSeq, g.Root = head, root
	return g, nil
}

// NewGraph builds and lays out the graph of tasks. A dependency on a
// task that is not among them is left out.
func NewGraph(project string, tasks []*projection.Task) *Graph {
	tasks = slices.SortedFunc(slices.Values(tasks), func(a, b *projection.Task) int { return projection.CompareIDs(a.ID, b.ID) })
	index := make(map[string]int, len(tasks))
	for i, t := range tasks {
		index[t.ID] = i
	}
	var edges [][2]int
	for i, t := range tasks {
		for _, d := range t.Deps {
			if j, ok := index[d]; ok && j != i {
				edges = append(edges, [2]int{j, i})
			}
		}
	}
	slices.SortFunc(edges, func(a, b [2]int) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	edges = slices.Compact(edges)
	l := layOut(len(tasks), edges)
	g := &Graph{Project: project, Tasks: len(tasks), Layers: l.layers, Width: l.width, Height: l.height,
		NodeWidth: nodeWidth, NodeHeight: nodeHeight, Nodes: make([]GraphNode, len(tasks)), Edges: make([]GraphEdge, len(edges))}
	for i, t := range tasks {
		g.Nodes[i] = GraphNode{ID: t.ID, Title: t.Title, Status: t.Status, Plan: t.Plan,
			Layer: l.layer[i], Order: l.order[i], X: l.x[i], Y: l.y[i]}
	}
	for i, ed := range edges {
		g.Edges[i] = GraphEdge{From: tasks[ed[0]].ID, To: tasks[ed[1]].ID, Broken: l.broken[i], Points: l.points[i]}
	}
	// (layer, order) is unique: a node's place
	slices.SortFunc(g.Nodes, func(a, b GraphNode) int { return cmp.Or(cmp.Compare(a.Layer, b.Layer), cmp.Compare(a.Order, b.Order)) })
	return g
}

// Neighbourhood returns root and the tasks it depends on and that depend
// on it, transitively, in the order of tasks; none when root is not
// among them.
func Neighbourhood(tasks []*projection.Task, root string) []*projection.Task {
	byID := make(map[string]*projection.Task, len(tasks))
	dependents := map[string][]string{}
	for _, t := range tasks {
		byID[t.ID] = t
		for _, d := range t.Deps {
			dependents[d] = append(dependents[d], t.ID)
		}
	}
	if byID[root] == nil {
		return nil
	}
	keep := map[string]bool{root: true}
	reach(root, keep, func(id string) []string {
		if t := byID[id]; t != nil {
			return t.Deps
		}
		return nil
	})
	reach(root, keep, func(id string) []string { return dependents[id] })
	return keepIf(tasks, func(t *projection.Task) bool { return keep[t.ID] })
}

// reach adds to seen every id reachable from id through next.
func reach(id string, seen map[string]bool, next func(string) []string) {
	visited := map[string]bool{id: true}
	stack := []string{id}
	for len(stack) > 0 {
		id, stack = stack[len(stack)-1], stack[:len(stack)-1]
		for _, n := range next(id) {
			if !visited[n] {
				visited[n], seen[n] = true, true
				stack = append(stack, n)
			}
		}
	}
}

// Limit returns the graph of its first n nodes (by layer, then order)
// and the edges between them, laid out as they were (in the same width
// and height); g itself when it has no more than n. Tasks still counts
// them all.
func (g *Graph) Limit(n int) *Graph {
	if len(g.Nodes) <= n {
		return g
	}
	n = max(n, 0)
	out := *g
	out.Nodes = slices.Clone(g.Nodes[:n])
	kept := make(map[string]bool, n)
	for _, nd := range out.Nodes {
		kept[nd.ID] = true
	}
	out.Edges = keepIf(g.Edges, func(e GraphEdge) bool { return kept[e.From] && kept[e.To] })
	out.Layers = 0
	if n > 0 {
		out.Layers = out.Nodes[n-1].Layer + 1
	}
	return &out
}
