package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/pgstore"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// quickstartProject is the project the quickstart works in.
const quickstartProject = "quickstart"

func (a *app) quickstartCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "quickstart",
		Short: "Run a short real session, printing each command so you can repeat it",
		Long: "quickstart creates .flow/flow.db in the working directory if it is missing and runs a short\n" +
			"session through the real commands, printing each one before its output.",
		Example: "  go run ./cmd/flowctl quickstart",
		Args:    cobra.NoArgs,
		RunE: a.action(func(cmd *cobra.Command, _ []string) error {
			return a.runQuickstart(cmd.Context(), cmd.Flags())
		}),
	}
}

// step is one line of the quickstart: a flowctl command, or an exported
// environment variable that the following commands see.
type step struct {
	args []string // flowctl arguments
	env  [2]string
}

func cmd(args ...string) step        { return step{args: args} }
func export(name, value string) step { return step{env: [2]string{name, value}} }

// quickstartSession is the short real session the quickstart runs on a
// new quickstart project.
var quickstartSession = []step{
	export("FLOW_PROJECT", quickstartProject),
	cmd("task", "add", "write the parser", "--tag", "backend"),
	cmd("task", "add", "test the parser", "--dep", "T-1"),
	cmd("ready", "--explain"),
	export("FLOW_TASK_ID", "T-1"),
	cmd("task", "start"),
	cmd("ctx", "merge", `{"branch":"parser","files":["parse.go"]}`),
	cmd("step", "add", "sketch the grammar"),
	cmd("step", "start", "T-1.1"),
	cmd("step", "done", "T-1.1", "--result", "grammar in parse.go"),
	cmd("approval", "request", "--message", "merge the parser branch?", "--action", `{"merge":"parser"}`),
	cmd("approval", "grant", "A-1", "--comment", "looks good", "--actor", "ana"), // not the one who asked
	cmd("exec", "record", `{"command":"go test ./parser","exit_code":0,"elapsed_ms":812,"stdout":"ok  parser  0.8s"}`),
	cmd("task", "done"),
	cmd("checkpoint", "--label", "parser done"),
	cmd("task", "start", "T-2"),
	cmd("rollback", "--to", "C-1", "--reason", "show how to go back"),
	cmd("ready"),
	cmd("log", "--limit", "4"),
	cmd("verify"),
}

// quickstartAgain is what the quickstart shows when its project already
// has tasks: where the work stands.
var quickstartAgain = []step{
	export("FLOW_PROJECT", quickstartProject),
	cmd("status"),
	cmd("log", "--limit", "4"),
	cmd("verify"),
}

// quickstartFlags are the global flags that, given to quickstart, are
// passed on to every step whose command honours them (globalUses).
var quickstartFlags = []string{"actor", "session", "lock-timeout"}

func (a *app) runQuickstart(ctx context.Context, fs *pflag.FlagSet) error {
	var global []string
	if a.g.db != "" {
		global = []string{"--db", a.g.db}
	}
	for _, name := range quickstartFlags {
		if f := fs.Lookup(name); f != nil && f.Changed {
			global = append(global, "--"+name, f.Value.String())
		}
	}
	q := &quickstart{a: a, ctx: ctx, global: global, env: map[string]string{}}
	if err := q.run(cmd("init", "--project", quickstartProject)); err != nil {
		return err
	}
	steps := quickstartSession
	if started, err := a.quickstartStarted(); err != nil {
		return err
	} else if started {
		fmt.Fprintf(a.stdout, "\n# The %s project already has tasks; here is where it stands.\n", quickstartProject)
		steps = quickstartAgain
	}
	for _, s := range steps {
		if err := q.run(s); err != nil {
			return err
		}
	}
	return nil
}

// quickstartStarted reports whether the quickstart project has tasks.
func (a *app) quickstartStarted() (started bool, err error) {
	eng, err := a.open(true)
	if err != nil {
		return false, err
	}
	defer closeEngine(eng, &err)
	p, err := eng.Project(quickstartProject)
	return err == nil && p.Counters.Tasks > 0, err
}

// quickstart runs steps in process, with the variables exported so far.
type quickstart struct {
	a      *app
	ctx    context.Context
	global []string
	env    map[string]string
	n      int // steps run so far
}

func (q *quickstart) run(s step) error {
	out := q.a.stdout
	if q.n++; q.n > 1 {
		fmt.Fprintln(out)
	}
	if s.args == nil {
		q.env[s.env[0]] = s.env[1]
		fmt.Fprintf(out, "$ export %s=%s\n", s.env[0], shellQuote(s.env[1]))
		return nil
	}
	args := append([]string{}, s.args...)
	for i := 0; i+1 < len(q.global); i += 2 { // pairs: --name value; a step's own flag wins
		if usesOf(s.args).honours(strings.TrimPrefix(q.global[i], "--")) && !slices.Contains(s.args, q.global[i]) {
			args = append(args, q.global[i], q.global[i+1])
		}
	}
	quoted := make([]string, len(args))
	for i, arg := range args {
		if i > 0 && args[i-1] == "--db" && store.DriverName(arg) != store.PathDriver {
			arg = pgstore.Redact(arg) // a database URL's password is never printed
		}
		quoted[i] = shellQuote(arg)
	}
	line := "flowctl " + strings.Join(quoted, " ")
	fmt.Fprintf(out, "$ %s\n", line)
	e := q.a.env
	e.getenv = func(k string) string {
		if v, ok := q.env[k]; ok {
			return v
		}
		return q.a.getenv(k)
	}
	if code := run(q.ctx, args, e); code != 0 {
		// The step has printed its error; keep its exit code.
		return exitStatus{fmt.Errorf("quickstart stopped: '%s' exited %d", line, code), code, true}
	}
	return nil
}

// shellQuote quotes arg for a POSIX shell when it needs it.
func shellQuote(arg string) string {
	if arg != "" && strings.Trim(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@,+") == "" {
		return arg
	}
	return "'" + strings.ReplaceAll(arg, "'", `'\''`) + "'"
}
