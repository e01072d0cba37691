package flow

import (
	"fmt"
	"strings"
	"time"

	"github.com/flowctl/flowctl/projection"
)

// TaskUpdate is the input of UpdateTask: several changes to one task, made
// in this order — claim or heartbeat, the edit of fields, the status,
// release — in one transaction.
type TaskUpdate struct {
	Project string
	ID      string
	// Claim is "claim", "heartbeat", "release" or "" (none).
	Claim string
	// Lease of a claim or heartbeat: 0 is DefaultLease.
	Lease  time.Duration
	Status string // "" for no move
	Reason string // of the move
	// Force finishes despite open deps or running steps, and releases
	// another actor's claim.
	Force bool
	// The fields to change (nil: unchanged), as in TaskEdit.
	Title, Description, Owner, Plan *string
	Tags                            *[]string
	Priority                        *int
	Parent                          *string          // "" detaches
	Due                             *projection.Time // 0 clears
	// Write guards the first part with IfVersion; each part gets the key
	// SubKey(Key, part name).
	Write
}

func (u TaskUpdate) edits() bool {
	return u.Title != nil || u.Description != nil || u.Owner != nil || u.Tags != nil || u.Priority != nil || u.Plan != nil ||
		u.Parent != nil || u.Due != nil
}

// UpdateTask applies the parts of u and returns the task and the names of
// the parts applied, in order. Either every part is applied, or none is:
// a part that fails names the parts before it and the whole update is
// undone. ErrInvalid for an unknown claim or nothing to do.
func (e *Engine) UpdateTask(u TaskUpdate) (*projection.Task, []string, error) {
	switch u.Claim {
	case "", "claim", "heartbeat", "release":
	default:
		return nil, nil, fmt.Errorf("%w: claim %q: use claim, heartbeat or release", ErrInvalid, u.Claim)
	}
	if u.Claim == "" && u.Status == "" && !u.edits() {
		return nil, nil, fmt.Errorf("%w: nothing to update: give claim, status or a field", ErrInvalid)
	}
	var r *taskUpdate
	err := e.Batch(func(b *Engine) error {
		r = b.runTaskUpdate(u)
		return r.err
	})
	if err != nil {
		return nil, nil, err
	}
	return r.task, r.applied, nil
}

// runTaskUpdate runs the parts of u in order through e (a batch: they
// commit together).
func (e *Engine) runTaskUpdate(u TaskUpdate) *taskUpdate {
	r := &taskUpdate{key: u.Key, ifVersion: u.IfVersion, applied: []string{}}
	claim := Claim{Project: u.Project, ID: u.ID, Lease: u.Lease, Force: u.Force}
	switch u.Claim {
	case "claim":
		r.step("claim", func(w Write) (*projection.Task, error) { claim.Write = w; return e.ClaimTask(claim) })
	case "heartbeat":
		r.step("heartbeat", func(w Write) (*projection.Task, error) { claim.Write = w; return e.Heartbeat(claim) })
	}
	if u.edits() {
		r.step("edit", func(w Write) (*projection.Task, error) {
			return e.EditTask(TaskEdit{Project: u.Project, ID: u.ID, Title: u.Title, Description: u.Description,
				Owner: u.Owner, Tags: u.Tags, Priority: u.Priority, Plan: u.Plan, Parent: u.Parent, Due: u.Due, Write: w})
		})
	}
	if u.Status != "" {
		r.step("status", func(w Write) (*projection.Task, error) {
			return e.MoveTask(Move{Project: u.Project, ID: u.ID, To: u.Status, Reason: u.Reason, Force: u.Force, Write: w})
		})
	}
	if u.Claim == "release" {
		r.step("release", func(w Write) (*projection.Task, error) { claim.Write = w; return e.ReleaseTask(claim) })
	}
	return r
}

// taskUpdate runs the parts of an update one after the other, each with
// a key derived from the update's; IfVersion guards the first.
type taskUpdate struct {
	key       string
	ifVersion uint64
	task      *projection.Task
	applied   []string
	err       error
}

func (r *taskUpdate) step(name string, fn func(Write) (*projection.Task, error)) {
	if r.err != nil {
		return
	}
	t, err := fn(Write{IfVersion: r.ifVersion, Key: SubKey(r.key, name)})
	r.ifVersion = 0
	if err != nil {
		if len(r.applied) > 0 {
			err = fmt.Errorf("%s (after %s; nothing was applied): %w", name, strings.Join(r.applied, ", "), err)
		}
		r.err = err
		return
	}
	r.task = t
	r.applied = append(r.applied, name)
}
