package flow

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// DepChange is the input of AddDep and RemoveDep: task ID depends on Dep.
type DepChange struct {
	Project string `json:"project"`
	ID      string `json:"id"`
	Dep     string `json:"dep"`
	Write
}

// ErrCycle is wrapped by a refused dependency that would close a cycle.
var ErrCycle = fmt.Errorf("%w: dependency cycle", store.ErrConflict)

// AddDep makes ID depend on Dep. An edge that would close a cycle is
// refused with ErrCycle and a message that prints the cycle; adding an
// edge that exists changes nothing.
func (e *Engine) AddDep(in DepChange) (*projection.Task, error) {
	return e.depCommand("dep.add", in, func(w *writer, t *projection.Task) error {
		if in.Dep == in.ID {
			return fmt.Errorf("%w: %s -> %s (a task cannot depend on itself)", ErrCycle, in.ID, in.ID)
		}
		if _, err := mustTask(w, in.Project, in.Dep); err != nil {
			return err
		}
		if slices.Contains(t.Deps, in.Dep) {
			return checkVersion(in.Write, t.Version, projection.TaskStream(in.Project, in.ID))
		}
		path, err := depPath(w, in.Project, in.Dep, in.ID)
		if err != nil {
			return err
		}
		if path != nil {
			cycle := append([]string{in.ID}, path...)
			return fmt.Errorf("%w: %s", ErrCycle, strings.Join(cycle, " -> "))
		}
		return w.emitDeps(in, projection.TaskDepsChanged{Added: []string{in.Dep}})
	})
}

// RemoveDep drops the dependency of ID on Dep; removing one that does not
// exist changes nothing.
func (e *Engine) RemoveDep(in DepChange) (*projection.Task, error) {
	return e.depCommand("dep.rm", in, func(w *writer, t *projection.Task) error {
		if !slices.Contains(t.Deps, in.Dep) {
			return checkVersion(in.Write, t.Version, projection.TaskStream(in.Project, in.ID))
		}
		return w.emitDeps(in, projection.TaskDepsChanged{Removed: []string{in.Dep}})
	})
}

func (e *Engine) depCommand(name string, in DepChange, fn func(*writer, *projection.Task) error) (*projection.Task, error) {
	ref, err := e.command(in.Write, name, in, func(w *writer) (Ref, error) {
		ref := Ref{Kind: projection.KindTask, Project: in.Project, ID: in.ID}
		if _, err := openProject(w, in.Project); err != nil {
			return ref, err
		}
		t, err := mustTask(w, in.Project, in.ID)
		if err != nil {
			return ref, err
		}
		return ref, fn(w, t)
	})
	if err != nil {
		return nil, err
	}
	return e.Task(ref.Project, ref.ID)
}

func (w *writer) emitDeps(in DepChange, change projection.TaskDepsChanged) error {
	_, err := w.emit(projection.TaskStream(in.Project, in.ID), in.expect(), in.Project, projection.TypeTaskDepsChanged, change)
	return err
}

// depPath returns a dependency path from `from` to `to` (both included),
// or nil when `to` is not reachable from `from` through dependencies.
func depPath(src projection.Store, project, from, to string) ([]string, error) {
	seen := map[string]bool{}
	var walk func(id string) ([]string, error)
	walk = func(id string) ([]string, error) {
		if id == to {
			return []string{id}, nil
		}
		if seen[id] {
			return nil, nil
		}
		seen[id] = true
		t, err := mustTask(src, project, id)
		if err != nil {
			return nil, err
		}
		for _, d := range t.Deps {
			p, err := walk(d)
			if err != nil || p != nil {
				return append([]string{id}, p...), err
			}
		}
		return nil, nil
	}
	return walk(from)
}

// Deps lists what a task depends on and what depends on it.
type Deps struct {
	Task       string             `json:"task"`
	Deps       []*projection.Task `json:"deps"`
	Dependents []*projection.Task `json:"dependents"`
}

// TaskDeps returns the dependencies and dependents of a task: its
// dependencies read by key, its dependents by a walk that decodes only the
// tasks whose stored bytes hold its id.
func (e *Engine) TaskDeps(project, id string) (*Deps, error) {
	out := &Deps{Task: id, Deps: []*projection.Task{}, Dependents: []*projection.Task{}}
	err := e.read(func(src source) error {
		t, err := mustTask(src, project, id)
		if err != nil {
			return err
		}
		for _, d := range t.Deps {
			dep, err := src.Task(project, d)
			if err != nil {
				return err
			}
			if dep != nil {
				out.Deps = append(out.Deps, dep)
			}
		}
		slices.SortFunc(out.Deps, func(a, b *projection.Task) int { return projection.CompareIDs(a.ID, b.ID) })
		dependents := taskWalk(src)
		dependents.maybe = containing(id)
		dependents.match = func(o *projection.Task) bool { return slices.Contains(o.Deps, id) }
		return dependents.each(src, project, appendTo(&out.Dependents))
	})
	return out, err
}

// Readiness says whether a task is ready to be worked on, and if not, why.
type Readiness struct {
	Task    *projection.Task `json:"task"`
	Ready   bool             `json:"ready"`
	Reasons []string         `json:"reasons"`
}

// Ready lists the project's tasks with their readiness, in ReadyOrder:
// ready tasks are todo, have every dependency done, no pending approval and no live claim
// by someone other than this engine's actor. With all false, only ready
// tasks are returned.
func (e *Engine) Ready(project string, all bool) ([]Readiness, error) {
	return e.ReadyFor(project, e.opts.Actor, all)
}

// ReadyFor is Ready as seen by actor: its own live claims do not keep a
// task from being ready for it (EachReady, collected).
func (e *Engine) ReadyFor(project, actor string, all bool) ([]Readiness, error) {
	var out []Readiness
	err := e.EachReady(project, actor, all, appendTo(&out))
	return out, err
}

// EachReady calls fn with the readiness of the project's tasks as seen by
// actor, in ReadyOrder: every task with all, else only the ready ones. It
// decodes only the tasks it reports on (without all, the todo tasks, which
// the status index lists) and reads their dependencies' statuses from the
// index, one by key. fn returning ErrStop ends the list (see EachTask).
func (e *Engine) EachReady(project, actor string, all bool, fn func(Readiness) error) error {
	var out []Readiness
	if err := e.eachReady(project, actor, all, appendTo(&out)); err != nil {
		return err
	}
	slices.SortStableFunc(out, func(a, b Readiness) int { return ReadyOrder(a.Task, b.Task) })
	for _, r := range out {
		if err := fn(r); err != nil {
			if errors.Is(err, ErrStop) {
				return nil
			}
			return err
		}
	}
	return nil
}

// ReadyOrder is the order of ready: priority first (higher first), then
// due date (sooner first, none last), then age (older first: created
// earlier, then lower id).
func ReadyOrder(a, b *projection.Task) int {
	if c := cmp.Compare(b.Priority, a.Priority); c != 0 {
		return c
	}
	if a.Due != b.Due {
		switch {
		case a.Due == 0:
			return 1
		case b.Due == 0:
			return -1
		}
		return cmp.Compare(a.Due, b.Due)
	}
	if c := cmp.Compare(a.CreatedAt, b.CreatedAt); c != 0 {
		return c
	}
	return projection.CompareTaskIDs(a.ID, b.ID)
}

// eachReady is EachReady in id order.
func (e *Engine) eachReady(project, actor string, all bool, fn func(Readiness) error) error {
	now := e.opts.Now()
	return e.read(func(src source) error {
		if _, err := mustProject(src, project); err != nil {
			return err
		}
		w := taskWalk(src)
		if !all {
			w.status = projection.StatusTodo
			w.match = func(t *projection.Task) bool { return t.Status == projection.StatusTodo }
		}
		status := map[string]string{}
		return w.each(src, project, func(t *projection.Task) error {
			if err := depStatuses(src, project, t, status); err != nil {
				return err
			}
			r := Readiness{Task: t, Reasons: notReady(t, status, actor, now)}
			r.Ready = len(r.Reasons) == 0
			if r.Ready || all {
				return fn(r)
			}
			return nil
		})
	})
}

// depStatuses adds to status the status of each of t's dependencies that
// it lacks, read from the status index ("" for a task that is not there).
func depStatuses(src source, project string, t *projection.Task, status map[string]string) error {
	for _, d := range t.Deps {
		if _, ok := status[d]; ok {
			continue
		}
		s, err := src.SummaryStatus(projstore.BucketTasks, project, d)
		if err != nil {
			return err
		}
		status[d] = s
	}
	return nil
}

func notReady(t *projection.Task, status map[string]string, actor string, now time.Time) []string {
	reasons := []string{}
	if t.Status != projection.StatusTodo {
		reasons = append(reasons, "status is "+t.Status)
	}
	var open []string
	for _, d := range t.Deps {
		if status[d] != projection.StatusDone {
			open = append(open, d+" ("+status[d]+")")
		}
	}
	if len(open) > 0 {
		reasons = append(reasons, "waiting for "+strings.Join(open, ", "))
	}
	if len(t.PendingApprovals) > 0 {
		reasons = append(reasons, "approval pending: "+strings.Join(t.PendingApprovals, ", "))
	}
	if t.Claim.Live(now) && t.Claim.Actor != actor {
		reasons = append(reasons, "claimed by "+t.Claim.Actor+" until "+t.Claim.LeaseUntil.Std().Format(time.RFC3339))
	}
	return reasons
}
