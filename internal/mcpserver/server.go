package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Config is what the server needs from the program that runs it: where
// to talk, its flags, and the program's rules for the file, the actor,
// the default project and the words of errors.
type Config struct {
	In  io.Reader // the client's frames
	Out io.Writer // the server's frames, and nothing else
	Log io.Writer // the start-up line and diagnostics

	Tools   string // --tools: profiles and tool names, comma-separated ("" is default)
	Text    string // --text: full (or "") or summary
	Quiet   bool   // no start-up line
	Version string // the server's version in initialize

	// Actor, when set (--actor, FLOW_ACTOR), acts for every client;
	// else the client's name from initialize does, else DefaultActor().
	Actor        string
	DefaultActor func() string
	Session      string

	// Open opens the flow file for one call as actor, with the server's
	// read cache.
	Open func(readOnly bool, actor string, cache *flow.Cache) (*flow.Engine, error)
	// Project is the default project of a call (--project, FLOW_PROJECT,
	// the switched-to or the only one).
	Project func(eng *flow.Engine) (string, error)
	// CreateProject creates a project as `project new` does.
	CreateProject func(eng *flow.Engine, in flow.NewProject) (*projection.Project, error)
	// Classify gives an error's code, its message as one line, and a
	// hint when the error carries one sharper than its code's ("" else).
	Classify func(err error) (code flow.Code, message, hint string)
}

// Profiles are the names of the tool profiles, and the tools of each.
func Profiles() map[string][]string { return mcpProfiles }

// TextModes are the values of Config.Text.
var TextModes = []string{"full", "summary"}

// CheckFlags refuses a Tools or Text value the server would not start
// with (ErrInvalid).
func CheckFlags(tools, text string) error {
	if _, err := parseToolList(tools); err != nil {
		return err
	}
	switch text {
	case "", "full", "summary":
		return nil
	}
	return invalid("--text %q: use full or summary", text)
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
		"task_list", "approval_status", "history", "search", "dep_update", "checkpoint_create"},
	"all": {"flow_prime", "task_ready", "task_get", "task_create", "task_update", "step_update",
		"ctx_merge", "exec_record", "approval_request",
		"task_list", "approval_status", "history", "search", "dep_update", "checkpoint_create",
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
			return nil, invalid("--tools: unknown tool or profile %q (profiles: default, standard, all; tools: %s)",
				name, strings.Join(mcpProfiles["all"], ", "))
		}
	}
	var out []string
	for _, t := range mcpProfiles["all"] {
		if want[t] {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, invalid("--tools: no tools selected")
	}
	return out, nil
}

// Serve runs the server on c.In and c.Out (one JSON-RPC message per line,
// see frameTransport) until the client hangs up or ctx ends. Bad flags
// are ErrInvalid, before anything is served.
func Serve(ctx context.Context, c Config) error {
	if err := CheckFlags(c.Tools, c.Text); err != nil {
		return err
	}
	tools, _ := parseToolList(c.Tools)
	s := &mcpServer{c: c, cache: flow.NewCache(flow.DefaultCacheSize), textJSON: c.Text != "summary"}
	srv := s.newServer(tools)
	if !c.Quiet {
		fmt.Fprintf(c.Log, "flowctl mcp: serving %d tools on stdio (%s)\n", len(tools), strings.Join(tools, ", "))
	}
	ss, err := srv.Connect(context.Background(), &frameTransport{r: c.In, w: c.Out}, nil)
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

// mcpServer holds what all calls of one server share: the config, the
// read cache, and how results are written.
type mcpServer struct {
	c        Config
	cache    *flow.Cache
	textJSON bool // add the JSON of the result to its text content
}

func (s *mcpServer) newServer(tools []string) *mcp.Server {
	logger := slog.New(slog.NewTextHandler(s.c.Log, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv := mcp.NewServer(&mcp.Implementation{Name: "flowctl", Title: "flowctl", Version: s.c.Version}, &mcp.ServerOptions{
		Instructions: mcpInstructions,
		Logger:       logger,
		Capabilities: &mcp.ServerCapabilities{}, // no logging capability: logs go to stderr
	})
	for _, name := range tools {
		mcpToolTable[name](srv, s)
	}
	s.addResources(srv)
	s.addPrompts(srv)
	srv.AddReceivingMiddleware(s.toolErrors)
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
	s       *mcpServer
}

// actorFor names who acts for req: Config.Actor, then the client's name
// from initialize, then Config.DefaultActor.
func (s *mcpServer) actorFor(info *mcp.Implementation) string {
	if s.c.Actor != "" {
		return s.c.Actor
	}
	if info != nil && strings.TrimSpace(info.Name) != "" {
		return strings.TrimSpace(info.Name)
	}
	return s.c.DefaultActor()
}

// with opens the file for one call, resolves the project (the argument,
// else Config.Project's), runs fn and closes the file.
func (s *mcpServer) with(info *mcp.Implementation, readOnly bool, project string, needProject bool, fn func(c *call) error) (err error) {
	actor := s.actorFor(info)
	eng, err := s.c.Open(readOnly, actor, s.cache)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := eng.Close(); err == nil {
			err = cerr
		}
	}()
	c := &call{eng: eng, actor: actor, session: s.c.Session, s: s}
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
	return s.c.Project(eng)
}

// ToolError is a failed call as the client sees it: the text of the
// result is the JSON error object of the CLI, {"error":{code,message,hint}},
// with the codes of DESIGN.md §8.
type ToolError struct {
	Code    flow.Code `json:"code"`
	Message string    `json:"message"`
	Hint    string    `json:"hint,omitempty"`
}

func (e *ToolError) Error() string {
	b, _ := marshalJSON(map[string]*ToolError{"error": e})
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
	flow.CodeVetoed:   "a hook of the project refused this change: the message says why; do not retry it unchanged",
}

// ToolError classifies err with Config.Classify, as a failed call
// shows it.
func (c Config) ToolError(err error) *ToolError {
	var te *ToolError
	if errors.As(err, &te) {
		return te
	}
	code, msg, hint := c.Classify(err)
	if _, known := mcpHints[code]; !known {
		code = flow.CodeInternal // a code of the program's own (an exit status passed on)
	}
	if hint == "" {
		hint = mcpHints[code]
	}
	return &ToolError{Code: code, Message: msg, Hint: hint}
}

// toolErrors gives every failed tool call the shape of toolError, also
// those the SDK refuses before a handler runs (arguments that do not match
// the input schema): they are invalid input.
func (s *mcpServer) toolErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		r, ok := res.(*mcp.CallToolResult)
		if err != nil || !ok || !r.IsError {
			return res, err
		}
		var te *ToolError
		if !errors.As(r.GetError(), &te) {
			cause := r.GetError()
			if cause == nil {
				cause = errors.New(resultText(r))
			}
			te = s.c.ToolError(fmt.Errorf("%w: %v", flow.ErrInvalid, cause))
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
			return nil, zero, s.c.ToolError(err)
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
			return nil, zero, s.c.ToolError(err)
		}
		content := []mcp.Content{&mcp.TextContent{Text: summary}}
		if s.textJSON {
			b, err := marshalJSON(out)
			if err != nil {
				return nil, zero, s.c.ToolError(err)
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
