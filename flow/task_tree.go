package flow

import (
	"fmt"
	"slices"

	"github.com/flowctl/flowctl/projection"
)

// TreeNode is one task in a tree: the hierarchy of subtasks (TaskTree) or
// the tree of dependencies (DepTree).
type TreeNode struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Status   string `json:"status"`
	Priority int    `json:"priority"`
	Progress int    `json:"progress"` // Progress: of its subtasks, else of its steps
	// Due is the task's due date, null for none.
	Due      projection.Time `json:"due"`
	Children []*TreeNode     `json:"children"`
	// Seen marks, in a tree of dependencies, a task shown higher up
	// already: it is not expanded again (a task two others depend on
	// appears under both).
	Seen bool `json:"seen,omitempty"`
	// Truncated marks a task whose children --max-depth left out.
	Truncated bool `json:"truncated,omitempty"`
}

// TaskTree returns the project's tasks that match f as a forest of
// subtasks: roots are the tasks without a parent among them, each with its
// children in id order, roots in id order. ErrNotFound for an unknown
// project.
func (e *Engine) TaskTree(project string, f TaskFilter) ([]*TreeNode, error) {
	tasks, err := e.Tasks(project, f)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*projection.Task, len(tasks))
	kids := map[string][]*projection.Task{}
	for _, t := range tasks {
		byID[t.ID] = t
	}
	var roots []*projection.Task
	for _, t := range tasks { // in id order: so are the children
		if _, ok := byID[t.Parent]; ok && t.Parent != t.ID {
			kids[t.Parent] = append(kids[t.Parent], t)
		} else {
			roots = append(roots, t)
		}
	}
	var node func(t *projection.Task, depth int) *TreeNode
	node = func(t *projection.Task, depth int) *TreeNode {
		n := treeNode(t, kids[t.ID])
		if depth >= maxDepth {
			n.Truncated = len(kids[t.ID]) > 0
			return n
		}
		for _, c := range kids[t.ID] {
			n.Children = append(n.Children, node(c, depth+1))
		}
		return n
	}
	out := make([]*TreeNode, 0, len(roots))
	for _, t := range roots {
		out = append(out, node(t, 0))
	}
	return out, nil
}

func treeNode(t *projection.Task, children []*projection.Task) *TreeNode {
	return &TreeNode{ID: t.ID, Title: t.Title, Status: t.Status, Priority: t.Priority, Due: t.Due,
		Progress: Progress(t, children), Children: []*TreeNode{}}
}

// DepTree returns the tree of what task id depends on, transitively (with
// reverse, of what depends on it), down to maxDepth levels below it (0:
// all). A task met again is shown once more, marked Seen, and not
// expanded again. ErrNotFound for an unknown task.
func (e *Engine) DepTree(project, id string, reverse bool, depth int) (*TreeNode, error) {
	if depth < 0 {
		return nil, fmt.Errorf("%w: max depth %d: give 0 (all) or more", ErrInvalid, depth)
	}
	var root *TreeNode
	err := e.read(func(src source) error {
		if _, err := mustTask(src, project, id); err != nil {
			return err
		}
		tasks, err := src.Tasks(project)
		if err != nil {
			return err
		}
		root = depTree(tasks, id, reverse, depth)
		return nil
	})
	return root, err
}

// depTree builds DepTree's tree from all the tasks of a project.
func depTree(tasks []*projection.Task, id string, reverse bool, depth int) *TreeNode {
	byID := make(map[string]*projection.Task, len(tasks))
	kids := map[string][]*projection.Task{}
	next := map[string][]string{}
	for _, t := range tasks {
		byID[t.ID] = t
		if t.Parent != "" {
			kids[t.Parent] = append(kids[t.Parent], t)
		}
		for _, d := range t.Deps {
			if reverse {
				next[d] = append(next[d], t.ID)
			} else {
				next[t.ID] = append(next[t.ID], d)
			}
		}
	}
	for _, ids := range next {
		slices.SortFunc(ids, projection.CompareTaskIDs)
	}
	seen := map[string]bool{}
	var node func(id string, level int) *TreeNode
	node = func(id string, level int) *TreeNode {
		t := byID[id]
		if t == nil { // a dependency a rollback took away
			return &TreeNode{ID: id, Status: "missing", Children: []*TreeNode{}}
		}
		n := treeNode(t, kids[id])
		if seen[id] {
			n.Seen = len(next[id]) > 0
			return n
		}
		seen[id] = true
		if (depth > 0 && level >= depth) || level >= maxDepth {
			n.Truncated = len(next[id]) > 0
			return n
		}
		for _, d := range next[id] {
			n.Children = append(n.Children, node(d, level+1))
		}
		return n
	}
	return node(id, 0)
}
