package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
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
			return a.runQuickstart(cmd.Context())
		}),
	}
}

// quickstartSteps are the commands the quickstart runs, in order.
var quickstartSteps = [][]string{
	{"init", "--project", quickstartProject},
	{"log", "--project", quickstartProject},
	{"verify"},
}

func (a *app) runQuickstart(ctx context.Context) error {
	var db []string
	if a.g.db != "" {
		db = []string{"--db", a.g.db}
	}
	for i, step := range quickstartSteps {
		if i > 0 {
			fmt.Fprintln(a.stdout)
		}
		args := append(append([]string{}, step...), db...)
		fmt.Fprintf(a.stdout, "$ flowctl %s\n", strings.Join(args, " "))
		if code := run(ctx, args, a.env); code != 0 {
			return fmt.Errorf("quickstart stopped: 'flowctl %s' exited %d", strings.Join(args, " "), code)
		}
	}
	return nil
}
