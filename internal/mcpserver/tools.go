package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flowctl/flowctl/digest"
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/view"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpToolTable adds each tool to a server, by name (see mcpProfiles).
var mcpToolTable = map[string]func(*mcp.Server, *mcpServer){
	"flow_prime":        addPrimeTool,
	"task_ready":        addTaskReadyTool,
	"task_get":          addTaskGetTool,
	"task_create":       addTaskCreateTool,
	"task_update":       addTaskUpdateTool,
	"step_update":       addStepUpdateTool,
	"ctx_merge":         addCtxMergeTool,
	"exec_record":       addExecRecordTool,
	"approval_request":  addApprovalRequestTool,
	"task_list":         addTaskListTool,
	"approval_status":   addApprovalStatusTool,
	"history":           addHistoryTool,
	"search":            addSearchTool,
	"dep_update":        addDepUpdateTool,
	"checkpoint_create": addCheckpointTool,
	"rollback":          addRollbackTool,
	"project_manage":    addProjectTool,
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{flow.ErrInvalid}, args...)...)
}

// versionArg is an if_version argument: absent means no check, and 0 is
// refused (versions start at 1) rather than read as absent.
func versionArg(v *uint64) (uint64, error) {
	if v == nil {
		return 0, nil
	}
	if *v == 0 {
		return 0, invalid("if_version 0: versions start at 1; leave if_version out for no check")
	}
	return *v, nil
}

// rawArg returns the argument name exactly as the client sent it, so that
// JSON values (a context patch, an action) are stored byte for byte: the
// SDK's own decoding goes through float64 and maps.
func rawArg(c *call, name string) (string, error) {
	if c.req == nil || c.req.Params == nil {
		return "", nil
	}
	var args map[string]json.RawMessage
	if err := json.Unmarshal(c.req.Params.Arguments, &args); err != nil {
		return "", invalid("arguments are not a JSON object: %v", err)
	}
	return string(bytes.TrimSpace(args[name])), nil
}

func parseDuration(field, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, invalid("%s %q: give a positive duration like 30m or 2h", field, s)
	}
	return d, nil
}

// ---- flow_prime

type primeIn struct {
	scopeArg
	Budget int `json:"budget,omitempty" jsonschema:"size limit in tokens (about 4 characters each); default 2000"`
}

type primeOut struct {
	Project  string   `json:"project"`
	Actor    string   `json:"actor"`
	HeadSeq  uint64   `json:"head_seq"`
	Markdown string   `json:"markdown"`
	LeftOut  []string `json:"left_out,omitempty" jsonschema:"parts dropped to fit the budget"`
}

func addPrimeTool(srv *mcp.Server, s *mcpServer) {
	addTool(srv, &mcp.Tool{Name: "flow_prime",
		Description: "Start here: a markdown digest of the project for this session: your claimed tasks (steps, context), ready tasks, blocked tasks, pending approvals.",
		Annotations: readOnlyTool("Prime the session")}, tool(s, true, true, primeTool))
}

// primeTool is flow.Prime: the same digest as `flowctl prime`, for the
// client's actor.
func primeTool(c *call, in primeIn) (primeOut, string, error) {
	p, err := digest.Prime(c.eng, digest.PrimeInput{Project: c.project, Actor: c.actor, Session: c.session, Budget: in.Budget})
	if err != nil {
		return primeOut{}, "", err
	}
	out := primeOut{Project: p.Project, Actor: p.Actor, HeadSeq: p.HeadSeq, Markdown: p.Markdown}
	for _, o := range p.LeftOut {
		if !slices.Contains(out.LeftOut, o.Part) {
			out.LeftOut = append(out.LeftOut, o.Part)
		}
	}
	line := fmt.Sprintf("prime of %s for %s at seq %d: %d bytes", p.Project, p.Actor, p.HeadSeq, len(p.Markdown))
	if len(out.LeftOut) > 0 {
		line += ", left out: " + strings.Join(out.LeftOut, ", ")
	}
	return out, printable(line), nil
}

// ---- task_ready

type readyIn struct {
	scopeArg
	All bool `json:"all,omitempty" jsonschema:"also list the tasks that are not ready, with the reasons"`
}

type readyTask struct {
	view.TaskBrief
	Ready   bool     `json:"ready"`
	Reasons []string `json:"reasons,omitempty"`
}

type readyOut struct {
	Project string      `json:"project"`
	Tasks   []readyTask `json:"tasks"`
}

func addTaskReadyTool(srv *mcp.Server, s *mcpServer) {
	addTool(srv, &mcp.Tool{Name: "task_ready",
		Description: "List todo tasks whose dependencies are done, with no pending approval and no live claim by someone else.",
		Annotations: readOnlyTool("Ready tasks")}, tool(s, true, true, readyTool))
}

func readyTool(c *call, in readyIn) (readyOut, string, error) {
	rs, err := c.eng.Ready(c.project, in.All)
	if err != nil {
		return readyOut{}, "", err
	}
	out := readyOut{Project: c.project, Tasks: []readyTask{}}
	var ready []view.TaskBrief
	now := time.Now()
	for _, r := range rs {
		b := view.TaskBriefOf(r.Task, now)
		out.Tasks = append(out.Tasks, readyTask{TaskBrief: b, Ready: r.Ready, Reasons: r.Reasons})
		if r.Ready {
			ready = append(ready, b)
		}
	}
	return out, briefsLine("ready in "+c.project, ready), nil
}

// ---- task_get

type taskIDIn struct {
	scopeArg
	ID string `json:"id" jsonschema:"task id, like T-3"`
}

func addTaskGetTool(srv *mcp.Server, s *mcpServer) {
	addTool(srv, &mcp.Tool{Name: "task_get",
		Description: "Get a task: status, deps, claim, steps, context, version.",
		Annotations: readOnlyTool("Get a task")}, tool(s, true, true, taskGetTool))
}

func taskGetTool(c *call, in taskIDIn) (view.Task, string, error) {
	id, err := flow.ParseTaskID(in.ID)
	if err != nil {
		return view.Task{}, "", err
	}
	t, err := c.eng.Task(c.project, id)
	if err != nil {
		return view.Task{}, "", err
	}
	return view.TaskOf(t), taskLine(t), nil
}

// ---- task_create

type newTaskFields struct {
	Title       string   `json:"title,omitempty" jsonschema:"what is to be done"`
	Description string   `json:"description,omitempty"`
	Plan        string   `json:"plan,omitempty" jsonschema:"plan id, like P-1"`
	Deps        []string `json:"deps,omitempty" jsonschema:"task ids this one depends on; in tasks[], also keys of earlier items"`
	Owner       string   `json:"owner,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	Priority    int      `json:"priority,omitempty" jsonschema:"0-1000, higher is more urgent"`
	Parent      string   `json:"parent,omitempty" jsonschema:"the task it is a subtask of: an id, or the key of an earlier item"`
	Due         string   `json:"due,omitempty" jsonschema:"when it is due: RFC 3339, a date, or +N with m, h, d or w (+3d)"`
}

type batchTask struct {
	Key string `json:"key,omitempty" jsonschema:"a name for this item that later items can list in deps"`
	newTaskFields
}

type taskCreateIn struct {
	scopeArg
	newTaskFields
	Tasks []batchTask `json:"tasks,omitempty" jsonschema:"several tasks at once, in order, instead of title"`
	requestArg
}

type createdTask struct {
	Key string `json:"key,omitempty"`
	view.TaskBrief
}

type taskCreateOut struct {
	Project string        `json:"project"`
	Tasks   []createdTask `json:"tasks"`
}

func addTaskCreateTool(srv *mcp.Server, s *mcpServer) {
	addTool(srv, &mcp.Tool{Name: "task_create",
		Description: "Create a task from title, or several from tasks[] whose deps may name earlier items by key.",
		Annotations: writeTool("Create tasks", false, false)}, tool(s, false, true, taskCreateTool))
}

func taskCreateTool(c *call, in taskCreateIn) (taskCreateOut, string, error) {
	items, err := in.items()
	if err != nil {
		return taskCreateOut{}, "", err
	}
	batch := make([]flow.BatchTask, len(items))
	for i, it := range items {
		key := in.RequestID
		if len(in.Tasks) > 0 {
			key = flow.SubKey(in.RequestID, strconv.Itoa(i+1))
		}
		due, err := flow.ParseDue(it.Due, time.Now())
		if err != nil {
			return taskCreateOut{}, "", err
		}
		batch[i] = flow.BatchTask{Key: it.Key, NewTask: flow.NewTask{Plan: it.Plan, Title: it.Title, Description: it.Description,
			Deps: it.Deps, Owner: it.Owner, Tags: it.Tags, Priority: it.Priority, Parent: it.Parent, Due: due, Write: flow.Write{Key: key}}}
	}
	tasks, err := c.eng.AddTasks(c.project, batch)
	if err != nil {
		return taskCreateOut{}, "", err
	}
	out := taskCreateOut{Project: c.project, Tasks: []createdTask{}}
	parts := make([]string, len(tasks))
	now := time.Now()
	for i, t := range tasks {
		out.Tasks = append(out.Tasks, createdTask{Key: items[i].Key, TaskBrief: view.TaskBriefOf(t, now)})
		parts[i] = fmt.Sprintf("%s %q", t.ID, t.Title)
	}
	return out, printable("created " + strings.Join(parts, "; ")), nil
}

// items returns the tasks to create: tasks[], or the one given by title.
func (in taskCreateIn) items() ([]batchTask, error) {
	one := in.newTaskFields
	hasOne := one.Title != "" || one.Description != "" || one.Plan != "" || len(one.Deps) > 0 ||
		one.Owner != "" || len(one.Tags) > 0 || one.Priority != 0 || one.Parent != "" || one.Due != ""
	switch {
	case len(in.Tasks) > 0 && hasOne:
		return nil, invalid("give either title (one task) or tasks (several), not both")
	case len(in.Tasks) > 0:
		return in.Tasks, nil
	case one.Title == "":
		return nil, invalid("give title (one task) or tasks (several)")
	}
	return []batchTask{{newTaskFields: one}}, nil
}

// ---- task_update

type taskUpdateIn struct {
	scopeArg
	ID          string    `json:"id" jsonschema:"task id, like T-3"`
	Claim       string    `json:"claim,omitempty" jsonschema:"claim, heartbeat or release your lease on the task"`
	Lease       string    `json:"lease,omitempty" jsonschema:"lease for claim or heartbeat, like 30m (the default); at most 168h"`
	Status      string    `json:"status,omitempty" jsonschema:"move to todo, doing, done, blocked or cancelled"`
	Reason      string    `json:"reason,omitempty" jsonschema:"why the status changes"`
	Force       bool      `json:"force,omitempty" jsonschema:"done despite open deps or running steps (recorded; never past a pending approval); release another's claim"`
	Title       *string   `json:"title,omitempty"`
	Description *string   `json:"description,omitempty"`
	Owner       *string   `json:"owner,omitempty"`
	Tags        *[]string `json:"tags,omitempty" jsonschema:"replaces the tags"`
	Priority    *int      `json:"priority,omitempty"`
	Plan        *string   `json:"plan,omitempty" jsonschema:"plan id, like P-1; empty to detach"`
	Parent      *string   `json:"parent,omitempty" jsonschema:"parent task id, like T-1; empty to detach"`
	Due         *string   `json:"due,omitempty" jsonschema:"due date: RFC 3339, a date, or +N with m, h, d or w; empty to clear"`
	IfVersion   *uint64   `json:"if_version,omitempty" jsonschema:"fail with conflict unless the task is at this version (checked by the first change)"`
	requestArg
}

type taskUpdateOut struct {
	Task    view.Task `json:"task"`
	Applied []string  `json:"applied" jsonschema:"the parts applied, in order: claim, heartbeat, edit, status, release"`
}

func addTaskUpdateTool(srv *mcp.Server, s *mcpServer) {
	addTool(srv, &mcp.Tool{Name: "task_update",
		Description: "Change a task: claim/heartbeat first, then fields, then status, then release; one call or several parts.",
		Annotations: writeTool("Update a task", false, false)}, tool(s, false, true, taskUpdateTool))
}

func taskUpdateTool(c *call, in taskUpdateIn) (taskUpdateOut, string, error) {
	id, err := flow.ParseTaskID(in.ID)
	if err != nil {
		return taskUpdateOut{}, "", err
	}
	lease, err := parseDuration("lease", in.Lease)
	if err != nil {
		return taskUpdateOut{}, "", err
	}
	ifVersion, err := versionArg(in.IfVersion)
	if err != nil {
		return taskUpdateOut{}, "", err
	}
	var due *projection.Time
	if in.Due != nil {
		d, err := flow.ParseDue(*in.Due, time.Now())
		if err != nil {
			return taskUpdateOut{}, "", err
		}
		due = &d
	}
	t, applied, err := c.eng.UpdateTask(flow.TaskUpdate{Project: c.project, ID: id, Claim: in.Claim, Lease: lease,
		Status: in.Status, Reason: in.Reason, Force: in.Force, Title: in.Title, Description: in.Description,
		Owner: in.Owner, Tags: in.Tags, Priority: in.Priority, Plan: in.Plan, Parent: in.Parent, Due: due,
		Write: flow.Write{IfVersion: ifVersion, Key: in.RequestID}})
	if err != nil {
		return taskUpdateOut{}, "", err
	}
	return taskUpdateOut{Task: view.TaskOf(t), Applied: applied}, taskLine(t) + " (" + strings.Join(applied, ", ") + ")", nil
}

// ---- step_update

type stepUpdateIn struct {
	scopeArg
	Action    string  `json:"action" jsonschema:"add, start, progress, done, fail or skip"`
	Task      string  `json:"task,omitempty" jsonschema:"task id for add, like T-3"`
	Step      string  `json:"step,omitempty" jsonschema:"step id for the others, like T-3.2"`
	Title     string  `json:"title,omitempty" jsonschema:"title of a new step (add)"`
	Progress  *int    `json:"progress,omitempty" jsonschema:"0-100, with start or progress"`
	Note      string  `json:"note,omitempty"`
	Result    string  `json:"result,omitempty" jsonschema:"what the step produced (done)"`
	Error     string  `json:"error,omitempty" jsonschema:"what went wrong (fail)"`
	IfVersion *uint64 `json:"if_version,omitempty" jsonschema:"fail with conflict unless the task is at this version"`
	requestArg
}

// stepActions map step_update's actions to step statuses.
var stepActions = map[string]string{
	"start":    projection.StepInProgress,
	"progress": projection.StepInProgress,
	"done":     projection.StepCompleted,
	"fail":     projection.StepFailed,
	"skip":     projection.StepSkipped,
}

func addStepUpdateTool(srv *mcp.Server, s *mcpServer) {
	addTool(srv, &mcp.Tool{Name: "step_update",
		Description: "Add a step to a task, or move one: start, progress (0-100), done, fail, skip.",
		Annotations: writeTool("Update a step", false, false)}, tool(s, false, true, stepUpdateTool))
}

func stepUpdateTool(c *call, in stepUpdateIn) (view.TaskStep, string, error) {
	ifVersion, err := versionArg(in.IfVersion)
	if err != nil {
		return view.TaskStep{}, "", err
	}
	w := flow.Write{IfVersion: ifVersion, Key: in.RequestID}
	var st *flow.TaskStep
	switch to, ok := stepActions[in.Action]; {
	case in.Action == "add":
		if in.Task == "" {
			return view.TaskStep{}, "", invalid("add needs task (like T-3) and title")
		}
		id, perr := flow.ParseTaskID(in.Task)
		if perr != nil {
			return view.TaskStep{}, "", perr
		}
		st, err = c.eng.AddStep(flow.NewStep{Project: c.project, Task: id, Title: in.Title, Write: w})
	case ok:
		if in.Step == "" {
			return view.TaskStep{}, "", invalid("%s needs step (like T-3.2)", in.Action)
		}
		if in.Action == "progress" && in.Progress == nil {
			return view.TaskStep{}, "", invalid("progress needs progress (0-100)")
		}
		st, err = c.eng.MoveStep(flow.StepMove{Project: c.project, ID: in.Step, To: to, Progress: in.Progress,
			Note: in.Note, Result: in.Result, Error: in.Error, Write: w})
	default:
		return view.TaskStep{}, "", invalid("action %q: use add, start, progress, done, fail or skip", in.Action)
	}
	if err != nil {
		return view.TaskStep{}, "", err
	}
	line := printable(fmt.Sprintf("step %s %q %s, %d%%", st.ID, st.Title, st.Status, st.Progress))
	return view.TaskStepOf(st), line, nil
}

// ---- ctx_merge

type ctxMergeIn struct {
	scopeArg
	Task      string     `json:"task" jsonschema:"task id, like T-3"`
	Patch     jsonObject `json:"patch" jsonschema:"JSON object merged into the context (RFC 7396: objects merge, null deletes, arrays replace)"`
	Replace   bool       `json:"replace,omitempty" jsonschema:"replace the whole context with patch"`
	IfVersion *uint64    `json:"if_version,omitempty" jsonschema:"fail with conflict unless the task is at this version"`
	requestArg
}

func addCtxMergeTool(srv *mcp.Server, s *mcpServer) {
	addTool(srv, &mcp.Tool{Name: "ctx_merge",
		Description: "Merge a JSON patch into a task's context (its working memory); returns the merged context and the task's new version.",
		Annotations: writeTool("Merge task context", true, false)}, tool(s, false, true, ctxMergeTool))
}

func ctxMergeTool(c *call, in ctxMergeIn) (view.Context, string, error) {
	id, err := flow.ParseTaskID(in.Task)
	if err != nil {
		return view.Context{}, "", err
	}
	patch, err := rawArg(c, "patch")
	if err != nil {
		return view.Context{}, "", err
	}
	ifVersion, err := versionArg(in.IfVersion)
	if err != nil {
		return view.Context{}, "", err
	}
	tc, err := c.eng.MergeContext(flow.ContextPatch{Project: c.project, ID: id, Patch: patch, Replace: in.Replace,
		Write: flow.Write{IfVersion: ifVersion, Key: in.RequestID}})
	if err != nil {
		return view.Context{}, "", err
	}
	keys := contextKeyNames(tc.Context)
	line := fmt.Sprintf("context of %s: %d keys (%s), v%d", tc.Task, len(keys), strings.Join(keys, ", "), tc.Version)
	return view.ContextOf(tc),
		printable(line), nil
}

// contextKeyNames lists the top-level keys of a context, in order.
func contextKeyNames(doc projection.JSON) []string {
	dec := json.NewDecoder(strings.NewReader(string(doc)))
	var keys []string
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return keys
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if k, ok := tok.(string); ok {
			keys = append(keys, k)
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			break
		}
	}
	return keys
}

// ---- exec_record

type execRecordIn struct {
	scopeArg
	Task         string   `json:"task,omitempty" jsonschema:"task id, like T-3"`
	Step         string   `json:"step,omitempty" jsonschema:"step id, like T-3.2"`
	Plan         string   `json:"plan,omitempty"`
	Command      string   `json:"command,omitempty" jsonschema:"the command line that ran"`
	Code         string   `json:"code,omitempty" jsonschema:"or the code snippet that ran"`
	Cwd          string   `json:"cwd,omitempty"`
	ExitCode     *int     `json:"exit_code,omitempty" jsonschema:"exit code 0-255 (128+n: killed by signal n); give it or success"`
	Success      *bool    `json:"success,omitempty"`
	ElapsedMS    float64  `json:"elapsed_ms,omitempty"`
	Stdout       string   `json:"stdout,omitempty" jsonschema:"kept as head and tail, 16 KiB each"`
	Stderr       string   `json:"stderr,omitempty"`
	AddedVars    []string `json:"added_vars,omitempty"`
	AddedImports []string `json:"added_imports,omitempty"`
	GitHead      string   `json:"git_head,omitempty"`
	requestArg
}

func addExecRecordTool(srv *mcp.Server, s *mcpServer) {
	addTool(srv, &mcp.Tool{Name: "exec_record",
		Description: "Record a command or code that ran: exit code, time, output, on a task or step.",
		Annotations: writeTool("Record an execution", false, false)}, tool(s, false, true, execRecordTool))
}

func execRecordTool(c *call, in execRecordIn) (view.ExecSummary, string, error) {
	b, err := json.Marshal(flow.ExecJSON{Code: in.Code, Command: in.Command, Stdout: in.Stdout, Stderr: in.Stderr,
		Success: in.Success, ExitCode: in.ExitCode, ElapsedMS: in.ElapsedMS, AddedVars: in.AddedVars,
		AddedImports: in.AddedImports, Cwd: in.Cwd, Task: in.Task, Step: in.Step, Plan: in.Plan})
	if err != nil {
		return view.ExecSummary{}, "", err
	}
	x, err := flow.DecodeExec(b)
	if err != nil {
		return view.ExecSummary{}, "", err
	}
	x.Project, x.GitHead, x.Write = c.project, in.GitHead, flow.Write{Key: in.RequestID}
	rec, err := c.eng.RecordExec(x)
	if err != nil {
		return view.ExecSummary{}, "", err
	}
	v := view.ExecSummaryOf(rec)
	on := ""
	if v.Task != "" {
		on = " on " + v.Task
	}
	what := rec.Command
	if what == "" {
		what = codeHeadLine(rec.Code)
	}
	line := fmt.Sprintf("recorded %s%s: %q exit %d, %s ms", v.ID, on, what, v.ExitCode,
		strconv.FormatFloat(v.ElapsedMS, 'f', -1, 64))
	return v, printable(line), nil
}

// ---- approval_request

type approvalRequestIn struct {
	scopeArg
	Task    string `json:"task,omitempty" jsonschema:"task id, like T-3 (none: the project)"`
	Step    string `json:"step,omitempty" jsonschema:"step id, like T-3.2"`
	Message string `json:"message" jsonschema:"what a person is asked to approve"`
	Code    string `json:"code,omitempty" jsonschema:"code to show with it"`
	Action  any    `json:"action,omitempty" jsonschema:"the proposed action as JSON; a grant binds to its exact bytes"`
	TTL     string `json:"ttl,omitempty" jsonschema:"expire after this long, like 1h (default: never)"`
	requestArg
}

func addApprovalRequestTool(srv *mcp.Server, s *mcpServer) {
	addTool(srv, &mcp.Tool{Name: "approval_request",
		Description: "Ask a person to approve an action before you take it; a pending approval keeps its task from done.",
		Annotations: writeTool("Request approval", false, false)}, tool(s, false, true, approvalRequestTool))
}

func approvalRequestTool(c *call, in approvalRequestIn) (view.Approval, string, error) {
	ttl, err := parseDuration("ttl", in.TTL)
	if err != nil {
		return view.Approval{}, "", err
	}
	action, err := rawArg(c, "action")
	if err != nil {
		return view.Approval{}, "", err
	}
	a, err := c.eng.RequestApproval(flow.NewApproval{Project: c.project, Task: in.Task, Step: in.Step, Message: in.Message,
		Code: in.Code, Action: action, TTL: ttl, Write: flow.Write{Key: in.RequestID}})
	if err != nil {
		return view.Approval{}, "", err
	}
	on := ""
	if a.Task != "" {
		on = " on " + a.Task
	}
	line := fmt.Sprintf("approval %s %s%s: %q (a person decides with 'flowctl approval grant %s' or 'deny')",
		a.ID, a.Status, on, a.Message, a.ID)
	return view.ApprovalOf(a), printable(line), nil
}
