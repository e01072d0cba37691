package view

import (
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
)

// Approval is an approval: `approval show -o json`, MCP approval_status.
type Approval struct {
	Project     string          `json:"project"`
	ID          string          `json:"id"`
	Task        string          `json:"task,omitempty"`
	Step        string          `json:"step,omitempty"`
	Message     string          `json:"message"`
	Code        string          `json:"code,omitempty"`
	Action      Value           `json:"action,omitempty" jsonschema:"the proposed action (JSON)"`
	ActionHash  string          `json:"action_hash"`
	Expires     projection.Time `json:"expires"`
	Status      string          `json:"status"`
	RequestedBy string          `json:"requested_by"`
	DecidedBy   string          `json:"decided_by,omitempty"`
	Comment     string          `json:"comment,omitempty"`
	DecidedAt   projection.Time `json:"decided_at"`
	UsedAt      projection.Time `json:"used_at,omitempty"` // its one use (exec run --require-approval)
	UsedBy      string          `json:"used_by,omitempty"`
	projection.Meta
}

// ApprovalOf shapes an approval.
func ApprovalOf(a *projection.Approval) Approval {
	return Approval{Project: a.Project, ID: a.ID, Task: a.Task, Step: a.Step, Message: a.Message, Code: a.Code,
		Action: Value(a.Action), ActionHash: a.ActionHash, Expires: a.Expires, Status: a.Status, RequestedBy: a.RequestedBy,
		DecidedBy: a.DecidedBy, Comment: a.Comment, DecidedAt: a.DecidedAt, UsedAt: a.UsedAt, UsedBy: a.UsedBy, Meta: a.Meta}
}

// Exec is an exec record: `exec show -o json`.
type Exec struct {
	Project string `json:"project"`
	projection.ExecRecorded
	Actor string `json:"actor"`
	projection.Meta
}

// ExecOf shapes an exec record.
func ExecOf(x *projection.Exec) Exec {
	return Exec{Project: x.Project, ExecRecorded: x.ExecRecorded, Actor: x.Actor, Meta: x.Meta}
}

// ExecSummary is an exec record without its output and lists (MCP
// exec_record): some of Exec's fields, under their names.
type ExecSummary struct {
	ID        string  `json:"id"`
	Task      string  `json:"task,omitempty"`
	Step      string  `json:"step,omitempty"`
	Plan      string  `json:"plan,omitempty"`
	Command   string  `json:"command,omitempty"`
	Code      string  `json:"code,omitempty"`
	ExitCode  int     `json:"exit_code"`
	Success   bool    `json:"success"`
	ElapsedMS float64 `json:"elapsed_ms"`
	Actor     string  `json:"actor"`
	Version   uint64  `json:"version"`
	Seq       uint64  `json:"seq"`
}

// ExecSummaryOf shapes an exec record for a summary.
func ExecSummaryOf(x *projection.Exec) ExecSummary {
	return ExecSummary{ID: x.ID, Task: x.Task, Step: x.Step, Plan: x.Plan, Command: x.Command, Code: x.Code, ExitCode: x.ExitCode,
		Success: x.Success, ElapsedMS: x.ElapsedMS, Actor: x.Actor, Version: x.Version, Seq: x.Seq}
}

// Checkpoint is a checkpoint: `checkpoint -o json`, MCP checkpoint_create.
type Checkpoint struct {
	Project string `json:"project"`
	ID      string `json:"id"`
	Label   string `json:"label,omitempty"`
	AtSeq   uint64 `json:"at_seq"`
	Task    string `json:"task,omitempty"`
	GitHead string `json:"git_head,omitempty"`
	projection.Meta
}

// CheckpointOf shapes a checkpoint.
func CheckpointOf(c *projection.Checkpoint) Checkpoint {
	return Checkpoint{Project: c.Project, ID: c.ID, Label: c.Label, AtSeq: c.AtSeq, Task: c.Task, GitHead: c.GitHead, Meta: c.Meta}
}

// Project is a project: `project show -o json`, MCP project_manage.
type Project struct {
	Name        string              `json:"name"`
	Description string              `json:"description,omitempty"`
	Archived    bool                `json:"archived"`
	Counters    projection.Counters `json:"counters"`
	Events      uint64              `json:"events"`
	// Settings are the settings set on the project (flowctl project
	// set), by key; a setting not listed has its default.
	Settings []projection.Setting `json:"settings,omitempty"`
	// Origin is where a fork started (flowctl project fork); absent for
	// a project that is not one.
	Origin *projection.Origin `json:"origin,omitempty"`
	projection.Meta
}

// ProjectOf shapes a project.
func ProjectOf(p *projection.Project) Project {
	return Project{Name: p.Name, Description: p.Description, Archived: p.Archived, Counters: p.Counters, Events: p.Events,
		Settings: p.Settings, Origin: p.Origin, Meta: p.Meta}
}

// Event is an event without its hashes and ids (MCP history and
// flow://events): some of flow.Event's fields, under their names.
type Event struct {
	Seq     uint64 `json:"seq"`
	Time    string `json:"time"`
	Type    string `json:"type"`
	Stream  string `json:"stream"`
	Actor   string `json:"actor"`
	Project string `json:"project,omitempty"`
	Data    any    `json:"data" jsonschema:"the event's payload"`
}

// EventOf shapes an event for a summary.
func EventOf(ev flow.Event) Event {
	return Event{Seq: ev.Seq, Time: ev.Time.UTC().Format(timeLayout), Type: ev.Type, Stream: ev.Stream,
		Actor: ev.Actor, Project: ev.Project, Data: ev.Data}
}

// timeLayout is how time.Time writes itself in JSON.
const timeLayout = "2006-01-02T15:04:05.999999999Z07:00"

// Of shapes v when it is an entity of the engine (a pointer, as the
// engine returns them, or a slice of them) and returns anything else as
// it is. The CLI's printer passes every result through it.
func Of(v any) any {
	switch t := v.(type) {
	case *projection.Task:
		return TaskOf(t)
	case []*projection.Task:
		return each(t, TaskOf)
	case *projection.Approval:
		return ApprovalOf(t)
	case []*projection.Approval:
		return each(t, ApprovalOf)
	case *projection.Exec:
		return ExecOf(t)
	case []*projection.Exec:
		return each(t, ExecOf)
	case *projection.Checkpoint:
		return CheckpointOf(t)
	case []*projection.Checkpoint:
		return each(t, CheckpointOf)
	case *projection.Project:
		return ProjectOf(t)
	case []*projection.Project:
		return each(t, ProjectOf)
	case *flow.TaskStep:
		return TaskStepOf(t)
	case *flow.Family:
		return TaskDetailOf(t)
	case *flow.TaskContext:
		return ContextOf(t)
	}
	return v
}

func each[T, V any](in []T, f func(T) V) []V {
	if in == nil {
		return nil
	}
	out := make([]V, len(in))
	for i, x := range in {
		out[i] = f(x)
	}
	return out
}
