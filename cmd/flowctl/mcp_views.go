package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
)

// The structured results of the MCP tools. They keep the field names of
// the CLI's JSON output (README, "JSON contract"), with times as RFC 3339
// strings ("" when unset) and JSON values (context, action, event data) as
// JSON. The SDK derives each tool's output schema from these types, so a
// field is required unless it is omitempty.

type toolTask struct {
	Project          string     `json:"project"`
	ID               string     `json:"id"`
	Title            string     `json:"title"`
	Status           string     `json:"status"`
	Plan             string     `json:"plan,omitempty"`
	Description      string     `json:"description,omitempty"`
	Owner            string     `json:"owner,omitempty"`
	Tags             []string   `json:"tags,omitempty"`
	Priority         int        `json:"priority"`
	Deps             []string   `json:"deps,omitempty"`
	Ref              string     `json:"ref,omitempty"`
	Claim            *toolClaim `json:"claim,omitempty"`
	Steps            []toolStep `json:"steps,omitempty"`
	Context          jsonObject `json:"context"`
	ContextVersion   int        `json:"context_version"`
	PendingApprovals []string   `json:"pending_approvals,omitempty"`
	Version          uint64     `json:"version" jsonschema:"the task's version: pass it as if_version to change it only if nobody else did"`
	UpdatedAt        string     `json:"updated_at"`
}

type toolClaim struct {
	Actor      string `json:"actor"`
	Session    string `json:"session,omitempty"`
	LeaseUntil string `json:"lease_until"`
}

type toolStep struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Status   string `json:"status"`
	Progress int    `json:"progress"`
	Note     string `json:"note,omitempty"`
	Result   string `json:"result,omitempty"`
	Error    string `json:"error,omitempty"`
}

// toolBrief is a task in a list.
type toolBrief struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Status   string   `json:"status"`
	Priority int      `json:"priority"`
	Deps     []string `json:"deps,omitempty"`
	Owner    string   `json:"owner,omitempty"`
	Claimed  string   `json:"claimed_by,omitempty"`
	Version  uint64   `json:"version"`
}

type toolApproval struct {
	ID          string `json:"id"`
	Task        string `json:"task,omitempty"`
	Step        string `json:"step,omitempty"`
	Status      string `json:"status"`
	Message     string `json:"message"`
	Action      any    `json:"action,omitempty" jsonschema:"the proposed action (JSON)"`
	ActionHash  string `json:"action_hash"`
	Expires     string `json:"expires,omitempty"`
	RequestedBy string `json:"requested_by"`
	DecidedBy   string `json:"decided_by,omitempty"`
	Comment     string `json:"comment,omitempty"`
}

type toolExec struct {
	ID        string  `json:"id"`
	Task      string  `json:"task,omitempty"`
	Step      string  `json:"step,omitempty"`
	Plan      string  `json:"plan,omitempty"`
	Command   string  `json:"command,omitempty"`
	ExitCode  int     `json:"exit_code"`
	Success   bool    `json:"success"`
	ElapsedMS float64 `json:"elapsed_ms"`
	Actor     string  `json:"actor"`
}

type toolCheckpoint struct {
	ID      string `json:"id"`
	Label   string `json:"label,omitempty"`
	AtSeq   uint64 `json:"at_seq"`
	Task    string `json:"task,omitempty"`
	GitHead string `json:"git_head,omitempty"`
}

type toolEvent struct {
	Seq     uint64 `json:"seq"`
	Time    string `json:"time"`
	Type    string `json:"type"`
	Stream  string `json:"stream"`
	Actor   string `json:"actor"`
	Project string `json:"project,omitempty"`
	Data    any    `json:"data" jsonschema:"the event's payload"`
}

func rfc3339(t projection.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Std().Format(time.RFC3339)
}

// jsonValue keeps a JSON text as JSON in a result (nil for none).
func jsonValue(j projection.JSON) any {
	if j == "" {
		return nil
	}
	return json.RawMessage(j)
}

// jsonObject is a JSON object in a result or an argument: its schema is
// {"type":"object"}. Numbers are kept as written (json.Number).
type jsonObject map[string]any

// objectOf decodes a JSON object text; anything else gives {}.
func objectOf(j projection.JSON) jsonObject {
	obj := jsonObject{}
	dec := json.NewDecoder(strings.NewReader(string(j)))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return jsonObject{}
	}
	return obj
}

func taskView(t *projection.Task) toolTask {
	v := toolTask{Project: t.Project, ID: t.ID, Title: t.Title, Status: t.Status, Plan: t.Plan,
		Description: t.Description, Owner: t.Owner, Tags: t.Tags, Priority: t.Priority, Deps: t.Deps,
		Ref: t.Ref, Context: objectOf(t.Context), ContextVersion: t.ContextVersion,
		PendingApprovals: t.PendingApprovals, Version: t.Version, UpdatedAt: rfc3339(t.UpdatedAt)}
	if t.Claim != nil {
		v.Claim = &toolClaim{Actor: t.Claim.Actor, Session: t.Claim.Session, LeaseUntil: rfc3339(t.Claim.LeaseUntil)}
	}
	for _, s := range t.Steps {
		v.Steps = append(v.Steps, stepView(s))
	}
	return v
}

func stepView(s projection.Step) toolStep {
	return toolStep{ID: s.ID, Title: s.Title, Status: s.Status, Progress: s.Progress, Note: s.Note, Result: s.Result, Error: s.Error}
}

func briefView(t *projection.Task, now time.Time) toolBrief {
	b := toolBrief{ID: t.ID, Title: t.Title, Status: t.Status, Priority: t.Priority, Deps: t.Deps, Owner: t.Owner, Version: t.Version}
	if t.Claim.Live(now) {
		b.Claimed = t.Claim.Actor
	}
	return b
}

func approvalView(a *projection.Approval) toolApproval {
	return toolApproval{ID: a.ID, Task: a.Task, Step: a.Step, Status: a.Status, Message: a.Message,
		Action: jsonValue(a.Action), ActionHash: a.ActionHash, Expires: rfc3339(a.Expires),
		RequestedBy: a.RequestedBy, DecidedBy: a.DecidedBy, Comment: a.Comment}
}

func execView(x *projection.Exec) toolExec {
	cmd := x.Command
	if cmd == "" {
		cmd = codeHeadLine(x.Code)
	}
	return toolExec{ID: x.ID, Task: x.Task, Step: x.Step, Plan: x.Plan, Command: cmd, ExitCode: x.ExitCode,
		Success: x.Success, ElapsedMS: x.ElapsedMS, Actor: x.Actor}
}

func checkpointView(c *projection.Checkpoint) toolCheckpoint {
	return toolCheckpoint{ID: c.ID, Label: c.Label, AtSeq: c.AtSeq, Task: c.Task, GitHead: c.GitHead}
}

func eventView(ev flow.Event) toolEvent {
	return toolEvent{Seq: ev.Seq, Time: ev.Time.UTC().Format(time.RFC3339Nano), Type: ev.Type, Stream: ev.Stream,
		Actor: ev.Actor, Project: ev.Project, Data: ev.Data}
}

// codeHeadLine is the first line of s, marked when there is more.
func codeHeadLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// Summaries: one line each, for the text content of a result.

func taskLine(t *projection.Task) string {
	s := fmt.Sprintf("%s %q %s, v%d", t.ID, t.Title, t.Status, t.Version)
	if t.Claim.Live(time.Now()) {
		s += ", claimed by " + t.Claim.Actor
	}
	if n := len(t.Steps); n > 0 {
		done := 0
		for _, st := range t.Steps {
			if st.Status == projection.StepCompleted || st.Status == projection.StepSkipped {
				done++
			}
		}
		s += fmt.Sprintf(", %d/%d steps done", done, n)
	}
	return printable(s)
}

func briefsLine(prefix string, tasks []toolBrief) string {
	if len(tasks) == 0 {
		return prefix + ": none"
	}
	parts := make([]string, 0, len(tasks))
	for _, t := range tasks {
		parts = append(parts, fmt.Sprintf("%s %q", t.ID, t.Title))
	}
	return printable(fmt.Sprintf("%s (%d): %s", prefix, len(tasks), strings.Join(parts, "; ")))
}
