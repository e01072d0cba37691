package main

import (
	"errors"
	"strings"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/internal/mcpserver"
	"github.com/flowctl/flowctl/projection"
	"github.com/spf13/cobra"
)

// mcpOptions are the flags of `flowctl mcp`.
type mcpOptions struct {
	tools string // profile names and tool names, comma-separated
	text  string // full | summary
}

func (a *app) mcpCommand() *cobra.Command {
	var o mcpOptions
	profiles := mcpserver.Profiles()
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the Model Context Protocol on stdio (for AI assistants)",
		Long: `Serve flowctl's tools and resources to an MCP client over stdin/stdout.
Stdout carries only protocol frames; diagnostics go to stderr. Every call
opens the flow file, works and closes it, so flowctl in another terminal
keeps working. Writes are recorded as the client's name (from initialize)
unless --actor or FLOW_ACTOR is set.

Tool profiles (--tools, env FLOW_MCP_TOOLS; comma-separate profiles and tool names):
  default   ` + strings.Join(profiles["default"], ", ") + `
  standard  default + ` + strings.Join(profiles["standard"][len(profiles["default"]):], ", ") + `
  all       standard + ` + strings.Join(profiles["all"][len(profiles["standard"]):], ", "),
		Example: `  flowctl mcp
  flowctl mcp --tools standard
  flowctl mcp --tools default,rollback --text summary
  {"mcpServers": {"flowctl": {"command": "flowctl", "args": ["mcp"]}}}`,
		Args: cobra.NoArgs,
	}
	cmd.Flags().StringVar(&o.tools, "tools", "", "tool profile (default, standard, all) or tool names, comma-separated (env FLOW_MCP_TOOLS)")
	enumVar(cmd.Flags(), &o.text, "text", "", mcpserver.TextModes, "text content of results: full (a summary line, then the JSON) or summary (env FLOW_MCP_TEXT; default full)")
	cmd.RunE = a.action(func(cmd *cobra.Command, _ []string) error {
		if !cmd.Flags().Changed("tools") {
			o.tools = a.getenv("FLOW_MCP_TOOLS")
		}
		if !cmd.Flags().Changed("text") {
			o.text = a.getenv("FLOW_MCP_TEXT")
		}
		if err := mcpserver.CheckFlags(o.tools, o.text); err != nil {
			return usageError{err}
		}
		return mcpserver.Serve(cmd.Context(), a.mcpConfig(o))
	})
	return cmd
}

// mcpConfig wires the server to the app: its streams and flags, and the
// CLI's rules for the file, the actor, the project and errors.
func (a *app) mcpConfig(o mcpOptions) mcpserver.Config {
	return mcpserver.Config{
		In: a.stdin, Out: a.stdout, Log: a.stderr,
		Tools: o.tools, Text: o.text, Quiet: a.g.quiet, Version: version,
		Actor: a.g.actor, DefaultActor: a.actor, Session: a.g.session,
		Open:    a.mcpOpen,
		Project: a.mcpProject,
		CreateProject: func(eng *flow.Engine, in flow.NewProject) (*projection.Project, error) {
			return a.createProject(eng, in, false)
		},
		Classify: mcpClassify,
	}
}

// mcpOpen opens the file for one tool call.
func (a *app) mcpOpen(readOnly bool, actor string, cache *flow.Cache) (*flow.Engine, error) {
	path, err := a.dbPath()
	if err != nil {
		return nil, err
	}
	opts := flow.Options{
		ReadOnly: readOnly, LockTimeout: a.g.lockTimeout, Actor: actor, Session: a.g.session,
		Warn: a.warn, Cache: cache,
	}
	if !readOnly {
		if opts.Hooks, err = a.hooks(); err != nil {
			return nil, err
		}
	}
	eng, err := flow.Open(path, opts)
	if errors.Is(err, store.ErrNotExist) {
		err = withHint(err, "run 'flowctl init' in the project's directory, or point --db or FLOW_DB at the file")
	}
	return eng, err
}

// mcpProject is the default project of a tool call, with a hint for an
// agent when there is none.
func (a *app) mcpProject(eng *flow.Engine) (string, error) {
	p, err := a.currentProject(eng)
	var h hinted
	if errors.As(err, &h) && errors.Is(err, flow.ErrInvalid) {
		err = withHint(h.err, "pass project, or set FLOW_PROJECT in the server's environment")
	}
	return p, err
}

// mcpClassify is the CLI's error table for the server: the code, the
// message, and a hint sharper than the code's.
func mcpClassify(err error) (flow.Code, string, string) {
	code := codeOf(err)
	hint := sentinelHint(err)
	var h hinted
	if errors.As(err, &h) {
		hint = h.hint
	}
	return code, message(err), hint
}
