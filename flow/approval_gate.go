package flow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// ExecAction is the action `exec run --require-approval` asks approval
// for: the exact argv, the working directory and the task. Its JSON
// (ExecActionJSON) is what the approval binds to, by its SHA-256.
type ExecAction struct {
	Kind string   `json:"kind"` // always "exec"
	Argv []string `json:"argv"`
	Cwd  string   `json:"cwd"`
	Task string   `json:"task,omitempty"`
}

// ExecActionJSON returns the action of running argv in cwd for task,
// as the JSON an approval binds to: the same inputs give the same bytes.
func ExecActionJSON(argv []string, cwd, task string) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ExecAction{Kind: "exec", Argv: argv, Cwd: cwd, Task: task}); err != nil {
		return "", err
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

// Gate is the input of PassApproval: an action that may run only with a
// granted approval of its own.
type Gate struct {
	Project string `json:"project"`
	Task    string `json:"task,omitempty"`
	Step    string `json:"step,omitempty"`
	Action  string `json:"action"`  // JSON, bound by its exact bytes
	Message string `json:"message"` // of the request made when there is no approval
	// TTL bounds how long a request made now can be granted (and a
	// granted one used); 0: it never expires.
	TTL time.Duration `json:"ttl,omitempty"`
	Write
}

// GateResult says what PassApproval did.
type GateResult struct {
	Approval *projection.Approval // the approval used, reused or requested
	Passed   bool                 // Approval was granted for the action and is now used: run it
	// Requested is set when PassApproval made a new request; when
	// neither Passed nor Requested, Approval is the pending request for
	// the same action, reused.
	Requested bool
}

// PassApproval lets an action through at most once per granted approval,
// in one write transaction: with a granted, unexpired, unused approval
// of the same task for exactly this action (the same SHA-256), it
// appends approval.consumed (the approval's one use) and returns Passed.
// Otherwise it returns the pending, unexpired request for the same
// action, or makes a new one (approval.requested): the action must not
// run. A request is refused as RequestApproval refuses it (ErrInvalid,
// ErrNotFound, ErrConflict for a done or cancelled task).
func (e *Engine) PassApproval(in Gate) (*GateResult, error) {
	req := NewApproval{Project: in.Project, Task: in.Task, Step: in.Step, Message: in.Message, Action: in.Action, TTL: in.TTL, Write: in.Write}
	if err := req.check(); err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.Action) == "" {
		return nil, fmt.Errorf("%w: an approval gate needs an action", ErrInvalid)
	}
	in.Task, in.Step = req.Task, req.Step
	out := &GateResult{}
	ref, err := e.command(in.Write, "approval.pass", in, func(w *writer) (Ref, error) {
		a, err := w.gateApproval(in)
		if err != nil {
			return Ref{}, err
		}
		switch {
		case a == nil:
			out.Requested = true
			return w.requestApproval(req)
		case a.Status == projection.ApprovalGranted:
			out.Passed = true
			_, err = w.emit(subjectStream(in.Project, a.Task), store.Any, in.Project, projection.TypeApprovalConsumed,
				projection.ApprovalConsumed{ID: a.ID})
		}
		return Ref{Kind: kindApproval, Project: in.Project, ID: a.ID}, err
	})
	if err != nil {
		return nil, err
	}
	out.Approval, err = e.Approval(ref.Project, ref.ID)
	return out, err
}

// gateApproval finds the approval of in's task for in's action that
// lets it run (granted, unexpired, unused), else the pending unexpired
// request for it, else nil. It checks the project and the task first.
func (w *writer) gateApproval(in Gate) (*projection.Approval, error) {
	if _, err := openProject(w, in.Project); err != nil {
		return nil, err
	}
	if _, err := subject(w, in.Project, in.Task, in.Step); err != nil {
		return nil, err
	}
	hash, now := ActionHash([]byte(in.Action)), w.e.opts.Now()
	var pending *projection.Approval
	for _, status := range []string{projection.ApprovalGranted, projection.ApprovalPending} {
		ids, err := w.SummaryIDs(projstore.BucketApprovals, in.Project, status)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			a, err := mustApproval(w, in.Project, id)
			if err != nil {
				return nil, err
			}
			if a.ActionHash != hash || a.Task != in.Task || expired(a, now) {
				continue
			}
			if a.Status == projection.ApprovalGranted && a.UsedAt.IsZero() {
				return a, nil
			}
			if a.Status == projection.ApprovalPending && pending == nil {
				pending = a
			}
		}
	}
	return pending, nil
}
