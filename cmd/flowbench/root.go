package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

// env is what a run of flowbench talks to: data goes to stdout,
// diagnostics to stderr, and progress only when stderr is a terminal.
type env struct {
	stdout, stderr io.Writer
	tty            bool
}

// Exit codes.
const (
	exitOK     = 0
	exitFailed = 1 // an error, or a row that missed its target under --check
	exitUsage  = 2
)

// usageError is a bad command line.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// errMissed is returned by `run --check` when a row missed its target.
var errMissed = errors.New("flowbench: some rows missed their targets")

// run builds the command tree, runs args and returns the exit code.
func run(ctx context.Context, args []string, env env) int {
	root := newRootCommand(env)
	root.SetArgs(append([]string{}, args...)) // never nil: cobra would read os.Args
	root.SetOut(env.stdout)
	root.SetErr(env.stderr)
	err := root.ExecuteContext(ctx)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errMissed):
		fmt.Fprintln(env.stderr, err)
		return exitFailed
	case errors.As(err, new(usageError)):
		fmt.Fprintf(env.stderr, "flowbench: %v\nRun 'flowbench --help' for usage.\n", err)
		return exitUsage
	}
	fmt.Fprintf(env.stderr, "flowbench: %v\n", err)
	return exitFailed
}

func newRootCommand(env env) *cobra.Command {
	root := &cobra.Command{
		Use:   "flowbench",
		Short: "Benchmarks of flowctl against baselines measured in the same run",
		Long: "flowbench writes realistic flowctl files (gen) and measures the engine, the CLI and\n" +
			"SQLite against the targets of DESIGN.md §11, every figure as a ratio to a baseline\n" +
			"measured in the same run on the same disk (run).",
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	profile := root.PersistentFlags().String("cpuprofile", "", "write a CPU profile of the command to this file")
	var stopProfile func() error
	root.PersistentPreRunE = func(*cobra.Command, []string) (err error) {
		stopProfile, err = startProfile(*profile)
		return err
	}
	root.PersistentPostRunE = func(*cobra.Command, []string) error { return stopProfile() }
	root.AddCommand(genCommand(env), runCommand(env))
	refuseUnknown(root)
	return root
}

// startProfile starts a CPU profile into path, when given, and returns
// the function that ends it.
func startProfile(path string) (func() error, error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() error { pprof.StopCPUProfile(); return f.Close() }, nil
}

// refuseUnknown makes a stray argument a usage error (exit 2) everywhere:
// cobra would print the root's help and exit 0.
func refuseUnknown(root *cobra.Command) {
	root.Args = func(_ *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usageError{fmt.Errorf("unknown command %q", args[0])}
		}
		return nil
	}
	root.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
	for _, c := range root.Commands() {
		wrapArgs(c)
	}
}

// wrapArgs turns c's argument errors into usage errors.
func wrapArgs(c *cobra.Command) {
	check := c.Args
	if check == nil {
		return
	}
	c.Args = func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}
