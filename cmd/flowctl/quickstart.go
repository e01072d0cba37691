package main

import (
	"context"
	"fmt"
	"strings"

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

// quickstartSteps are the commands the quickstart runs, in order.
var quickstartSteps = [][]string{
	{"init", "--project", quickstartProject},
	{"log", "--project", quickstartProject},
	{"verify"},
}

// quickstartFlags are the global flags that, given to quickstart, are
// passed on to every step.
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
	for i, step := range quickstartSteps {
		if i > 0 {
			fmt.Fprintln(a.stdout)
		}
		args := append(append([]string{}, step...), global...)
		fmt.Fprintf(a.stdout, "$ flowctl %s\n", strings.Join(args, " "))
		if code := run(ctx, args, a.env); code != 0 {
			// The step has printed its error; keep its exit code.
			return exitStatus{fmt.Errorf("quickstart stopped: 'flowctl %s' exited %d", strings.Join(args, " "), code), code}
		}
	}
	return nil
}
