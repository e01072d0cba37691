package projection

import (
	"fmt"
	"slices"
)

// taskEvent folds the events that change one task, on its own stream.
func (f *fold) taskEvent(t *Task) error {
	switch f.kind {
	case kindTaskUpdated:
		var p TaskUpdated
		if err := f.payload(p.unmarshal); err != nil {
			return err
		}
		setIf(&t.Title, p.Title)
		setIf(&t.Description, p.Description)
		setIf(&t.Owner, p.Owner)
		setIf(&t.Priority, p.Priority)
		setIf(&t.Plan, p.Plan)
		if p.Tags != nil {
			t.Tags = NonNil(slices.Clone(*p.Tags))
		}
		if p.Due != nil {
			t.Due = Time(*p.Due)
		}
		if p.Parent != nil && *p.Parent != "" {
			if err := f.project(countParent); err != nil {
				return err
			}
		}
		setIf(&t.Parent, p.Parent)
	case kindTaskDepsChanged:
		var p TaskDepsChanged
		if err := f.payload(p.unmarshal); err != nil {
			return err
		}
		t.Deps = slices.DeleteFunc(t.Deps, func(d string) bool { return slices.Contains(p.Removed, d) })
		for _, d := range p.Added {
			if !slices.Contains(t.Deps, d) {
				t.Deps = append(t.Deps, d)
			}
		}
		slices.SortFunc(t.Deps, CompareTaskIDs)
	case kindTaskStatusChanged:
		var p TaskStatusChanged
		if err := f.payload(p.unmarshal); err != nil {
			return err
		}
		t.Status, t.Forced = p.To, p.Forced
	case kindTaskClaimed, kindTaskLeaseRenewed:
		var p TaskClaimed
		if err := f.payload(p.unmarshal); err != nil {
			return err
		}
		claimedAt := TimeOf(f.r.Time)
		if f.kind == kindTaskLeaseRenewed && t.Claim != nil {
			claimedAt = t.Claim.ClaimedAt
		}
		t.Claim = &Claim{Actor: p.Actor, Session: p.Session, LeaseUntil: Time(p.LeaseUntil), ClaimedAt: claimedAt}
	case kindTaskReleased:
		t.Claim = nil
	case kindTaskContextMerged:
		return f.contextMerged(t)
	case kindStepAdded:
		var p StepAdded
		if err := f.payload(p.unmarshal); err != nil {
			return err
		}
		if cap(t.Steps) == 0 { // a task has a few steps: room for them at once, not grown thrice
			if f.mem != nil {
				t.Steps = carveN(&f.seen.arena.steps, 4)
			} else {
				t.Steps = make([]Step, 0, 4)
			}
		}
		t.Steps = append(t.Steps, Step{ID: p.ID, Title: p.Title, Status: StepPending, UpdatedAt: TimeOf(f.r.Time)})
	case kindStepStatusChanged:
		return f.stepStatus(t)
	}
	return nil
}

func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

func (f *fold) contextMerged(t *Task) error {
	var p TaskContextMerged
	var patch []byte // the payload's own bytes: read, never kept
	err := f.payload(func(b []byte, seen *stringCache) error {
		r := mpReader{b: b, seen: seen}
		return p.decodeRefs(&r, &patch)
	})
	if err != nil {
		return err
	}
	c := f.canon
	if c == nil {
		c = getCanon()
		defer putCanon(c)
	} else {
		defer c.trim()
	}
	var next JSON
	if p.Replace {
		next, err = c.canonicalDoc(JSON(patch)) // a copy: the result may be the patch itself
	} else {
		next, err = c.mergePatch(t.Context, JSON(lent(patch))) // mergePatch keeps none of the patch
	}
	if err != nil {
		return fmt.Errorf("%w: context patch: %v", ErrInconsistent, err)
	}
	t.Context = next
	t.ContextVersion++
	return nil
}

func (f *fold) stepStatus(t *Task) error {
	var p StepStatusChanged
	var id []byte // only looked up
	var progress int
	var hasProgress bool
	err := f.payload(func(b []byte, seen *stringCache) error {
		r := mpReader{b: b, seen: seen}
		return p.decodeRefs(&r, &id, &progress, &hasProgress)
	})
	if err != nil {
		return err
	}
	s := t.Step(string(id))
	if s == nil {
		return fmt.Errorf("%w: step %s does not exist", ErrInconsistent, id)
	}
	now := TimeOf(f.r.Time)
	if p.To != "" && p.To != s.Status {
		stepMoved(s, p.To, now)
	}
	switch {
	case hasProgress:
		s.Progress = progress
	case s.Status == StepCompleted:
		s.Progress = 100
	}
	if p.Note != "" {
		s.Note = p.Note
	}
	if p.Result != "" {
		s.Result = p.Result
	}
	if p.Error != "" {
		s.Error = p.Error
	}
	if p.ResultData != "" {
		s.ResultData = JSON(p.ResultData)
	}
	s.UpdatedAt = now
	return nil
}

// stepMoved moves s to status to at now: a start begins an attempt (the
// first, or a retry from failed, which clears what the failed attempt
// left: its error, end time and progress); completed, failed and skipped
// end it.
func stepMoved(s *Step, to string, now Time) {
	from := s.Status
	s.Status = to
	switch to {
	case StepInProgress:
		s.Attempt++
		s.StartedAt, s.CompletedAt = now, 0
		if from == StepFailed {
			s.Error, s.Progress = "", 0
		}
	case StepCompleted, StepFailed, StepSkipped:
		s.CompletedAt = now
	}
}

func (f *fold) noteAdded() error {
	var p NoteAdded
	var text, kind []byte // the fold keeps neither
	err := f.payload(func(b []byte, seen *stringCache) error {
		r := mpReader{b: b, seen: seen}
		return p.decodeRefs(&r, &text, &kind)
	})
	if err != nil {
		return err
	}
	if p.Task == "" {
		return nil
	}
	return f.task(p.Task, func(t *Task) error { t.Notes++; return nil })
}

func (f *fold) approvalRequested() error {
	var p ApprovalRequested
	if err := f.payload(p.unmarshal); err != nil {
		return err
	}
	if err := f.counter(PrefixApproval, p.ID, func(c *Counters) *int { return &c.Approvals }); err != nil {
		return err
	}
	if p.Task != "" {
		err := f.task(p.Task, func(t *Task) error {
			if cap(t.PendingApprovals) == 0 && f.mem != nil { // a task waits on one or two at a time
				t.PendingApprovals = carveN(&f.seen.arena.strs, 2)
			}
			t.PendingApprovals = append(t.PendingApprovals, p.ID)
			slices.SortFunc(t.PendingApprovals, CompareIDs)
			return nil
		})
		if err != nil {
			return err
		}
	}
	a := f.newApproval()
	*a = Approval{
		Project: f.r.Project, ID: p.ID, Task: p.Task, Step: p.Step, Message: p.Message, Code: p.Code,
		Action: JSON(p.Action), ActionHash: p.ActionHash, Expires: Time(p.Expires), Status: ApprovalPending,
		RequestedBy: f.r.Actor, Meta: f.meta(),
	}
	return putNew(f, f.s.PutApproval, (*Memory).addApproval, a)
}

func (f *fold) approvalDecided() error {
	var p ApprovalDecided
	if err := f.payload(p.unmarshal); err != nil {
		return err
	}
	a, err := f.s.Approval(f.r.Project, p.ID)
	if err != nil {
		return err
	}
	if a == nil {
		return fmt.Errorf("%w: approval %s does not exist", ErrInconsistent, p.ID)
	}
	a.Status, a.DecidedBy, a.Comment, a.DecidedAt = p.Decision, p.By, p.Comment, TimeOf(f.r.Time)
	a.Version, a.Seq, a.UpdatedAt = f.r.Version, f.r.Seq, TimeOf(f.r.Time)
	if a.Task != "" {
		err := f.task(a.Task, func(t *Task) error {
			t.PendingApprovals = slices.DeleteFunc(t.PendingApprovals, func(id string) bool { return id == p.ID })
			return nil
		})
		if err != nil {
			return err
		}
	}
	return putBack(f, f.s.PutApproval, a)
}

func (f *fold) execRecorded() error {
	// The payload is read straight into the exec it makes (carved from
	// the Memory's arena): one exec record is most of what an Exec holds.
	x := f.newExec()
	if err := f.payload(x.ExecRecorded.unmarshal); err != nil {
		return err
	}
	p := &x.ExecRecorded
	if err := f.counter(PrefixExec, p.ID, func(c *Counters) *int { return &c.Execs }); err != nil {
		return err
	}
	if p.Task != "" {
		if err := f.task(p.Task, func(t *Task) error { t.Execs++; return nil }); err != nil {
			return err
		}
	}
	x.Project, x.Actor, x.Meta = f.r.Project, f.r.Actor, f.meta()
	return putNew(f, f.s.PutExec, (*Memory).addExec, x)
}
