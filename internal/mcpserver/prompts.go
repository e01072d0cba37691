package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/flowctl/flowctl/digest"
	"github.com/flowctl/flowctl/projection"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The prompts (prompts/list, prompts/get): the three moments of an
// agent's session, each a user message that says which tools to call in
// which order, filled with what the file holds now. They read the file
// read-only; they never write.

var (
	projectPromptArg = &mcp.PromptArgument{Name: "project", Description: "project name (default: the server's)"}
	taskPromptArg    = &mcp.PromptArgument{Name: "task", Description: "task id, like T-3", Required: true}
)

// mcpPrompts are the prompts in prompts/list order.
var mcpPrompts = []struct {
	prompt *mcp.Prompt
	render func(c *call, args map[string]string) (string, error)
}{
	{&mcp.Prompt{Name: "start-session", Title: "Start a session",
		Description: "Prime the session with the project's digest, pick a ready task and claim it.",
		Arguments: []*mcp.PromptArgument{projectPromptArg,
			{Name: "task", Description: "task id to claim, like T-3 (default: pick one from task_ready)"}}},
		startSessionPrompt},
	{&mcp.Prompt{Name: "finish-task", Title: "Finish a task",
		Description: "Close a task properly: finish its steps, record the commands that ran, mark it done and report.",
		Arguments:   []*mcp.PromptArgument{projectPromptArg, taskPromptArg}},
		finishTaskPrompt},
	{&mcp.Prompt{Name: "request-approval", Title: "Request an approval",
		Description: "Ask a person to approve a risky action before you take it, and wait for the decision.",
		Arguments: []*mcp.PromptArgument{projectPromptArg, taskPromptArg,
			{Name: "action", Description: `the action to approve, as JSON, like {"run":"git push --force"}`}}},
		requestApprovalPrompt},
}

func (s *mcpServer) addPrompts(srv *mcp.Server) {
	for _, p := range mcpPrompts {
		render := p.render
		srv.AddPrompt(p.prompt, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			args := req.Params.Arguments
			var text string
			err := s.with(req.ClientInfo(), true, args["project"], true, func(c *call) error {
				var err error
				text, err = render(c, args)
				return err
			})
			if err != nil {
				return nil, s.c.ToolError(err)
			}
			return &mcp.GetPromptResult{Description: p.prompt.Description,
				Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}}, nil
		})
	}
}

func startSessionPrompt(c *call, args map[string]string) (string, error) {
	p, err := digest.Prime(c.eng, digest.PrimeInput{Project: c.project, Actor: c.actor, Session: c.session})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "You are starting a work session on flowctl project %q as %q. This is where the work stands (seq %d):\n\n%s\n\n",
		p.Project, p.Actor, p.HeadSeq, p.Markdown)
	b.WriteString("Then:\n")
	if id := args["task"]; id != "" {
		t, err := c.eng.Task(c.project, id)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "1. Claim %s (%q, now %s): task_update {\"id\":%q,\"claim\":\"claim\",\"status\":\"doing\"}.\n", t.ID, t.Title, t.Status, t.ID)
	} else {
		b.WriteString("1. Call task_ready and pick the first ready task (they are in priority order).\n")
		b.WriteString("2. Claim it: task_update {\"id\":\"T-n\",\"claim\":\"claim\",\"status\":\"doing\"}. A conflict means someone else holds it: pick the next.\n")
	}
	b.WriteString("Keep what you learn in the task's context with ctx_merge, add steps with step_update {\"action\":\"add\"}, and pass a request_id on every write so that a retry is safe.\n")
	return b.String(), nil
}

func finishTaskPrompt(c *call, args map[string]string) (string, error) {
	t, err := c.eng.Task(c.project, args["task"])
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Finish task %s (%q, now %s, version %d) of project %q:\n", t.ID, t.Title, t.Status, t.Version, c.project)
	open := openSteps(t)
	if len(open) == 0 {
		b.WriteString("1. Its steps are all finished.\n")
	} else {
		fmt.Fprintf(&b, "1. Finish its open steps with step_update (action done, fail or skip): %s.\n", strings.Join(open, ", "))
	}
	b.WriteString("2. Record every command you ran for it that is not recorded yet: exec_record {\"task\":\"" + t.ID + "\",\"command\":…,\"exit_code\":…,\"elapsed_ms\":…,\"stdout\":…}.\n")
	if len(t.PendingApprovals) > 0 {
		fmt.Fprintf(&b, "3. Approvals %s are still pending: the task cannot be done until a person decides them (approval_status shows them).\n", strings.Join(t.PendingApprovals, ", "))
	} else {
		b.WriteString("3. No approval is pending.\n")
	}
	fmt.Fprintf(&b, "4. Mark it done: task_update {\"id\":%q,\"status\":\"done\",\"if_version\":N} with N the version your last write to it returned (it is %d now); a conflict lists what still blocks it.\n", t.ID, t.Version)
	b.WriteString("5. Report in a few lines what was done, what was verified and what is left, and keep that report in the context: ctx_merge {\"task\":\"" + t.ID + "\",\"patch\":{\"report\":\"…\"}}.\n")
	return b.String(), nil
}

// openSteps lists a task's steps that are not finished, as "T-1.2 (title, status)".
func openSteps(t *projection.Task) []string {
	var open []string
	for _, st := range t.Steps {
		if st.Status == projection.StepPending || st.Status == projection.StepInProgress {
			open = append(open, fmt.Sprintf("%s (%q, %s)", st.ID, st.Title, st.Status))
		}
	}
	return open
}

func requestApprovalPrompt(c *call, args map[string]string) (string, error) {
	t, err := c.eng.Task(c.project, args["task"])
	if err != nil {
		return "", err
	}
	action := args["action"]
	if action == "" {
		action = `{"…":"the exact action, e.g. the command line"}`
	} else if !json.Valid([]byte(action)) {
		return "", invalid("action is not JSON: give it as JSON, like {\"run\":\"git push --force\"}")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Before you take a risky action for task %s (%q) of project %q, ask a person:\n", t.ID, t.Title, c.project)
	fmt.Fprintf(&b, "1. approval_request {\"task\":%q,\"message\":\"what and why, in one line\",\"action\":%s}. The grant binds to the action's exact bytes.\n", t.ID, action)
	b.WriteString("2. Tell the person the approval id (A-n) and that they decide with 'flowctl approval grant A-n' or 'flowctl approval deny A-n --comment …'.\n")
	b.WriteString("3. Do not take the action until approval_status {\"id\":\"A-n\"} says granted; if it is denied, stop and say so. While it is pending the task cannot be marked done.\n")
	return b.String(), nil
}
