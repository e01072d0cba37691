package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/view"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tools of the standard and all profiles (see mcpProfiles).

// ---- task_list

type taskListIn struct {
	scopeArg
	Status string `json:"status,omitempty" jsonschema:"todo, doing, done, blocked or cancelled"`
	Plan   string `json:"plan,omitempty" jsonschema:"plan id, like P-1"`
	Owner  string `json:"owner,omitempty"`
	Tag    string `json:"tag,omitempty"`
	Limit  int    `json:"limit,omitempty" jsonschema:"at most this many tasks, the first by id (none: all)"`
}

type taskListOut struct {
	Project string           `json:"project"`
	Tasks   []view.TaskBrief `json:"tasks"`
	More    bool             `json:"more,omitempty" jsonschema:"more tasks match than limit let through"`
}

func addTaskListTool(srv *mcp.Server, s *mcpServer) {
	addTool(srv, &mcp.Tool{Name: "task_list",
		Description: "List a project's tasks, filtered by status, plan, owner or tag.",
		Annotations: readOnlyTool("List tasks")}, tool(s, true, true, taskListTool))
}

func taskListTool(c *call, in taskListIn) (taskListOut, string, error) {
	f := flow.TaskFilter{Status: in.Status, Owner: in.Owner, Tag: in.Tag}
	if in.Plan != "" {
		id, err := flow.ParsePlanID(in.Plan)
		if err != nil {
			return taskListOut{}, "", err
		}
		f.Plan = id
	}
	if in.Status != "" {
		if err := oneOf(in.Status, taskStatuses); err != nil {
			return taskListOut{}, "", invalid("status %q: %v", in.Status, err)
		}
	}
	if in.Limit < 0 {
		return taskListOut{}, "", invalid("limit %d: give 1 or more, or none for all", in.Limit)
	}
	out := taskListOut{Project: c.project, Tasks: []view.TaskBrief{}}
	now := time.Now()
	err := c.eng.EachTask(c.project, f, func(t *projection.Task) error {
		if in.Limit > 0 && len(out.Tasks) == in.Limit {
			out.More = true
			return flow.ErrStop
		}
		out.Tasks = append(out.Tasks, view.TaskBriefOf(t, now))
		return nil
	})
	if err != nil {
		return taskListOut{}, "", err
	}
	line := briefsLine("tasks in "+c.project, out.Tasks)
	if out.More {
		line += "; more match (raise limit)"
	}
	return out, line, nil
}

// ---- approval_status

type approvalStatusIn struct {
	scopeArg
	ID     string `json:"id,omitempty" jsonschema:"approval id, like A-2 (none: list)"`
	Task   string `json:"task,omitempty" jsonschema:"list the approvals of this task"`
	Status string `json:"status,omitempty" jsonschema:"list only pending, expired, granted or denied"`
	Action any    `json:"action,omitempty" jsonschema:"with id: succeed only if granted for exactly this action (else pending or conflict)"`
}

type approvalStatusOut struct {
	Project   string          `json:"project"`
	Approvals []view.Approval `json:"approvals"`
	Granted   bool            `json:"granted" jsonschema:"with id: the approval is granted (for action, when given)"`
}

func addApprovalStatusTool(srv *mcp.Server, s *mcpServer) {
	addTool(srv, &mcp.Tool{Name: "approval_status",
		Description: "Read an approval (id) or list them; with id and action, check it was granted for that exact action.",
		Annotations: readOnlyTool("Approval status")}, tool(s, true, true, approvalStatusTool))
}

func approvalStatusTool(c *call, in approvalStatusIn) (approvalStatusOut, string, error) {
	out := approvalStatusOut{Project: c.project, Approvals: []view.Approval{}}
	if in.ID == "" {
		if in.Action != nil {
			return out, "", invalid("action needs id")
		}
		return approvalList(c, in, out)
	}
	id, err := flow.ParseApprovalID(in.ID)
	if err != nil {
		return out, "", err
	}
	var a *projection.Approval
	if in.Action != nil {
		action, err := rawArg(c, "action")
		if err != nil {
			return out, "", err
		}
		a, err = c.eng.CheckApproval(c.project, id, flow.ActionHash([]byte(action)))
		if err != nil {
			return out, "", err
		}
	} else if a, err = c.eng.Approval(c.project, id); err != nil {
		return out, "", err
	}
	out.Approvals = append(out.Approvals, view.ApprovalOf(a))
	out.Granted = a.Status == projection.ApprovalGranted
	line := fmt.Sprintf("approval %s %s: %q", a.ID, a.Status, a.Message)
	if a.DecidedBy != "" {
		line += " by " + a.DecidedBy
	}
	return out, printable(line), nil
}

func approvalList(c *call, in approvalStatusIn, out approvalStatusOut) (approvalStatusOut, string, error) {
	f := flow.ApprovalFilter{Status: in.Status}
	if in.Status != "" {
		if err := oneOf(in.Status, approvalStatuses); err != nil {
			return out, "", invalid("status %q: %v", in.Status, err)
		}
	}
	if in.Task != "" {
		id, err := flow.ParseTaskID(in.Task)
		if err != nil {
			return out, "", err
		}
		f.Task = id
	}
	as, err := c.eng.Approvals(c.project, f)
	if err != nil {
		return out, "", err
	}
	parts := []string{}
	for _, a := range as {
		out.Approvals = append(out.Approvals, view.ApprovalOf(a))
		parts = append(parts, a.ID+" "+a.Status)
	}
	return out, fmt.Sprintf("%d approvals in %s: %s", len(as), c.project, strings.Join(parts, ", ")), nil
}

// ---- history

type historyIn struct {
	scopeArg
	Task     string `json:"task,omitempty" jsonschema:"only this task's events (none: the project's)"`
	SinceSeq uint64 `json:"since_seq,omitempty" jsonschema:"only events at or after this seq"`
	Type     string `json:"type,omitempty" jsonschema:"event type, or a prefix like task.*"`
	Actor    string `json:"actor,omitempty"`
	Session  string `json:"session,omitempty"`
	Limit    int    `json:"limit,omitempty" jsonschema:"the newest this many events (default 50, at most 1000)"`
}

type historyOut struct {
	Project string       `json:"project"`
	Task    string       `json:"task,omitempty"`
	Events  []view.Event `json:"events"`
}

func addHistoryTool(srv *mcp.Server, s *mcpServer) {
	addTool(srv, &mcp.Tool{Name: "history",
		Description: "The events of a task or of the project, oldest first: who changed what, when.",
		Annotations: readOnlyTool("History")}, tool(s, true, true, historyTool))
}

// Limits of history.
const (
	historyDefault = 50
	historyMax     = 1000
)

func historyTool(c *call, in historyIn) (historyOut, string, error) {
	if in.Limit < 0 || in.Limit > historyMax {
		return historyOut{}, "", invalid("limit %d: give 1 to %d", in.Limit, historyMax)
	}
	if in.Limit == 0 {
		in.Limit = historyDefault
	}
	f := flow.Filter{Project: c.project, SinceSeq: in.SinceSeq, Type: in.Type, Actor: in.Actor, Session: in.Session, Limit: in.Limit}
	out := historyOut{Project: c.project, Events: []view.Event{}}
	if in.Type != "" {
		if err := flow.CheckTypePattern(in.Type); err != nil {
			return out, "", invalid("type %q: %v", in.Type, err)
		}
	}
	if in.Task != "" {
		id, err := flow.ParseTaskID(in.Task)
		if err != nil {
			return out, "", err
		}
		if _, err := c.eng.Task(c.project, id); err != nil {
			return out, "", err
		}
		f.Stream, out.Task = projection.TaskStream(c.project, id), id
	}
	err := c.eng.Events(f, func(ev flow.Event) error {
		out.Events = append(out.Events, view.EventOf(ev))
		return nil
	})
	if err != nil {
		return out, "", err
	}
	subject := c.project
	if out.Task != "" {
		subject = out.Task
	}
	line := fmt.Sprintf("%d events of %s", len(out.Events), subject)
	if n := len(out.Events); n > 0 {
		line += fmt.Sprintf(", seq %d to %d", out.Events[0].Seq, out.Events[n-1].Seq)
	}
	return out, printable(line), nil
}

// ---- dep_update

type depUpdateIn struct {
	scopeArg
	Task   string   `json:"task" jsonschema:"task id, like T-3"`
	Add    []string `json:"add,omitempty" jsonschema:"task ids it comes to depend on (a cycle is refused)"`
	Remove []string `json:"remove,omitempty" jsonschema:"task ids it no longer depends on"`
	requestArg
}

type depUpdateOut struct {
	Task    string   `json:"task"`
	Deps    []string `json:"deps"`
	Version uint64   `json:"version"`
}

func addDepUpdateTool(srv *mcp.Server, s *mcpServer) {
	addTool(srv, &mcp.Tool{Name: "dep_update",
		Description: "Add or remove dependencies of a task; an edge that closes a cycle is refused.",
		Annotations: writeTool("Update dependencies", true, false)}, tool(s, false, true, depUpdateTool))
}

func depUpdateTool(c *call, in depUpdateIn) (depUpdateOut, string, error) {
	id, err := flow.ParseTaskID(in.Task)
	if err != nil {
		return depUpdateOut{}, "", err
	}
	if len(in.Add)+len(in.Remove) == 0 {
		return depUpdateOut{}, "", invalid("give add or remove")
	}
	t, err := c.eng.Task(c.project, id)
	if err != nil {
		return depUpdateOut{}, "", err
	}
	change := func(op string, deps []string, fn func(flow.DepChange) (*projection.Task, error)) error {
		for _, d := range deps {
			dep, err := flow.ParseTaskID(d)
			if err != nil {
				return err
			}
			t, err = fn(flow.DepChange{Project: c.project, ID: id, Dep: dep, Write: flow.Write{Key: flow.SubKey(in.RequestID, op+"/"+dep)}})
			if err != nil {
				return err
			}
		}
		return nil
	}
	if err := change("add", in.Add, c.eng.AddDep); err != nil {
		return depUpdateOut{}, "", err
	}
	if err := change("rm", in.Remove, c.eng.RemoveDep); err != nil {
		return depUpdateOut{}, "", err
	}
	deps := t.Deps
	if deps == nil {
		deps = []string{}
	}
	line := fmt.Sprintf("%s depends on: %s, v%d", t.ID, strings.Join(deps, ", "), t.Version)
	if len(deps) == 0 {
		line = fmt.Sprintf("%s depends on nothing, v%d", t.ID, t.Version)
	}
	return depUpdateOut{Task: t.ID, Deps: deps, Version: t.Version}, line, nil
}

// ---- checkpoint_create

type checkpointIn struct {
	scopeArg
	Label   string `json:"label,omitempty" jsonschema:"a name for the point, like before-refactor"`
	Task    string `json:"task,omitempty" jsonschema:"the task it is about, like T-3"`
	GitHead string `json:"git_head,omitempty" jsonschema:"the git commit it goes with"`
	requestArg
}

func addCheckpointTool(srv *mcp.Server, s *mcpServer) {
	addTool(srv, &mcp.Tool{Name: "checkpoint_create",
		Description: "Mark the current state with a named checkpoint (C-n) that rollback can return to.",
		Annotations: writeTool("Create a checkpoint", false, false)}, tool(s, false, true, checkpointTool))
}

func checkpointTool(c *call, in checkpointIn) (view.Checkpoint, string, error) {
	nc := flow.NewCheckpoint{Project: c.project, Label: in.Label, GitHead: in.GitHead, Write: flow.Write{Key: in.RequestID}}
	if in.Task != "" {
		id, err := flow.ParseTaskID(in.Task)
		if err != nil {
			return view.Checkpoint{}, "", err
		}
		nc.Task = id
	}
	cp, err := c.eng.CreateCheckpoint(nc)
	if err != nil {
		return view.Checkpoint{}, "", err
	}
	return view.CheckpointOf(cp), printable(fmt.Sprintf("checkpoint %s %q at seq %d", cp.ID, cp.Label, cp.AtSeq)), nil
}

// ---- rollback

type rollbackIn struct {
	scopeArg
	To        string  `json:"to" jsonschema:"where to go back to: a seq (42), a checkpoint (C-1) or an RFC 3339 time"`
	Task      string  `json:"task,omitempty" jsonschema:"roll back only this task"`
	Reason    string  `json:"reason,omitempty"`
	Apply     bool    `json:"apply,omitempty" jsonschema:"apply it; without it, only show what would change"`
	IfVersion *uint64 `json:"if_version,omitempty" jsonschema:"with task: fail with conflict unless the task is at this version"`
	requestArg
}

type toolFieldChange struct {
	Field string `json:"field"`
	From  any    `json:"from" jsonschema:"the value before (JSON; null: absent)"`
	To    any    `json:"to" jsonschema:"the value after (JSON; null: absent)"`
}

type toolChange struct {
	Kind   string            `json:"kind"`
	ID     string            `json:"id"`
	Op     string            `json:"op"`
	Title  string            `json:"title,omitempty"`
	Fields []toolFieldChange `json:"fields,omitempty"`
	World  string            `json:"world,omitempty" jsonschema:"what happened outside flowctl and is not undone"`
}

type rollbackOut struct {
	Project string       `json:"project"`
	ToSeq   uint64       `json:"to_seq"`
	Task    string       `json:"task,omitempty"`
	Applied bool         `json:"applied"`
	Seq     uint64       `json:"seq,omitempty" jsonschema:"the rollback event"`
	Changes []toolChange `json:"changes"`
}

func addRollbackTool(srv *mcp.Server, s *mcpServer) {
	addTool(srv, &mcp.Tool{Name: "rollback",
		Description: "Show (default) or, with apply, restore the state of the project or a task at an earlier point; history is kept.",
		Annotations: writeTool("Roll back", true, true)}, tool(s, false, true, rollbackTool))
}

func rollbackTool(c *call, in rollbackIn) (rollbackOut, string, error) {
	to, err := flow.ParsePoint(in.To)
	if err != nil {
		return rollbackOut{}, "", err
	}
	ifVersion, err := versionArg(in.IfVersion)
	if err != nil {
		return rollbackOut{}, "", err
	}
	if !in.Apply && in.IfVersion != nil {
		return rollbackOut{}, "", invalid("if_version needs apply: without it the rollback is only shown, and nothing is checked")
	}
	ri := flow.RollbackInput{Project: c.project, To: to, Reason: in.Reason, DryRun: !in.Apply,
		Write: flow.Write{IfVersion: ifVersion, Key: in.RequestID}}
	if in.Task != "" {
		if ri.Task, err = flow.ParseTaskID(in.Task); err != nil {
			return rollbackOut{}, "", err
		}
	}
	if !in.Apply {
		ri.Write = flow.Write{}
	}
	res, err := c.eng.Rollback(ri)
	if err != nil {
		return rollbackOut{}, "", err
	}
	if res == nil { // a replayed request: the engine returns no result (see the report)
		res = &flow.RollbackResult{Project: c.project, Task: ri.Task, Applied: true}
	}
	out := rollbackOut{Project: res.Project, ToSeq: res.ToSeq, Task: res.Task, Applied: res.Applied, Seq: res.Seq, Changes: []toolChange{}}
	for _, ch := range res.Changes {
		mc := toolChange{Kind: ch.Kind, ID: ch.ID, Op: ch.Op, Title: ch.Title, World: ch.World}
		for _, f := range ch.Fields {
			mc.Fields = append(mc.Fields, toolFieldChange{Field: f.Field, From: f.From, To: f.To})
		}
		out.Changes = append(out.Changes, mc)
	}
	verb := "would change"
	if out.Applied {
		verb = "changed"
	}
	line := fmt.Sprintf("rollback of %s to seq %d %s %d entities", c.project, out.ToSeq, verb, len(out.Changes))
	if !in.Apply {
		line += " (dry run: pass apply to do it)"
	}
	return out, line, nil
}

// ---- project_manage

type projectIn struct {
	Action      string `json:"action" jsonschema:"list, show, create or archive"`
	Name        string `json:"name,omitempty" jsonschema:"project name (show, create, archive)"`
	Description string `json:"description,omitempty" jsonschema:"for create"`
	Reason      string `json:"reason,omitempty" jsonschema:"for archive"`
	requestArg
}

type projectOut struct {
	Projects []view.Project `json:"projects"`
}

func addProjectTool(srv *mcp.Server, s *mcpServer) {
	addTool(srv, &mcp.Tool{Name: "project_manage",
		Description: "List, show, create or archive projects (archiving closes a project to new work).",
		Annotations: writeTool("Manage projects", false, true)}, func(ctx context.Context, req *mcp.CallToolRequest, in projectIn) (*mcp.CallToolResult, projectOut, error) {
		readOnly := in.Action == "list" || in.Action == "show"
		return tool(s, readOnly, false, projectTool)(ctx, req, in)
	})
}

func projectTool(c *call, in projectIn) (projectOut, string, error) {
	out := projectOut{Projects: []view.Project{}}
	if in.Action != "list" && in.Name == "" {
		return out, "", invalid("%s needs name", in.Action)
	}
	var p *projection.Project
	var err error
	switch in.Action {
	case "list":
		all, err := c.eng.Projects()
		if err != nil {
			return out, "", err
		}
		names := []string{}
		for _, p := range all {
			out.Projects = append(out.Projects, view.ProjectOf(p))
			names = append(names, p.Name)
		}
		return out, fmt.Sprintf("projects (%d): %s", len(all), strings.Join(names, ", ")), nil
	case "show":
		var name string
		if name, err = c.eng.ResolveProject(in.Name); err == nil {
			p, err = c.eng.Project(name)
		}
	case "create":
		p, err = c.s.c.CreateProject(c.eng, flow.NewProject{Name: in.Name, Description: in.Description, Write: flow.Write{Key: in.RequestID}})
	case "archive":
		p, err = c.eng.ArchiveProject(flow.ArchiveProject{Name: in.Name, Reason: in.Reason, Write: flow.Write{Key: in.RequestID}})
	default:
		return out, "", invalid("action %q: use list, show, create or archive", in.Action)
	}
	if err != nil {
		return out, "", err
	}
	out.Projects = append(out.Projects, view.ProjectOf(p))
	state := "open"
	if p.Archived {
		state = "archived"
	}
	return out, printable(fmt.Sprintf("project %s (%s, %d tasks, v%d)", p.Name, state, p.Counters.Tasks, p.Version)), nil
}
