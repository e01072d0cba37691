package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
)

// mcpOptions are the flags of `flowctl mcp`.
type mcpOptions struct {
	tools string // profile names and tool names, comma-separated
	text  string // full | summary
}

func (a *app) mcpCommand() *cobra.Command {
	var o mcpOptions
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the Model Context Protocol on stdio (for AI assistants)",
		Long: `Serve flowctl's tools and resources to an MCP client over stdin/stdout.
Stdout carries only protocol frames; diagnostics go to stderr. Every call
opens the flow file, works and closes it, so flowctl in another terminal
keeps working. Writes are recorded as the client's name (from initialize)
unless --actor or FLOW_ACTOR is set.

Tool profiles (--tools, env FLOW_MCP_TOOLS; comma-separate profiles and tool names):
  default   ` + strings.Join(mcpProfiles["default"], ", ") + `
  standard  default + ` + strings.Join(mcpProfiles["standard"][len(mcpProfiles["default"]):], ", ") + `
  all       standard + ` + strings.Join(mcpProfiles["all"][len(mcpProfiles["standard"]):], ", "),
		Example: `  flowctl mcp
  flowctl mcp --tools standard
  flowctl mcp --tools default,rollback --text summary
  {"mcpServers": {"flowctl": {"command": "flowctl", "args": ["mcp"]}}}`,
		Args: cobra.NoArgs,
	}
	cmd.Flags().StringVar(&o.tools, "tools", "", "tool profile (default, standard, all) or tool names, comma-separated (env FLOW_MCP_TOOLS)")
	enumVar(cmd.Flags(), &o.text, "text", "", mcpTextModes, "text content of results: full (a summary line, then the JSON) or summary (env FLOW_MCP_TEXT; default full)")
	cmd.RunE = a.action(func(cmd *cobra.Command, _ []string) error {
		if !cmd.Flags().Changed("tools") {
			o.tools = a.getenv("FLOW_MCP_TOOLS")
		}
		if !cmd.Flags().Changed("text") {
			o.text = a.getenv("FLOW_MCP_TEXT")
		}
		return a.serveMCP(cmd.Context(), o)
	})
	return cmd
}

// mcpProfiles are the tool sets of --tools. Each profile extends the one
// before it: standard adds the read tools and the additive writes an
// agent uses beyond the core loop; all adds the tools that rewind state or
// change projects.
var mcpProfiles = map[string][]string{
	"default": {"flow_prime", "task_ready", "task_get", "task_create", "task_update", "step_update",
		"ctx_merge", "exec_record", "approval_request"},
	"standard": {"flow_prime", "task_ready", "task_get", "task_create", "task_update", "step_update",
		"ctx_merge", "exec_record", "approval_request",
		"task_list", "approval_status", "history", "dep_update", "checkpoint_create"},
	"all": {"flow_prime", "task_ready", "task_get", "task_create", "task_update", "step_update",
		"ctx_merge", "exec_record", "approval_request",
		"task_list", "approval_status", "history", "dep_update", "checkpoint_create",
		"rollback", "project_manage"},
}

// parseToolList resolves --tools into tool names, in the order of the
// "all" profile. Empty means the default profile.
func parseToolList(spec string) ([]string, error) {
	if strings.TrimSpace(spec) == "" {
		spec = "default"
	}
	want := map[string]bool{}
	for _, name := range strings.Split(spec, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "":
		case mcpProfiles[name] != nil:
			for _, t := range mcpProfiles[name] {
				want[t] = true
			}
		case slices.Contains(mcpProfiles["all"], name):
			want[name] = true
		default:
			return nil, usageError{fmt.Errorf("--tools: unknown tool or profile %q (profiles: default, standard, all; tools: %s)",
				name, strings.Join(mcpProfiles["all"], ", "))}
		}
	}
	var out []string
	for _, t := range mcpProfiles["all"] {
		if want[t] {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, usageError{errors.New("--tools: no tools selected")}
	}
	return out, nil
}

// serveMCP runs the server on the app's stdin and stdout (one JSON-RPC
// message per line, see frameTransport) until the client hangs up or ctx
// ends.
func (a *app) serveMCP(ctx context.Context, o mcpOptions) error {
	tools, err := parseToolList(o.tools)
	if err != nil {
		return err
	}
	switch o.text {
	case "", "full", "summary":
	default:
		return usageError{fmt.Errorf("--text %q: use full or summary", o.text)}
	}
	s := &mcpServer{a: a, cache: flow.NewCache(flow.DefaultCacheSize), textJSON: o.text != "summary"}
	srv := s.newServer(tools)
	if !a.g.quiet {
		fmt.Fprintf(a.stderr, "flowctl mcp: serving %d tools on stdio (%s)\n", len(tools), strings.Join(tools, ", "))
	}
	ss, err := srv.Connect(context.Background(), &frameTransport{r: a.stdin, w: a.stdout}, nil)
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { ss.Close() }) // SIGINT, SIGTERM: a clean end
	defer stop()
	err = ss.Wait()
	if err == nil || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil
	}
	return err
}

// mcpServer holds what all calls of one server share: the app (flags and
// environment), the read cache, and how results are written.
type mcpServer struct {
	a        *app
	cache    *flow.Cache
	textJSON bool // add the JSON of the result to its text content
}

func (s *mcpServer) newServer(tools []string) *mcp.Server {
	logger := slog.New(slog.NewTextHandler(s.a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv := mcp.NewServer(&mcp.Implementation{Name: "flowctl", Title: "flowctl", Version: version}, &mcp.ServerOptions{
		Instructions: mcpInstructions,
		Logger:       logger,
		Capabilities: &mcp.ServerCapabilities{}, // no logging capability: logs go to stderr
	})
	for _, name := range tools {
		mcpToolTable[name](srv, s)
	}
	s.addResources(srv)
	s.addPrompts(srv)
	srv.AddReceivingMiddleware(toolErrors)
	return srv
}

// mcpInstructions is what a client may show its model about the server.
const mcpInstructions = `flowctl keeps the memory of the work: projects, tasks with dependencies, steps, per-task context, approvals and the commands that were run. Start a session with flow_prime, pick work with task_ready, claim it with task_update {claim: "claim", status: "doing"}, keep notes in ctx_merge, and pass request_id on writes so that a retry is safe.`

// call is one tool call's open engine, project and actor.
type call struct {
	eng     *flow.Engine
	project string
	actor   string
	session string
	req     *mcp.CallToolRequest // nil for resource reads
}

// actorFor names who acts for req: --actor or FLOW_ACTOR, then the
// client's name from initialize, then the CLI's rule (git, $USER).
func (s *mcpServer) actorFor(info *mcp.Implementation) string {
	if s.a.g.actor != "" {
		return s.a.g.actor
	}
	if info != nil && strings.TrimSpace(info.Name) != "" {
		return strings.TrimSpace(info.Name)
	}
	return s.a.actor()
}

// with opens the file for one call, resolves the project (the argument,
// else --project / FLOW_PROJECT, the switched-to project, or the only
// one), runs fn and closes the file.
func (s *mcpServer) with(info *mcp.Implementation, readOnly bool, project string, needProject bool, fn func(c *call) error) (err error) {
	path, err := s.a.dbPath()
	if err != nil {
		return err
	}
	actor := s.actorFor(info)
	eng, err := flow.Open(path, flow.Options{
		ReadOnly: readOnly, LockTimeout: s.a.g.lockTimeout, Actor: actor, Session: s.a.g.session,
		Warn: s.a.warn, Cache: s.cache,
	})
	if errors.Is(err, eventlog.ErrNotExist) {
		err = withHint(err, "run 'flowctl init' in the project's directory, or point --db or FLOW_DB at the file")
	}
	if err != nil {
		return err
	}
	defer closeEngine(eng, &err)
	c := &call{eng: eng, actor: actor, session: s.a.g.session}
	if needProject || project != "" {
		if c.project, err = s.resolveProject(eng, project); err != nil {
			return err
		}
	}
	return fn(c)
}

func (s *mcpServer) resolveProject(eng *flow.Engine, name string) (string, error) {
	if name != "" {
		return eng.ResolveProject(name)
	}
	p, err := s.a.currentProject(eng)
	var h hinted
	if errors.As(err, &h) && errors.Is(err, flow.ErrInvalid) {
		err = withHint(h.err, "pass project, or set FLOW_PROJECT in the server's environment")
	}
	return p, err
}

// toolError is a failed call as the client sees it: the text of the
// result is the JSON error object of the CLI, {"error":{code,message,hint}},
// with the codes of DESIGN.md §8.
type toolError struct {
	Code    flow.Code `json:"code"`
	Message string    `json:"message"`
	Hint    string    `json:"hint,omitempty"`
}

func (e *toolError) Error() string {
	b, _ := marshalJSON(map[string]*toolError{"error": e})
	return string(b)
}

// mcpHints say what an agent can do next, per code, when the error does
// not carry a sharper hint.
var mcpHints = map[flow.Code]string{
	flow.CodeInvalid:  "fix the arguments and call again",
	flow.CodeNotFound: "check the id (task_ready, task_list, or task_get)",
	flow.CodeConflict: "re-read the task with task_get and retry from its current state",
	flow.CodeBusy:     "another process holds the file; retry in a moment",
	flow.CodePending:  "a person has not decided yet; ask them to run 'flowctl approval grant' or 'deny'",
	flow.CodeCorrupt:  "the file failed a check; ask a person to run 'flowctl verify'",
	flow.CodeInternal: "report this as a flowctl bug",
}

// newToolError classifies err with the CLI's code table.
func newToolError(err error) *toolError {
	var te *toolError
	if errors.As(err, &te) {
		return te
	}
	code := codeOf(err)
	if code == codeExit {
		code = flow.CodeInternal
	}
	hint := mcpHints[code]
	if sh := sentinelHint(err); sh != "" {
		hint = sh
	}
	var h hinted
	if errors.As(err, &h) {
		hint = h.hint
	}
	return &toolError{Code: code, Message: message(err), Hint: hint}
}

// toolErrors gives every failed tool call the shape of toolError, also
// those the SDK refuses before a handler runs (arguments that do not match
// the input schema): they are invalid input.
func toolErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		r, ok := res.(*mcp.CallToolResult)
		if err != nil || !ok || !r.IsError {
			return res, err
		}
		var te *toolError
		if !errors.As(r.GetError(), &te) {
			cause := r.GetError()
			if cause == nil {
				cause = errors.New(resultText(r))
			}
			te = newToolError(fmt.Errorf("%w: %v", flow.ErrInvalid, cause))
		}
		r.Content = []mcp.Content{&mcp.TextContent{Text: te.Error()}}
		r.StructuredContent = nil
		return r, nil
	}
}

// resultText joins the text content of a result.
func resultText(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// scopeArg is the project argument every tool takes.
type scopeArg struct {
	Project string `json:"project,omitempty" jsonschema:"project name (default: the server's)"`
}

func (a scopeArg) projectName() string { return a.Project }

// requestArg is the idempotency key every write takes.
type requestArg struct {
	RequestID string `json:"request_id,omitempty" jsonschema:"idempotency key: a retry with it changes nothing"`
}

// toolFunc is a tool's body: it returns the structured result and the
// one-line summary of it.
type toolFunc[In, Out any] func(c *call, in In) (Out, string, error)

// tool makes the handler of a tool: open the file (read-only or not),
// resolve the project, run fn, close; errors become tool errors.
func tool[In, Out any](s *mcpServer, readOnly, needProject bool, fn toolFunc[In, Out]) mcp.ToolHandlerFor[In, Out] {
	return func(_ context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		var out, zero Out
		var summary string
		if err := checkArguments(req.Params.Arguments); err != nil {
			return nil, zero, newToolError(err)
		}
		project := ""
		if p, ok := any(in).(interface{ projectName() string }); ok {
			project = p.projectName()
		}
		err := s.with(req.ClientInfo(), readOnly, project, needProject, func(c *call) error {
			c.req = req
			var err error
			out, summary, err = fn(c, in)
			return err
		})
		if err != nil {
			return nil, zero, newToolError(err)
		}
		content := []mcp.Content{&mcp.TextContent{Text: summary}}
		if s.textJSON {
			b, err := marshalJSON(out)
			if err != nil {
				return nil, zero, newToolError(err)
			}
			content = append(content, &mcp.TextContent{Text: string(b)})
		}
		return &mcp.CallToolResult{Content: content}, out, nil
	}
}

// checkArguments refuses what the SDK's decoding would silently let
// through: invalid UTF-8 (replaced by U+FFFD) and duplicate keys (the last
// one wins), at any depth, with the engine's JSON check. JSON values
// stored as given (a patch, an action) are checked again, with the depth
// limit, by the engine.
func checkArguments(b []byte) error {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	if err := flow.CheckJSONWithin(b, argumentLevels); err != nil {
		return invalid("arguments: %v", err)
	}
	return nil
}

// argumentLevels is how deep in the arguments a JSON value a user gives
// sits: the arguments object, then an item of tasks[].
const argumentLevels = 2

// Annotation presets. Nothing flowctl does is ever deleted (every write
// appends events), so only the tools that rewind or close things are
// marked destructive.
func readOnlyTool(title string) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: boolPtr(false)}
}

func writeTool(title string, idempotent, destructive bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, IdempotentHint: idempotent, DestructiveHint: boolPtr(destructive), OpenWorldHint: boolPtr(false)}
}

func boolPtr(b bool) *bool { return &b }
