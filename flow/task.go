package flow

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/flowctl/flowctl/flow/internal/check"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// NewTask is the input of AddTask.
type NewTask struct {
	Project     string   `json:"project"`
	Plan        string   `json:"plan,omitempty"`
	Title       string   `json:"title"`
	Description string   `json:"description,omitempty"`
	Deps        []string `json:"deps,omitempty"`
	Owner       string   `json:"owner,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	Priority    int      `json:"priority,omitempty"` // 0 to MaxPriority
	Ref         string   `json:"ref,omitempty"`
	Parent      string   `json:"parent,omitempty"` // the task it is a subtask of
	// Due is when it is due (ParseDue reads what a user gives); 0 for none.
	Due projection.Time `json:"due,omitempty"`
	Write
}

// MaxPriority is the highest priority; priorities run from 0 (the
// default) to MaxPriority, higher being more urgent.
const MaxPriority = 1000

func checkPriority(p int) error {
	if p < 0 || p > MaxPriority {
		return fmt.Errorf("%w: priority %d: give a whole number from 0 to %d", ErrInvalid, p, MaxPriority)
	}
	return nil
}

func checkTags(tags []string) error {
	for _, t := range tags {
		if err := check.Line("tag", t, 128, true); err != nil {
			return err
		}
	}
	return nil
}

// openProject returns the project for a write, refusing an archived one.
func openProject(src projection.Store, name string) (*projection.Project, error) {
	p, err := mustProject(src, name)
	if err == nil && p.Archived {
		err = fmt.Errorf("%w: project %q is archived", store.ErrConflict, name)
	}
	return p, err
}

// AddTask creates a task with the next T-n of its project.
func (e *Engine) AddTask(in NewTask) (*projection.Task, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	ref, err := e.command(in.Write, "task.add", in, func(w *writer) (Ref, error) {
		return w.addTask(in)
	})
	if err != nil {
		return nil, err
	}
	return e.Task(ref.Project, ref.ID)
}

func (in *NewTask) check() error {
	if err := check.Line("title", in.Title, MaxTitle, true); err != nil {
		return err
	}
	if err := check.Text("description", in.Description, MaxText, false); err != nil {
		return err
	}
	if err := check.Line("owner", in.Owner, MaxTitle, false); err != nil {
		return err
	}
	if err := check.Line("ref", in.Ref, MaxTitle, false); err != nil {
		return err
	}
	if err := checkPriority(in.Priority); err != nil {
		return err
	}
	for i, d := range in.Deps {
		id, err := ParseTaskID(d)
		if err != nil {
			return err
		}
		in.Deps[i] = id
	}
	slices.SortFunc(in.Deps, projection.CompareTaskIDs)
	in.Deps = slices.Compact(in.Deps)
	if in.Plan != "" {
		id, err := ParsePlanID(in.Plan)
		if err != nil {
			return err
		}
		in.Plan = id
	}
	if in.Parent != "" {
		id, err := ParseTaskID(in.Parent)
		if err != nil {
			return err
		}
		in.Parent = id
	}
	return checkTags(in.Tags)
}

func (w *writer) addTask(in NewTask) (Ref, error) {
	p, err := openProject(w, in.Project)
	if err != nil {
		return Ref{}, err
	}
	if in.Plan != "" {
		if _, err := mustPlan(w, in.Project, in.Plan); err != nil {
			return Ref{}, err
		}
	}
	for _, d := range in.Deps {
		if _, err := mustTask(w, in.Project, d); err != nil {
			return Ref{}, err
		}
	}
	if in.Parent != "" {
		if err := checkParent(w, in.Project, "", in.Parent, true); err != nil {
			return Ref{}, err
		}
	}
	id := projection.ShortID(projection.PrefixTask, p.Counters.Tasks+1)
	_, err = w.emit(projection.TaskStream(in.Project, id), store.NoStream, in.Project, projection.TypeTaskCreated,
		projection.TaskCreated{ID: id, Plan: in.Plan, Title: in.Title, Description: in.Description,
			Deps: in.Deps, Owner: in.Owner, Tags: in.Tags, Priority: in.Priority, Ref: in.Ref,
			Parent: in.Parent, Due: in.Due})
	return Ref{Kind: projection.KindTask, Project: in.Project, ID: id}, err
}

// Task returns a task, or ErrNotFound. The task may be shared with the
// engine's cache and other readers: it is read-only (see the package doc).
func (e *Engine) Task(project, id string) (*projection.Task, error) {
	return cached(e, taskKey(project, id), loadTask)
}

// readTask returns what fn makes of a task as Task reads it (ErrNotFound
// when there is none). In a Batch, fn reads the batch's own task
// (batchRead), with no copy of it: fn must copy what it keeps of it, and
// change nothing.
func readTask[T any](e *Engine, project, id string, fn func(t *projection.Task) (T, error)) (T, error) {
	var out T
	if ok, err := e.batchRead(func(src source) error {
		t, err := mustTask(src, project, id)
		if err == nil {
			out, err = fn(t)
		}
		return err
	}); ok {
		return out, err
	}
	t, err := e.Task(project, id)
	if err != nil {
		return out, err
	}
	return fn(t)
}

func loadTask(src source, k cacheKey) (*projection.Task, error) {
	return mustTask(src, k.project, k.id)
}

// TaskFilter selects tasks for Tasks. Zero fields match everything.
// After (a task id, T-n) keeps only the tasks after it in id order, the
// next page of a list that ended at it: those before it are skipped by
// id, never read.
type TaskFilter struct {
	Status string
	Plan   string
	Owner  string
	Tag    string
	After  string
}

func (f TaskFilter) match(t *projection.Task) bool {
	return (f.Status == "" || t.Status == f.Status) && (f.Plan == "" || t.Plan == f.Plan) &&
		(f.Owner == "" || t.Owner == f.Owner) && (f.Tag == "" || slices.Contains(t.Tags, f.Tag))
}

// Tasks lists a project's tasks that match f, in id order (EachTask,
// collected).
func (e *Engine) Tasks(project string, f TaskFilter) ([]*projection.Task, error) {
	var out []*projection.Task
	err := e.EachTask(project, f, appendTo(&out))
	return out, err
}

// EachTask calls fn with each of a project's tasks that match f, in id
// order, decoding only those that can match: the status index serves
// f.Status, and a task whose stored bytes lack f's plan, owner or tag is
// skipped undecoded. fn returning ErrStop ends the walk (EachTask returns
// nil); fn runs inside the read transaction and must not call the engine.
// ErrNotFound for an unknown project.
func (e *Engine) EachTask(project string, f TaskFilter, fn func(*projection.Task) error) error {
	return e.read(func(src source) error {
		if _, err := mustProject(src, project); err != nil {
			return err
		}
		return f.walk(src).each(src, project, fn)
	})
}

func (f TaskFilter) walk(src source) walk[projection.Task] {
	w := taskWalk(src)
	w.status, w.maybe, w.match = f.Status, containing(f.Plan, f.Owner, f.Tag), f.match
	w.after, _ = projection.IDNumber(projection.PrefixTask, f.After)
	return w
}

// TaskEdit is the input of EditTask: nil fields stay as they are.
type TaskEdit struct {
	Project     string    `json:"project"`
	ID          string    `json:"id"`
	Title       *string   `json:"title,omitempty"`
	Description *string   `json:"description,omitempty"`
	Owner       *string   `json:"owner,omitempty"`
	Tags        *[]string `json:"tags,omitempty"`
	Priority    *int      `json:"priority,omitempty"`
	Plan        *string   `json:"plan,omitempty"`
	Parent      *string   `json:"parent,omitempty"` // "" detaches it from its parent
	// Due is the new due date (ParseDue); 0 clears it.
	Due *projection.Time `json:"due,omitempty"`
	Write
}

func (in *TaskEdit) check() error {
	checks := []struct {
		field string
		v     *string
		check func(field, s string, limit int, required bool) error
		limit int
	}{{"title", in.Title, check.Line, MaxTitle}, {"description", in.Description, check.Text, MaxText}, {"owner", in.Owner, check.Line, MaxTitle}}
	for _, c := range checks {
		if c.v != nil {
			if err := c.check(c.field, *c.v, c.limit, c.field == "title"); err != nil {
				return err
			}
		}
	}
	if in.Priority != nil {
		if err := checkPriority(*in.Priority); err != nil {
			return err
		}
	}
	if in.Plan != nil && *in.Plan != "" {
		id, err := ParsePlanID(*in.Plan)
		if err != nil {
			return err
		}
		in.Plan = &id
	}
	if in.Parent != nil && *in.Parent != "" {
		id, err := ParseTaskID(*in.Parent)
		if err != nil {
			return err
		}
		in.Parent = &id
	}
	if in.Tags != nil {
		return checkTags(*in.Tags)
	}
	return nil
}

// EditTask changes a task's fields; only the fields that change are
// recorded, and an edit that changes nothing appends nothing.
func (e *Engine) EditTask(in TaskEdit) (*projection.Task, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	ref, err := e.command(in.Write, "task.edit", in, func(w *writer) (Ref, error) {
		ref := Ref{Kind: projection.KindTask, Project: in.Project, ID: in.ID}
		t, err := mustTask(w, in.Project, in.ID)
		if err != nil {
			return ref, err
		}
		if in.Plan != nil && *in.Plan != "" {
			if _, err := mustPlan(w, in.Project, *in.Plan); err != nil {
				return ref, err
			}
		}
		change := taskChange(t, in)
		if change.Parent != nil && *change.Parent != "" {
			open := t.Status != projection.StatusDone && t.Status != projection.StatusCancelled
			if err := checkParent(w, in.Project, in.ID, *change.Parent, open); err != nil {
				return ref, err
			}
		}
		if change == (projection.TaskUpdated{}) {
			return ref, checkVersion(in.Write, t.Version, projection.TaskStream(in.Project, in.ID))
		}
		_, err = w.emit(projection.TaskStream(in.Project, in.ID), in.expect(), in.Project, projection.TypeTaskUpdated, change)
		return ref, err
	})
	if err != nil {
		return nil, err
	}
	return e.Task(ref.Project, ref.ID)
}

// taskChange keeps the fields of in that differ from t.
func taskChange(t *projection.Task, in TaskEdit) projection.TaskUpdated {
	var c projection.TaskUpdated
	diff := func(cur string, v *string) *string {
		if v != nil && *v != cur {
			return v
		}
		return nil
	}
	c.Title, c.Description, c.Owner, c.Plan = diff(t.Title, in.Title), diff(t.Description, in.Description), diff(t.Owner, in.Owner), diff(t.Plan, in.Plan)
	if in.Priority != nil && *in.Priority != t.Priority {
		c.Priority = in.Priority
	}
	if in.Tags != nil && !slices.Equal(*in.Tags, t.Tags) {
		c.Tags = in.Tags
	}
	c.Parent = diff(t.Parent, in.Parent)
	if in.Due != nil && *in.Due != t.Due {
		due := int64(*in.Due)
		c.Due = &due
	}
	return c
}

// checkVersion applies --if-version to a command that appends nothing.
func checkVersion(wr Write, version uint64, stream string) error {
	if wr.IfVersion != 0 && wr.IfVersion != version {
		return &store.VersionConflict{Stream: stream, Expected: wr.IfVersion, Actual: version}
	}
	return nil
}

// errTransition is a refused status move.
func errTransition(t *projection.Task, to string) error {
	allowed := transitions[t.Status]
	moves := make([]string, len(allowed))
	for i, s := range allowed {
		moves[i] = s + " (" + verbs[s] + ")"
	}
	return fmt.Errorf("%w: task %s is %s and cannot move to %s; from %s it can move to: %s",
		store.ErrConflict, t.ID, t.Status, to, t.Status, strings.Join(moves, ", "))
}

// transitions is the task status machine (DESIGN.md §4).
var transitions = map[string][]string{
	projection.StatusTodo:      {projection.StatusDoing, projection.StatusBlocked, projection.StatusCancelled},
	projection.StatusDoing:     {projection.StatusDone, projection.StatusBlocked, projection.StatusCancelled},
	projection.StatusBlocked:   {projection.StatusTodo, projection.StatusDoing},
	projection.StatusDone:      {projection.StatusTodo},
	projection.StatusCancelled: {projection.StatusTodo},
}

// verbs name the command that makes each move.
var verbs = map[string]string{
	projection.StatusTodo:      "task reopen",
	projection.StatusDoing:     "task start",
	projection.StatusDone:      "task done",
	projection.StatusBlocked:   "task block",
	projection.StatusCancelled: "task cancel",
}

// ErrBlocked is wrapped by a refused `done`: the message lists what blocks it.
var ErrBlocked = errors.New("flow: blocked")
