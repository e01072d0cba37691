package flow

import (
	"fmt"
	"strings"

	"github.com/flowctl/flowctl/projection"
)

// BatchTask is one task of AddTasks: a NewTask (its Project is the
// batch's) with an optional key that later items of the batch can list in
// their Deps instead of a task id.
type BatchTask struct {
	Key string `json:"key,omitempty"`
	NewTask
}

// SubKey derives the idempotency key of one part of a command made of
// several (an item of AddTasks, a part of UpdateTask) from the command's
// key; no key gives no key.
func SubKey(key, part string) string {
	if key == "" {
		return ""
	}
	return key + "/" + part
}

// AddTasks creates the items in order, in one transaction: all of them or
// none. An item's Deps name existing tasks by id or earlier items by key.
// Before anything is written it refuses, as ErrInvalid or ErrNotFound,
// what would fail part of the way: empty titles, keys used twice, deps on
// later or unknown items, unknown plans and tasks. An error of item i > 0
// says that nothing was created. Each item's Write (its idempotency key)
// is its own; IfVersion is not used.
func (e *Engine) AddTasks(project string, items []BatchTask) ([]*projection.Task, error) {
	if err := e.checkBatch(project, items); err != nil {
		return nil, err
	}
	var out []*projection.Task
	err := e.Batch(func(b *Engine) error {
		var err error
		out, err = b.addTasks(project, items)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (e *Engine) addTasks(project string, items []BatchTask) ([]*projection.Task, error) {
	out := make([]*projection.Task, 0, len(items))
	ids := map[string]string{} // key -> T-n
	for i, it := range items {
		nt := it.NewTask
		nt.Project, nt.Deps = project, nil
		for _, d := range it.Deps {
			if id, ok := ids[d]; ok {
				d = id
			}
			nt.Deps = append(nt.Deps, d)
		}
		if id, ok := ids[nt.Parent]; ok && nt.Parent != "" {
			nt.Parent = id // a parent named by the key of an earlier item
		}
		t, err := e.AddTask(nt)
		if err != nil {
			return nil, batchError(i, err)
		}
		if it.Key != "" {
			ids[it.Key] = t.ID
		}
		out = append(out, t)
	}
	return out, nil
}

// checkBatch refuses, before anything is written, what would fail part of
// the way through a batch. (An archived project fails the first item,
// before anything is written.)
func (e *Engine) checkBatch(project string, items []BatchTask) error {
	keys := map[string]bool{}
	for i, it := range items {
		if strings.TrimSpace(it.Title) == "" {
			return fmt.Errorf("%w: tasks[%d]: title is empty", ErrInvalid, i)
		}
		for _, d := range it.Deps {
			if keys[d] {
				continue
			}
			id, err := ParseTaskID(d)
			if err != nil {
				return fmt.Errorf("%w: tasks[%d]: dep %q is neither the key of an earlier item nor a task id", ErrInvalid, i, d)
			}
			if _, err := e.Task(project, id); err != nil {
				return fmt.Errorf("tasks[%d]: dep %s: %w", i, id, err)
			}
		}
		if it.Plan != "" {
			id, err := ParsePlanID(it.Plan)
			if err != nil {
				return err
			}
			if _, err := e.Plan(project, id); err != nil {
				return err
			}
		}
		if it.Key != "" {
			if keys[it.Key] {
				return fmt.Errorf("%w: tasks[%d]: key %q is used twice", ErrInvalid, i, it.Key)
			}
			keys[it.Key] = true
		}
	}
	return nil
}

// batchError names the item of a batch that failed: since the items are
// created in one transaction, none of them was.
func batchError(i int, err error) error {
	if i == 0 {
		return err
	}
	return fmt.Errorf("tasks[%d]: %w (nothing was created: the tasks of one call are created together or not at all)", i, err)
}
