package digest

import (
	"slices"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
)

// OpenStatuses are the statuses of the open work: the tasks an open
// graph (ReadOpenGraph) and a project report show.
var OpenStatuses = []string{projection.StatusTodo, projection.StatusDoing, projection.StatusBlocked}

// ReadOpenGraph reads the dependency graph of project's open work: its
// tasks that are todo, doing or blocked, and the tasks they depend on
// (drawn with their status, done or not), laid out as NewGraph does. It
// reads those tasks by id through the status index, never the whole
// project, so it costs what the open work costs (the dashboard's default
// graph; ReadGraph draws every task). The graph's Open is set. at and the
// errors are as ReadGraph's.
func ReadOpenGraph(e *flow.Engine, project string, at *flow.Point) (*Graph, error) {
	if at != nil {
		if err := e.Begun(project, *at); err != nil {
			return nil, err
		}
		e = e.At(project, *at)
	}
	var g *Graph
	err := e.Read(func(src *flow.Reader) error {
		if _, err := src.Project(project); err != nil {
			return err
		}
		open, err := OpenTasks(src, project)
		if err != nil {
			return err
		}
		tasks, err := WithDeps(src, project, open)
		if err != nil {
			return err
		}
		g = NewGraph(project, tasks)
		g.HeadSeq, g.Open = src.Head(), true
		return nil
	})
	return g, err
}

// OpenTasks reads project's open tasks (OpenStatuses) by id, in id order.
func OpenTasks(src *flow.Reader, project string) ([]*projection.Task, error) {
	var ids []string
	for _, status := range OpenStatuses {
		more, err := src.TaskIDs(project, status)
		if err != nil {
			return nil, err
		}
		ids = append(ids, more...)
	}
	return readAll(slices.SortedFunc(slices.Values(ids), projection.CompareIDs), func(id string) (*projection.Task, error) {
		return src.Task(project, id)
	})
}

// WithDeps returns open and the tasks they depend on that are not among
// them, read by id.
func WithDeps(src *flow.Reader, project string, open []*projection.Task) ([]*projection.Task, error) {
	in := make(map[string]bool, len(open))
	for _, t := range open {
		in[t.ID] = true
	}
	var deps []string
	for _, t := range open {
		deps = append(deps, keepIf(t.Deps, func(d string) bool { return !in[d] })...)
	}
	closed, err := readAll(slices.Compact(slices.SortedFunc(slices.Values(deps), projection.CompareIDs)), func(id string) (*projection.Task, error) {
		return src.Task(project, id)
	})
	return append(slices.Clone(open), closed...), err
}
