package flow

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// Subtasks. A task may have a parent (NewTask.Parent, TaskEdit.Parent);
// its children are the tasks whose parent it is. Only the parent link is
// stored, on the child (an event changes only the entity of its stream),
// so the children are always the inverse of the parent links: they are
// found by a walk that decodes only the tasks whose stored bytes name the
// parent (childrenOf), and not looked for in a project where no parent
// link was ever made (projection.Counters.Parents). The engine refuses a parent that is missing, the
// task itself or one of its descendants (ErrParentCycle), and a done
// parent for an open task; a task is not done while a child is open
// (doneBlockers), unless forced.

// ErrParentCycle is wrapped by a refused parent that would make a task
// its own ancestor.
var ErrParentCycle = fmt.Errorf("%w: parent cycle", store.ErrConflict)

// Children returns the tasks whose parent is task id, in id order;
// ErrNotFound for an unknown task.
func (e *Engine) Children(project, id string) ([]*projection.Task, error) {
	var out []*projection.Task
	err := e.read(func(src source) error {
		if _, err := mustTask(src, project, id); err != nil {
			return err
		}
		var err error
		out, err = childrenOf(src, project, id)
		return err
	})
	return NonNilTasks(out), err
}

// NonNilTasks returns tasks, or an empty list for nil.
func NonNilTasks(tasks []*projection.Task) []*projection.Task { return projection.NonNil(tasks) }

// childrenOf lists the children of task id: through the children index
// of the stored projections (projstore.BucketChildren) when src has one,
// else a walk whose cheap test is the msgpack of the field parent
// holding id.
func childrenOf(src source, project, id string) ([]*projection.Task, error) {
	p, err := mustProject(src, project)
	if err != nil || p.Counters.Parents == 0 {
		return nil, err // no task of the project ever had a parent
	}
	if ix, ok := src.(childIndex); ok {
		return indexedChildren(src, ix, project, id)
	}
	var out []*projection.Task
	w := taskWalk(src)
	w.maybe = containing(parentField(id))
	w.match = func(t *projection.Task) bool { return t.Parent == id }
	err = w.each(src, project, appendTo(&out))
	return out, err
}

// childIndex is a source with the children index: the stored projections
// (projstore.Tx), whose every current file holds it.
type childIndex interface {
	ChildIDs(project, parent string) ([]string, error)
}

// indexedChildren reads the children of task id that ix lists.
func indexedChildren(src source, ix childIndex, project, id string) ([]*projection.Task, error) {
	ids, err := ix.ChildIDs(project, id)
	if err != nil {
		return nil, err
	}
	out := make([]*projection.Task, 0, len(ids))
	for _, c := range ids {
		t, err := src.Task(project, c)
		if err != nil {
			return nil, err
		}
		if t == nil {
			return nil, projstore.Damaged(projstore.BucketChildren, projstore.ChildKey(project, id, c), "names a task the projections do not hold")
		}
		out = append(out, t)
	}
	return out, nil
}

// parentField is the msgpack of the map entry parent: id, as a stored
// task holds it (ids are short: a fixstr).
func parentField(id string) string {
	if len(id) > 31 {
		return id
	}
	return "\xa6parent" + string([]byte{byte(0xa0 | len(id))}) + id
}

// checkParent refuses parent as the parent of task id ("" for a new
// task): it must exist, not be the task or one of its descendants, and
// not be done or cancelled when the task is open (a done parent has no
// open children).
func checkParent(src projection.Store, project, id, parent string, open bool) error {
	p, err := mustTask(src, project, parent)
	if err != nil {
		return err
	}
	if open && (p.Status == projection.StatusDone || p.Status == projection.StatusCancelled) {
		return fmt.Errorf("%w: task %s is %s: it cannot take an open subtask (reopen it first: 'task reopen %s')",
			store.ErrConflict, p.ID, p.Status, p.ID)
	}
	if id == "" {
		return nil
	}
	chain := []string{parent}
	for cur := p; cur != nil; {
		if cur.ID == id {
			slices.Reverse(chain)
			return fmt.Errorf("%w: %s cannot be a subtask of %s, which is a subtask of it or itself (%s)",
				ErrParentCycle, id, parent, strings.Join(chain, " > "))
		}
		if cur.Parent == "" || len(chain) > maxDepth {
			return nil
		}
		next, err := src.Task(project, cur.Parent)
		if err != nil {
			return err
		}
		chain = append(chain, cur.Parent)
		cur = next
	}
	return nil
}

// maxDepth bounds the walks up a chain of parents: a history cannot hold
// a cycle, but a walk does not trust that.
const maxDepth = 10000

// openChildren lists the children of t that are neither done nor
// cancelled, as "T-3 (todo)".
func openChildren(src source, t *projection.Task) ([]string, error) {
	kids, err := childrenOf(src, t.Project, t.ID)
	if err != nil {
		return nil, err
	}
	var open []string
	for _, c := range kids {
		if c.Status != projection.StatusDone && c.Status != projection.StatusCancelled {
			open = append(open, fmt.Sprintf("%s (%s)", c.ID, c.Status))
		}
	}
	return open, nil
}

// Progress is how far a task is, 0-100, by one rule: a done task is at
// 100; a task with children is at the share of its children that are
// done (cancelled ones are not counted: done children / children not
// cancelled, rounded down); any other task is at the mean progress of its
// steps (skipped ones not counted), or 0 without steps.
func Progress(t *projection.Task, children []*projection.Task) int {
	if t.Status == projection.StatusDone {
		return 100
	}
	n, done := 0, 0
	for _, c := range children {
		if c.Status == projection.StatusCancelled {
			continue
		}
		n++
		if c.Status == projection.StatusDone {
			done++
		}
	}
	if n > 0 {
		return 100 * done / n
	}
	n, sum := 0, 0
	for _, s := range t.Steps {
		if s.Status != projection.StepSkipped {
			n++
			sum += s.Progress
		}
	}
	if n == 0 {
		return 0
	}
	return sum / n
}

// Family is a task with its parent and children: what task show
// prints.
type Family struct {
	Task     *projection.Task
	Parent   *projection.Task   // nil for none (or a parent a rollback took away)
	Children []*projection.Task // in id order, never nil
	Progress int                // Progress(Task, Children)
}

// TaskFamily returns a task with its parent and children, read in one
// transaction; ErrNotFound for an unknown task.
func (e *Engine) TaskFamily(project, id string) (*Family, error) {
	var out Family
	err := e.read(func(src source) error {
		t, err := mustTask(src, project, id)
		if err != nil {
			return err
		}
		out.Task = t
		if t.Parent != "" {
			if out.Parent, err = src.Task(project, t.Parent); err != nil {
				return err
			}
		}
		out.Children, err = childrenOf(src, project, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	out.Children = NonNilTasks(out.Children)
	out.Progress = Progress(out.Task, out.Children)
	return &out, nil
}
