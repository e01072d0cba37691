package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// version is the flowctl release; set with -ldflags "-X main.version=...".
var version = defaultVersion

// defaultVersion is version when the build set none.
const defaultVersion = "0.1.0-dev"

// app is one invocation: its environment, global flags, and whether a
// command got as far as running (anything failing before is a usage error).
type app struct {
	env
	args []string // the command line, for errors that come before parsing
	g    globals
	disp display // how text on stdout looks, set with the globals
	ran  bool
	// work names the long work a command does, for its progress bar
	// ("" is the rebuild of projections an open may do; "-" draws none).
	work string
	bar  *progressbar.ProgressBar // the bar on stderr, while one is drawn
	// completingWord is the word a completion request completes.
	completingWord string
}

type globals struct {
	db          string
	project     string
	actor       string
	session     string
	output      string
	outputSet   bool // -o or --json was given
	json        bool
	lockTimeout time.Duration
	color       string
	quiet       bool
	noHooks     bool
}

func (g *globals) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&g.db, "db", "", "path of the flow file (env FLOW_DB; default: .flow/flow.db here or in a parent)")
	fs.StringVar(&g.project, "project", "", "project to work in (env FLOW_PROJECT)")
	fs.StringVar(&g.actor, "actor", "", "who is acting (env FLOW_ACTOR; default: git user.name, then $USER)")
	fs.StringVar(&g.session, "session", "", "session id recorded on events (env FLOW_SESSION)")
	enumVarP(fs, &g.output, "output", "o", "text", outputFormats, "output format: text, json or jsonl")
	fs.BoolVar(&g.json, "json", false, "shorthand for -o json")
	fs.DurationVar(&g.lockTimeout, "lock-timeout", eventlog.DefaultTimeout, "how long to wait for the file lock (env FLOW_LOCK_TIMEOUT)")
	enumVar(fs, &g.color, "color", "auto", colorModes, "color output: auto, always or never (honours NO_COLOR and FORCE_COLOR)")
	fs.BoolVarP(&g.quiet, "quiet", "q", false, "print only data and errors")
	fs.BoolVar(&g.noHooks, "no-hooks", false, "run no hook, and record that on the events (env FLOW_NO_HOOKS=1)")
}

// run builds the command tree, runs args and returns the exit code.
func run(ctx context.Context, args []string, e env) int {
	a := &app{env: e, args: args}
	root := a.rootCommand()
	// Never nil: cobra would read os.Args[1:] instead.
	root.SetArgs(append([]string{}, args...))
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	if a.completing() {
		// cobra prints each candidate with its own write: buffer them.
		out := bufio.NewWriter(e.stdout)
		defer out.Flush()
		root.SetOut(out)
	}
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	if !a.ran {
		err = usageError{err}
	}
	a.clearProgress()
	return report(e.stderr, suggest(root, args, err), a.jsonErrors(), usageHint(root, args))
}

// completing reports whether this is a shell's completion request.
func (a *app) completing() bool {
	return slices.ContainsFunc(a.args, func(s string) bool { return strings.HasPrefix(s, "__complete") })
}

// usageHint is where to read how the command in args is used.
func usageHint(root *cobra.Command, args []string) string {
	cmd, _, err := root.Find(args)
	if err != nil || cmd == nil {
		cmd = root
	}
	return fmt.Sprintf("see '%s --help'", cmd.CommandPath())
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "flowctl",
		Short:         "The memory of a piece of work: an event-sourced workflow log",
		Long:          "flowctl keeps projects, plans, tasks, steps, context, approvals and the commands that were run\nas immutable events in one local file (.flow/flow.db), for people and AI assistants alike.",
		Version:       version,
		SilenceErrors: true,
		SilenceUsage:  true,
		// The suggestions are ours (suggest.go), as a hint.
		DisableSuggestions: true,
	}
	root.SetVersionTemplate(fmt.Sprintf("flowctl version {{.Version}} (file format %d)\n", eventlog.FormatVersion))
	a.g.addFlags(root.PersistentFlags())
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error { return a.resolveGlobals(cmd) }
	root.AddCommand(
		a.initCommand(),
		a.logCommand(),
		a.verifyCommand(),
		a.exportCommand(),
		a.importCommand(),
		a.migrateCommand(),
		a.quickstartCommand(),
		a.projectCommand(),
		a.planCommand(),
		a.taskCommand(),
		a.depCommand(),
		a.readyCommand(),
		a.ctxCommand(),
		a.stepCommand(),
		a.noteCommand(),
		a.approvalCommand(),
		a.execCommand(),
		a.statusCommand(),
		a.statsCommand(),
		a.reportCommand(),
		a.searchCommand(),
		a.sessionCommand(),
		a.graphCommand(),
		a.rebuildCommand(),
		a.recoverCommand(),
		a.compactCommand(),
		a.upgradeCommand(),
		a.checkpointCommand(),
		a.rollbackCommand(),
		a.undoCommand(),
		a.diffCommand(),
		a.snapshotCommand(),
		a.mcpCommand(),
		a.primeCommand(),
		a.watchCommand(),
		a.serveCommand(),
		a.hooksCommand(),
		a.versionCommand(),
	)
	refuseUnknownSubcommands(root)
	if a.completing() {
		// Only a completion request needs the completers; registering them
		// adds to a table of cobra's that lives as long as the process.
		a.addCompletions(root)
	}
	return root
}

// refuseUnknownSubcommands makes every command group answer an unknown
// subcommand with a usage error (exit 2), as the root does; cobra would
// print the group's help and exit 0, so a typo in a script would pass.
func refuseUnknownSubcommands(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		refuseUnknownSubcommands(c)
	}
	if cmd.HasParent() && cmd.HasSubCommands() && cmd.Run == nil && cmd.RunE == nil {
		cmd.Args = cobra.ArbitraryArgs
		cmd.RunE = func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Errorf("unknown command %q for %q", args[0], c.CommandPath())}
			}
			return c.Help()
		}
	}
}

// resolveGlobals fills unset flags from the environment and checks them.
func (a *app) resolveGlobals(cmd *cobra.Command) error {
	if err := refuseUnused(cmd); err != nil {
		return err
	}
	fs := cmd.Flags()
	fromEnv := func(flag string, dst *string, name string) {
		if !fs.Changed(flag) {
			if v := a.getenv(name); v != "" {
				*dst = v
			}
		}
	}
	fromEnv("db", &a.g.db, "FLOW_DB")
	fromEnv("project", &a.g.project, "FLOW_PROJECT")
	fromEnv("actor", &a.g.actor, "FLOW_ACTOR")
	fromEnv("session", &a.g.session, "FLOW_SESSION")
	if v := a.getenv("FLOW_LOCK_TIMEOUT"); v != "" && !fs.Changed("lock-timeout") {
		d, err := time.ParseDuration(v)
		if err != nil {
			return usageError{fmt.Errorf("FLOW_LOCK_TIMEOUT=%q is not a duration (e.g. 5s)", v)}
		}
		a.g.lockTimeout = d
	}
	a.g.outputSet = fs.Changed("output") || fs.Changed("json")
	if a.g.json {
		if fs.Changed("output") && a.g.output != "json" {
			return usageError{fmt.Errorf("--json and -o %s ask for two formats: give one", a.g.output)}
		}
		a.g.output = "json"
	}
	if a.g.lockTimeout <= 0 {
		return usageError{fmt.Errorf("--lock-timeout must be positive")}
	}
	a.disp = a.resolveDisplay()
	return nil
}

// jsonErrors reports whether errors should be printed as JSON. It looks at
// the raw flags too, since a usage error can come before they are resolved.
func (a *app) jsonErrors() bool {
	return a.g.json || a.g.output == "json" || a.g.output == "jsonl" || rawJSON(a.args)
}

// rawJSON reports whether args ask for JSON output (--json, -o json|jsonl,
// --output json|jsonl), read before cobra parses them: an unknown command
// or flag stops parsing before -o is seen.
func rawJSON(args []string) bool {
	asJSON := false
	for i := 0; i < len(args); i++ {
		name, val, hasVal := strings.Cut(args[i], "=")
		switch {
		case name == "--":
			return asJSON
		case name == "--json":
			asJSON = !hasVal || val == "true"
		case name == "-o" || name == "--output":
			if !hasVal && i+1 < len(args) {
				i++
				val = args[i]
			}
			asJSON = val == "json" || val == "jsonl"
		case strings.HasPrefix(name, "-o") && !strings.HasPrefix(name, "--"): // -ojson
			asJSON = args[i][2:] == "json" || args[i][2:] == "jsonl"
		}
	}
	return asJSON
}

// action wraps a command's body: once it runs, its errors are no longer
// usage errors but go through the code table.
func (a *app) action(fn func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		a.ran = true
		return fn(cmd, args)
	}
}

// dbPath resolves the file: --db, then FLOW_DB, then a walk up from the
// working directory.
func (a *app) dbPath() (string, error) {
	if a.g.db != "" {
		if store.DriverName(a.g.db) != store.PathDriver {
			return a.g.db, nil // a URL: another backend's (flow.Open finds its driver)
		}
		return a.abs(a.g.db), nil
	}
	p, err := flow.Locate(a.dir)
	return p, withHint(err, "run 'flowctl init' to create one here, or pass --db")
}

func (a *app) abs(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(a.dir, p)
}

// open opens the engine for reading or writing.
func (a *app) open(readOnly bool) (*flow.Engine, error) {
	path, err := a.dbPath()
	if err != nil {
		return nil, err
	}
	opts, err := a.openOptions(readOnly)
	if err != nil {
		return nil, err
	}
	eng, err := flow.Open(path, opts)
	if errors.Is(err, store.ErrNotExist) {
		err = withHint(err, "run 'flowctl init' to create it")
	}
	return eng, err
}

// openOptions are the engine's options for this invocation.
func (a *app) openOptions(readOnly bool) (flow.Options, error) {
	opts := flow.Options{ReadOnly: readOnly, LockTimeout: a.g.lockTimeout, Session: a.g.session, Warn: a.warn}
	opts.Progress = a.engineProgress()
	if v := a.getenv("FLOW_SNAPSHOT_EVERY"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return opts, usageError{fmt.Errorf("FLOW_SNAPSHOT_EVERY=%q is not a number of events (0: the default, negative: none)", v)}
		}
		opts.SnapshotEvery = n
	}
	if !readOnly {
		opts.Actor = a.actor()
		var err error
		if opts.Hooks, err = a.hooks(); err != nil {
			return opts, err
		}
	}
	return opts, nil
}

// warn prints a warning on stderr, unless -q.
func (a *app) warn(msg string) {
	if !a.g.quiet {
		a.clearProgress()
		fmt.Fprintf(a.stderr, "flowctl: warning: %s\n", msg)
	}
}

// actor resolves who is acting: --actor, FLOW_ACTOR, git user.name, $USER.
func (a *app) actor() string {
	if a.g.actor != "" {
		return a.g.actor
	}
	if name := gitUserName(a.dir); name != "" {
		return name
	}
	if u := a.getenv("USER"); u != "" {
		return u
	}
	return "unknown"
}

// closeEngine closes eng and keeps the first error.
func closeEngine(eng *flow.Engine, err *error) {
	if cerr := eng.Close(); *err == nil {
		*err = cerr
	}
}
