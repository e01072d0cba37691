package flow

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/flowctl/flowctl/flow/internal/check"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// Errors of approvals beyond the common ones. All three are conflicts
// (exit 4); a pending approval is ErrPending (exit 6).
var (
	// ErrDenied: the approval was denied.
	ErrDenied = fmt.Errorf("%w: approval denied", store.ErrConflict)
	// ErrExpired: the approval expired before it was granted.
	ErrExpired = fmt.Errorf("%w: approval expired", store.ErrConflict)
	// ErrActionMismatch: the approval was granted for another action.
	ErrActionMismatch = fmt.Errorf("%w: action does not match", store.ErrConflict)
)

// MaxApprovalTTL is the longest expiry a request may have (one year);
// a request without one never expires.
const MaxApprovalTTL = 365 * 24 * time.Hour

// MaxCode is the largest code snippet an approval or exec record keeps.
const MaxCode = 256 << 10

// kindApproval names approvals in a Ref.
const kindApproval = "approval"

// ActionHash is the hex SHA-256 of an action's exact bytes: what an
// approval binds to. An approval without an action binds to the empty one.
func ActionHash(action []byte) string {
	h := sha256.Sum256(action)
	return hex.EncodeToString(h[:])
}

// NewApproval is the input of RequestApproval.
type NewApproval struct {
	Project string `json:"project"`
	Task    string `json:"task,omitempty"` // T-n; empty: an approval of the project
	Step    string `json:"step,omitempty"` // T-n.m; implies its task
	Message string `json:"message"`
	Code    string `json:"code,omitempty"`
	// Action is the proposed action as JSON text, kept and hashed exactly
	// as given (whitespace included).
	Action string `json:"action,omitempty"`
	// TTL bounds how long the request can be granted, at most
	// MaxApprovalTTL; 0: it never expires.
	TTL time.Duration `json:"ttl,omitempty"`
	Write
}

func (in *NewApproval) check() error {
	if err := check.Text("message", in.Message, MaxText, true); err != nil {
		return err
	}
	if err := check.Text("code", in.Code, MaxCode, false); err != nil {
		return err
	}
	if err := checkAction(in.Action); err != nil {
		return err
	}
	if in.TTL < 0 {
		return fmt.Errorf("%w: expiry %s is negative", ErrInvalid, in.TTL)
	}
	if in.TTL > MaxApprovalTTL {
		return fmt.Errorf("%w: expiry %s is more than a year (%s); leave it out for a request that never expires", ErrInvalid, in.TTL, MaxApprovalTTL)
	}
	return taskStep(&in.Task, &in.Step)
}

func checkAction(action string) error {
	if action == "" {
		return nil
	}
	if len(action) > MaxInput {
		return fmt.Errorf("%w: action is %d bytes, the limit is %d", ErrInvalid, len(action), MaxInput)
	}
	if err := CheckJSON([]byte(action)); err != nil {
		return fmt.Errorf("%w: action is not valid JSON: %v", ErrInvalid, err)
	}
	return nil
}

// taskStep normalizes a task id and a step id; a step alone names its task.
func taskStep(task, step *string) error {
	if *task != "" {
		id, err := ParseTaskID(*task)
		if err != nil {
			return err
		}
		*task = id
	}
	if *step == "" {
		return nil
	}
	t, s, err := ParseStepID(*step)
	if err != nil {
		return err
	}
	if *task != "" && *task != t {
		return fmt.Errorf("%w: step %s is not a step of task %s", ErrInvalid, s, *task)
	}
	*task, *step = t, s
	return nil
}

// RequestApproval asks for a decision on a proposed action, with the next
// A-n of the project. An approval of a task is appended to the task's
// stream (and keeps the task from being done while it is pending);
// otherwise to the project's. The task must exist and be neither done nor
// cancelled; the step, when given, must be one of its steps.
func (e *Engine) RequestApproval(in NewApproval) (*projection.Approval, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	ref, err := e.command(in.Write, "approval.request", in, func(w *writer) (Ref, error) {
		return w.requestApproval(in)
	})
	if err != nil {
		return nil, err
	}
	return e.Approval(ref.Project, ref.ID)
}

func (w *writer) requestApproval(in NewApproval) (Ref, error) {
	p, err := openProject(w, in.Project)
	if err != nil {
		return Ref{}, err
	}
	t, err := subject(w, in.Project, in.Task, in.Step)
	if err != nil {
		return Ref{}, err
	}
	if t != nil && (t.Status == projection.StatusDone || t.Status == projection.StatusCancelled) {
		return Ref{}, fmt.Errorf("%w: task %s is %s; reopen it before asking for an approval", store.ErrConflict, t.ID, t.Status)
	}
	id := projection.ShortID(projection.PrefixApproval, p.Counters.Approvals+1)
	var expires int64
	if in.TTL > 0 {
		expires = w.e.opts.Now().Add(in.TTL).UnixNano()
	}
	_, err = w.emit(subjectStream(in.Project, in.Task), in.expect(), in.Project, projection.TypeApprovalRequested,
		projection.ApprovalRequested{ID: id, Task: in.Task, Step: in.Step, Message: in.Message, Code: in.Code,
			Action: in.Action, ActionHash: ActionHash([]byte(in.Action)), Expires: expires})
	return Ref{Kind: kindApproval, Project: in.Project, ID: id}, err
}

// subject checks the task and step an approval or exec record is about,
// returning the task (nil for the project).
func subject(src projection.Store, project, task, step string) (*projection.Task, error) {
	if task == "" {
		return nil, nil
	}
	t, err := mustTask(src, project, task)
	if err != nil {
		return nil, err
	}
	if step != "" && t.Step(step) == nil {
		return nil, fmt.Errorf("%w: step %s of task %s", ErrNotFound, step, task)
	}
	return t, nil
}

// subjectStream is the stream of a task's events, or of the project's.
func subjectStream(project, task string) string {
	if task != "" {
		return projection.TaskStream(project, task)
	}
	return projection.ProjectStream(project)
}

// Decision is the input of DecideApproval.
type Decision struct {
	Project string `json:"project"`
	ID      string `json:"id"`
	Grant   bool   `json:"grant"` // false: deny
	Comment string `json:"comment,omitempty"`
	Write
}

// DecideApproval grants or denies a pending approval, recording this
// engine's actor as the one who decided; the decision goes on the stream
// of the request. Deciding an approval that is already decided, or
// granting one that has expired, is a conflict; so is deciding one's own
// request (ErrSelfDecision) unless the project's approvals.self_grant
// setting is "allow". IfVersion is compared with the approval's version.
func (e *Engine) DecideApproval(in Decision) (*projection.Approval, error) {
	if err := check.Text("comment", in.Comment, MaxText, false); err != nil {
		return nil, err
	}
	ref, err := e.command(in.Write, "approval.decide", in, func(w *writer) (Ref, error) {
		return Ref{Kind: kindApproval, Project: in.Project, ID: in.ID}, w.decide(in)
	})
	if err != nil {
		return nil, err
	}
	return e.Approval(ref.Project, ref.ID)
}

func (w *writer) decide(in Decision) error {
	p, err := mustProject(w, in.Project)
	if err != nil {
		return err
	}
	a, err := mustApproval(w, in.Project, in.ID)
	if err != nil {
		return err
	}
	if err := checkVersion(in.Write, a.Version, "approval "+a.ID); err != nil {
		return err
	}
	if a.Status != projection.ApprovalPending {
		return fmt.Errorf("%w: approval %s is already %s (by %s); only a pending approval can be decided",
			store.ErrConflict, a.ID, a.Status, a.DecidedBy)
	}
	if in.Grant && expired(a, w.e.opts.Now()) {
		return fmt.Errorf("%w: %s at %s; it can no longer be granted", ErrExpired, a.ID, fmtExpiry(a))
	}
	if a.RequestedBy == w.e.opts.Actor && setting(p, SettingSelfGrant) != "allow" {
		return fmt.Errorf("%w: %s was requested by %s: ask someone else (or allow it: flowctl project set %s allow)",
			ErrSelfDecision, a.ID, actorName(a.RequestedBy), SettingSelfGrant)
	}
	decision := projection.ApprovalDenied
	if in.Grant {
		decision = projection.ApprovalGranted
	}
	_, err = w.emit(subjectStream(in.Project, a.Task), store.Any, in.Project, projection.TypeApprovalDecided,
		projection.ApprovalDecided{ID: a.ID, Decision: decision, By: w.e.opts.Actor, Comment: in.Comment})
	return err
}

func mustApproval(src projection.Store, project, id string) (*projection.Approval, error) {
	a, err := src.Approval(project, id)
	if err == nil && a == nil {
		err = fmt.Errorf("%w: approval %s in project %s", ErrNotFound, id, project)
	}
	return a, err
}

// expired reports whether a's request can no longer be granted at now.
func expired(a *projection.Approval, now time.Time) bool {
	return !a.Expires.IsZero() && !now.Before(a.Expires.Std())
}

// ApprovalStatusExpired is the status reads give a pending approval whose
// request expired (by the engine's clock): it can no longer be granted.
// The projections keep it pending; the fold reads no clock.
const ApprovalStatusExpired = "expired"

// shown returns a as reads show it at now: a copy with status "expired"
// when it is pending past its expiry, else a itself.
func shown(a *projection.Approval, now time.Time) *projection.Approval {
	if a == nil || a.Status != projection.ApprovalPending || !expired(a, now) {
		return a
	}
	c := a.Clone()
	c.Status = ApprovalStatusExpired
	return c
}

// ApprovalShown returns a as reads show it at now: a copy with status
// "expired" (ApprovalStatusExpired) when it is pending past its expiry,
// else a itself. For readers that read approvals without an engine's
// clock (Reader).
func ApprovalShown(a *projection.Approval, now time.Time) *projection.Approval { return shown(a, now) }

// actorName is an actor for messages: "(no actor)" for none.
func actorName(actor string) string {
	if actor == "" {
		return "(no actor)"
	}
	return actor
}

func fmtExpiry(a *projection.Approval) string { return a.Expires.Std().Format(time.RFC3339) }

// Approval returns an approval, or ErrNotFound.
func (e *Engine) Approval(project, id string) (*projection.Approval, error) {
	var a *projection.Approval
	err := e.read(func(src source) error {
		var err error
		a, err = mustApproval(src, project, id)
		return err
	})
	return shown(a, e.opts.Now()), err
}

// ApprovalFilter selects approvals for Approvals. Zero fields match all.
type ApprovalFilter struct {
	Status string // pending, expired, granted or denied
	Task   string // T-n
}

func (f *ApprovalFilter) check() error {
	switch f.Status {
	case "", projection.ApprovalPending, ApprovalStatusExpired, projection.ApprovalGranted, projection.ApprovalDenied:
	default:
		return fmt.Errorf("%w: approval status %q: use pending, expired, granted or denied", ErrInvalid, f.Status)
	}
	if f.Task == "" {
		return nil
	}
	id, err := ParseTaskID(f.Task)
	f.Task = id
	return err
}

// match tests a, as shown (its status may be expired).
func (f ApprovalFilter) match(a *projection.Approval) bool {
	return (f.Status == "" || a.Status == f.Status) && (f.Task == "" || a.Task == f.Task)
}

// indexed is the stored status the status index serves f.Status from:
// an expired approval is stored pending.
func (f ApprovalFilter) indexed() string {
	if f.Status == ApprovalStatusExpired {
		return projection.ApprovalPending
	}
	return f.Status
}

// Approvals lists a project's approvals that match f, in id order
// (EachApproval, collected).
func (e *Engine) Approvals(project string, f ApprovalFilter) ([]*projection.Approval, error) {
	var out []*projection.Approval
	err := e.EachApproval(project, f, appendTo(&out))
	return out, err
}

// EachApproval calls fn with each of a project's approvals that match f,
// as shown (a pending one past its expiry has status "expired"), in id order, decoding only those that can match: the status index serves
// f.Status, and one whose stored bytes lack f.Task is skipped undecoded.
// fn returning ErrStop ends the walk (see EachTask). Errors: ErrInvalid (the
// filter), ErrNotFound (the project, or the task filtered on).
func (e *Engine) EachApproval(project string, f ApprovalFilter, fn func(*projection.Approval) error) error {
	if err := f.check(); err != nil {
		return err
	}
	return e.read(func(src source) error {
		if err := checkScope(src, project, f.Task); err != nil {
			return err
		}
		now := e.opts.Now()
		w := approvalWalk(src)
		w.status, w.maybe = f.indexed(), containing(f.Task)
		w.match = func(a *projection.Approval) bool { return f.match(shown(a, now)) }
		return w.each(src, project, func(a *projection.Approval) error { return fn(shown(a, now)) })
	})
}

// checkScope checks that a project exists, and the task filtered on when
// task is not empty.
func checkScope(src source, project, task string) error {
	if _, err := mustProject(src, project); err != nil {
		return err
	}
	if task != "" {
		if _, err := mustTask(src, project, task); err != nil {
			return err
		}
	}
	return nil
}

// PollApproval reads an approval once and says where it stands: nil when
// granted, ErrPending while it can still be decided, ErrDenied when
// denied, ErrExpired when it expired undecided. The approval is returned
// in every case but ErrNotFound.
func (e *Engine) PollApproval(project, id string) (*projection.Approval, error) {
	a, err := e.Approval(project, id)
	if err != nil {
		return nil, err
	}
	return a, outcome(a, e.opts.Now())
}

func outcome(a *projection.Approval, now time.Time) error {
	switch {
	case a.Status == projection.ApprovalGranted:
		return nil
	case a.Status == projection.ApprovalDenied:
		return fmt.Errorf("%w: %s, by %s%s", ErrDenied, a.ID, a.DecidedBy, comment(a))
	case expired(a, now):
		return fmt.Errorf("%w: %s at %s, without a decision", ErrExpired, a.ID, fmtExpiry(a))
	}
	return fmt.Errorf("%w: approval %s is not decided yet", ErrPending, a.ID)
}

func comment(a *projection.Approval) string {
	if a.Comment == "" {
		return ""
	}
	return " (" + a.Comment + ")"
}

// CheckApproval says whether an action may go ahead: nil only when the
// approval is granted and actionHash (see ActionHash) is the hash of the
// action it was requested for. It returns the errors of PollApproval
// first, then ErrActionMismatch.
func (e *Engine) CheckApproval(project, id, actionHash string) (*projection.Approval, error) {
	a, err := e.PollApproval(project, id)
	if err != nil || a.ActionHash == actionHash {
		return a, err
	}
	return a, fmt.Errorf("%w: %s was granted for an action with SHA-256 %s; this one has %s",
		ErrActionMismatch, a.ID, a.ActionHash, actionHash)
}
