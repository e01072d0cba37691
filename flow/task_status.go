package flow

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/flowctl/flowctl/flow/internal/check"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// Move is the input of MoveTask: a status change of one task.
type Move struct {
	Project string `json:"project"`
	ID      string `json:"id"`
	To      string `json:"to"` // todo, doing, done, blocked or cancelled
	Reason  string `json:"reason,omitempty"`
	Force   bool   `json:"force,omitempty"` // done despite open deps or running steps (never a pending approval)
	Write
}

// MoveTask changes a task's status along the status machine. `done` is
// refused with ErrBlocked while a dependency or a subtask is not done or a
// step is in progress, unless Force (which is recorded), and with ErrPending while an
// approval of the task is pending, Force or not.
// Moving a task to the status it has is a no-op.
func (e *Engine) MoveTask(in Move) (*projection.Task, error) {
	if _, ok := transitions[in.To]; !ok {
		return nil, fmt.Errorf("%w: status %q: use todo, doing, done, blocked or cancelled", ErrInvalid, in.To)
	}
	if err := check.Text("reason", in.Reason, MaxText, false); err != nil {
		return nil, err
	}
	ref, err := e.command(in.Write, "task.move", in, func(w *writer) (Ref, error) {
		ref := Ref{Kind: projection.KindTask, Project: in.Project, ID: in.ID}
		return ref, w.moveTask(in)
	})
	if err != nil {
		return nil, err
	}
	return e.Task(ref.Project, ref.ID)
}

func (w *writer) moveTask(in Move) error {
	if _, err := openProject(w, in.Project); err != nil {
		return err
	}
	t, err := mustTask(w, in.Project, in.ID)
	if err != nil {
		return err
	}
	stream := projection.TaskStream(in.Project, in.ID)
	if t.Status == in.To {
		return checkVersion(in.Write, t.Version, stream)
	}
	if !slices.Contains(transitions[t.Status], in.To) {
		return errTransition(t, in.To)
	}
	forced := false
	if in.To == projection.StatusDone {
		if forced, err = checkDone(w, t, in.Force); err != nil {
			return err
		}
	}
	_, err = w.emit(stream, in.expect(), in.Project, projection.TypeTaskStatusChanged,
		projection.TaskStatusChanged{From: t.Status, To: in.To, Reason: in.Reason, Forced: forced})
	return err
}

// checkDone says whether t may be done, and whether only force lets it:
// open dependencies, open subtasks (children neither done nor cancelled)
// and running steps are ErrBlocked unless force; an undecided approval is ErrPending even with force, as only a person's
// decision lets a task past it. The message lists every blocker.
func checkDone(src source, t *projection.Task, force bool) (forced bool, err error) {
	blockers, err := doneBlockers(src, t)
	switch {
	case err != nil || len(blockers) == 0:
		return false, err
	case len(t.PendingApprovals) > 0:
		return false, fmt.Errorf("%w: task %s cannot be done: %s (an approval must be granted or denied first; --force does not pass it)",
			ErrPending, t.ID, strings.Join(blockers, "; "))
	case !force:
		return false, fmt.Errorf("%w: task %s cannot be done: %s (use --force to override; it is recorded)",
			ErrBlocked, t.ID, strings.Join(blockers, "; "))
	}
	return true, nil
}

// doneBlockers lists what keeps t from being done.
func doneBlockers(src source, t *projection.Task) ([]string, error) {
	var out []string
	open, err := openDeps(src, t)
	if err != nil {
		return nil, err
	}
	if len(open) > 0 {
		out = append(out, "dependencies not done: "+strings.Join(open, ", "))
	}
	if kids, err := openChildren(src, t); err != nil {
		return nil, err
	} else if len(kids) > 0 {
		out = append(out, "subtasks not done: "+strings.Join(kids, ", "))
	}
	if len(t.PendingApprovals) > 0 {
		out = append(out, "approvals pending: "+strings.Join(t.PendingApprovals, ", "))
	}
	var running []string
	for _, s := range t.Steps {
		if s.Status == projection.StepInProgress {
			running = append(running, s.ID)
		}
	}
	if len(running) > 0 {
		out = append(out, "steps in progress: "+strings.Join(running, ", "))
	}
	return out, nil
}

// openDeps lists t's dependencies that are not done, as "T-2 (doing)".
func openDeps(src projection.Store, t *projection.Task) ([]string, error) {
	var open []string
	for _, d := range t.Deps {
		dt, err := mustTask(src, t.Project, d)
		if err != nil {
			return nil, err
		}
		if dt.Status != projection.StatusDone {
			open = append(open, fmt.Sprintf("%s (%s)", d, dt.Status))
		}
	}
	return open, nil
}

// DefaultLease is how long a claim holds without a heartbeat; MaxLease
// is the longest lease a claim or heartbeat may ask for.
const (
	DefaultLease = 30 * time.Minute
	MaxLease     = 7 * 24 * time.Hour
)

// Claim is the input of ClaimTask, Heartbeat and ReleaseTask.
type Claim struct {
	Project string        `json:"project"`
	ID      string        `json:"id"`
	Lease   time.Duration `json:"lease,omitempty"` // 0: DefaultLease; at most MaxLease
	Force   bool          `json:"force,omitempty"` // release a claim held by someone else
	Write
}

// checkLease refuses a negative lease or one over MaxLease (0 is the
// default).
func (in Claim) checkLease() error {
	if in.Lease < 0 || in.Lease > MaxLease {
		return fmt.Errorf("%w: lease %s: give a positive duration of at most %s (7 days)", ErrInvalid, in.Lease, MaxLease)
	}
	return nil
}

func (in Claim) lease() time.Duration {
	if in.Lease <= 0 {
		return DefaultLease
	}
	return in.Lease
}

// ClaimTask takes a lease on a task for this engine's actor and session.
// A live claim by someone else is a conflict; an expired one is taken
// over; claiming again by the same actor and session changes nothing.
func (e *Engine) ClaimTask(in Claim) (*projection.Task, error) {
	if err := in.checkLease(); err != nil {
		return nil, err
	}
	return e.claimCommand("task.claim", in, func(w *writer, t *projection.Task, now time.Time) error {
		if t.Claim.Live(now) {
			if e.holds(t.Claim) {
				return nil
			}
			return e.claimedBy(t)
		}
		if t.Status == projection.StatusDone || t.Status == projection.StatusCancelled {
			return fmt.Errorf("%w: task %s is %s; reopen it before claiming it", store.ErrConflict, t.ID, t.Status)
		}
		return w.emitClaim(in, projection.TypeTaskClaimed, now)
	})
}

// Heartbeat renews this actor's live claim on a task.
func (e *Engine) Heartbeat(in Claim) (*projection.Task, error) {
	if err := in.checkLease(); err != nil {
		return nil, err
	}
	return e.claimCommand("task.heartbeat", in, func(w *writer, t *projection.Task, now time.Time) error {
		if !t.Claim.Live(now) || !e.holds(t.Claim) {
			if t.Claim.Live(now) {
				return e.claimedBy(t)
			}
			return fmt.Errorf("%w: task %s has no live claim by %s; claim it first", store.ErrConflict, t.ID, e.opts.Actor)
		}
		return w.emitClaim(in, projection.TypeTaskLeaseRenewed, now)
	})
}

// ReleaseTask drops this actor's claim (anyone's with Force). Releasing a
// task nobody holds changes nothing.
func (e *Engine) ReleaseTask(in Claim) (*projection.Task, error) {
	return e.claimCommand("task.release", in, func(w *writer, t *projection.Task, now time.Time) error {
		if t.Claim == nil {
			return nil
		}
		if t.Claim.Live(now) && !e.holds(t.Claim) && !in.Force {
			return e.claimedBy(t)
		}
		_, err := w.emit(projection.TaskStream(in.Project, in.ID), in.expect(), in.Project, projection.TypeTaskReleased,
			projection.TaskReleased{Actor: e.opts.Actor, Session: e.opts.Session})
		return err
	})
}

func (e *Engine) claimCommand(name string, in Claim, fn func(w *writer, t *projection.Task, now time.Time) error) (*projection.Task, error) {
	ref, err := e.command(in.Write, name, in, func(w *writer) (Ref, error) {
		ref := Ref{Kind: projection.KindTask, Project: in.Project, ID: in.ID}
		if _, err := openProject(w, in.Project); err != nil {
			return ref, err
		}
		t, err := mustTask(w, in.Project, in.ID)
		if err != nil {
			return ref, err
		}
		if err := checkVersion(in.Write, t.Version, projection.TaskStream(in.Project, in.ID)); err != nil {
			return ref, err
		}
		return ref, fn(w, t, e.opts.Now())
	})
	if err != nil {
		return nil, err
	}
	return e.Task(ref.Project, ref.ID)
}

func (w *writer) emitClaim(in Claim, typ string, now time.Time) error {
	_, err := w.emit(projection.TaskStream(in.Project, in.ID), in.expect(), in.Project, typ,
		projection.TaskClaimed{Actor: w.e.opts.Actor, Session: w.e.opts.Session, LeaseUntil: now.Add(in.lease()).UnixNano()})
	return err
}

// holds reports whether c belongs to this engine's actor and session.
func (e *Engine) holds(c *projection.Claim) bool {
	return c != nil && c.Actor == e.opts.Actor && c.Session == e.opts.Session
}

func (e *Engine) claimedBy(t *projection.Task) error {
	who := t.Claim.Actor
	if t.Claim.Session != "" {
		who += " (session " + t.Claim.Session + ")"
	}
	return fmt.Errorf("%w: task %s is claimed by %s until %s", store.ErrConflict, t.ID, who,
		t.Claim.LeaseUntil.Std().Format(time.RFC3339))
}
