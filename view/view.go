package view

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
)

// Object is a JSON object kept as its text: a task's context. It is
// written as the object itself, {} when empty.
type Object projection.JSON

// MarshalJSON writes the object, {} for none.
func (o Object) MarshalJSON() ([]byte, error) {
	if o == "" {
		return []byte(projection.EmptyContext), nil
	}
	return []byte(o), nil
}

// UnmarshalJSON keeps the JSON text of an object (for clients of the
// view written in Go, and tests).
func (o *Object) UnmarshalJSON(b []byte) error {
	if len(b) == 0 || b[0] != '{' {
		return fmt.Errorf("view: a context must be a JSON object, not %.20s", b)
	}
	*o = Object(b)
	return nil
}

// Value is a JSON value a user gave, kept as its text (an approval's
// action): written as the value itself, null for none.
type Value projection.JSON

// MarshalJSON writes the value, null for none.
func (v Value) MarshalJSON() ([]byte, error) { return projection.JSON(v).MarshalJSON() }

// UnmarshalJSON keeps the JSON text of the value.
func (v *Value) UnmarshalJSON(b []byte) error {
	*v = Value(b)
	return nil
}

// Task is a task: `task show -o json`, MCP task_get.
type Task struct {
	Project          string          `json:"project"`
	ID               string          `json:"id"`
	Plan             string          `json:"plan,omitempty"`
	Title            string          `json:"title"`
	Description      string          `json:"description,omitempty"`
	Status           string          `json:"status"`
	Owner            string          `json:"owner,omitempty"`
	Tags             []string        `json:"tags"`
	Priority         int             `json:"priority"`
	Deps             []string        `json:"deps"`
	Ref              string          `json:"ref,omitempty"`
	Claim            *Claim          `json:"claim"`
	Steps            []Step          `json:"steps"`
	Context          Object          `json:"context"`
	ContextVersion   int             `json:"context_version"`
	PendingApprovals []string        `json:"pending_approvals"`
	Notes            int             `json:"notes"`
	Execs            int             `json:"execs"`
	Forced           bool            `json:"forced,omitempty" jsonschema:"the last done was forced"`
	Parent           string          `json:"parent,omitempty" jsonschema:"the task this one is a subtask of"`
	Due              projection.Time `json:"due" jsonschema:"when it is due (RFC 3339), null for none"`
	projection.Meta
}

// TaskDetail is a task with its children and progress: `task show -o
// json`.
type TaskDetail struct {
	Task
	Children []string `json:"children" jsonschema:"its subtasks, in id order"`
	Progress int      `json:"progress" jsonschema:"0-100: done if done, else the share of its subtasks done, else its steps' mean progress"`
}

// TaskDetailOf shapes a task with its family.
func TaskDetailOf(f *flow.Family) TaskDetail {
	d := TaskDetail{Task: TaskOf(f.Task), Children: make([]string, len(f.Children)), Progress: f.Progress}
	for i, c := range f.Children {
		d.Children[i] = c.ID
	}
	return d
}

// Claim is a lease on a task.
type Claim struct {
	Actor      string          `json:"actor"`
	Session    string          `json:"session,omitempty"`
	LeaseUntil projection.Time `json:"lease_until"`
	ClaimedAt  projection.Time `json:"claimed_at"`
}

// Step is one step of a task.
type Step struct {
	ID        string          `json:"id"`
	Title     string          `json:"title"`
	Status    string          `json:"status"`
	Progress  int             `json:"progress"`
	Note      string          `json:"note,omitempty"`
	Result    string          `json:"result,omitempty"`
	Error     string          `json:"error,omitempty"`
	UpdatedAt projection.Time `json:"updated_at"`
	// StartedAt and CompletedAt are the times of the moves that started
	// and ended its current attempt (null when none); Attempt counts its
	// starts: 1, plus one per retry.
	StartedAt   projection.Time `json:"started_at"`
	CompletedAt projection.Time `json:"completed_at"`
	Attempt     int             `json:"attempt"`
	ResultData  Value           `json:"result_data,omitempty" jsonschema:"a structured result (JSON)"`
}

// TaskOf shapes a task.
func TaskOf(t *projection.Task) Task {
	v := Task{Project: t.Project, ID: t.ID, Plan: t.Plan, Title: t.Title, Description: t.Description,
		Status: t.Status, Owner: t.Owner, Tags: t.Tags, Priority: t.Priority, Deps: t.Deps, Ref: t.Ref,
		Context: Object(t.Context), ContextVersion: t.ContextVersion, PendingApprovals: t.PendingApprovals,
		Notes: t.Notes, Execs: t.Execs, Forced: t.Forced, Parent: t.Parent, Due: t.Due, Meta: t.Meta}
	if t.Claim != nil {
		v.Claim = &Claim{Actor: t.Claim.Actor, Session: t.Claim.Session, LeaseUntil: t.Claim.LeaseUntil, ClaimedAt: t.Claim.ClaimedAt}
	}
	if t.Steps != nil {
		v.Steps = make([]Step, len(t.Steps))
		for i, s := range t.Steps {
			v.Steps[i] = StepOf(s)
		}
	}
	return v
}

// StepOf shapes a step.
func StepOf(s projection.Step) Step {
	return Step{ID: s.ID, Title: s.Title, Status: s.Status, Progress: s.Progress, Note: s.Note,
		Result: s.Result, Error: s.Error, UpdatedAt: s.UpdatedAt, StartedAt: s.StartedAt, CompletedAt: s.CompletedAt,
		Attempt: s.Attempt, ResultData: Value(s.ResultData)}
}

// TaskStep is a step with its task and the task's version: what the
// step commands print.
type TaskStep struct {
	Step
	Task    string `json:"task"`
	Version uint64 `json:"version" jsonschema:"the task's version"`
}

// TaskStepOf shapes a step as the step commands return it.
func TaskStepOf(s *flow.TaskStep) TaskStep {
	return TaskStep{Step: StepOf(s.Step), Task: s.Task, Version: s.Version}
}

// Context is a task's context with the versions: what ctx merge prints.
type Context struct {
	Task           string `json:"task"`
	Context        Object `json:"context"`
	Version        uint64 `json:"version" jsonschema:"the task's version"`
	ContextVersion int    `json:"context_version"`
}

// ContextOf shapes a task's context.
func ContextOf(c *flow.TaskContext) Context {
	return Context{Task: c.Task, Context: Object(c.Context), Version: c.Version, ContextVersion: c.ContextVersion}
}

// TaskBrief is a task in a list where the whole task would be too much
// (MCP task_ready, task_list, task_create): some of Task's fields, under
// their names, plus claimed_by.
type TaskBrief struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Status   string   `json:"status"`
	Priority int      `json:"priority"`
	Deps     []string `json:"deps,omitempty"`
	Owner    string   `json:"owner,omitempty"`
	// ClaimedBy is the actor of a claim that is live now (claim.actor of
	// a lease that has not run out).
	ClaimedBy string          `json:"claimed_by,omitempty" jsonschema:"the actor of a live claim"`
	Version   uint64          `json:"version"`
	Parent    string          `json:"parent,omitempty"`
	Due       projection.Time `json:"due,omitempty" jsonschema:"when it is due (RFC 3339)"`
}

// TaskBriefOf shapes a task for a list, with the claims live at now.
func TaskBriefOf(t *projection.Task, now time.Time) TaskBrief {
	b := TaskBrief{ID: t.ID, Title: t.Title, Status: t.Status, Priority: t.Priority, Deps: t.Deps, Owner: t.Owner, Version: t.Version,
		Parent: t.Parent, Due: t.Due}
	if t.Claim.Live(now) {
		b.ClaimedBy = t.Claim.Actor
	}
	return b
}

// Printable escapes control characters, so that text from the file (an
// imported event, a title) cannot move the cursor or recolour a terminal.
func Printable(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}
