package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

func (a *app) exportCommand() *cobra.Command {
	var since uint64
	cmd := &cobra.Command{
		Use:   "export [--since SEQ]",
		Short: "Write events as JSON lines, every envelope field",
		Long: "export writes one JSON object per event to stdout, oldest first: every envelope field, the\n" +
			"payload as JSON in \"data\" and its exact stored bytes in \"raw\" (base64), so that import\n" +
			"reproduces it byte for byte.",
		Example: "  flowctl export > events.jsonl\n  flowctl export --since 1200 > delta.jsonl",
		Args:    cobra.NoArgs,
	}
	cmd.Flags().Uint64Var(&since, "since", 0, "only events from this seq on")
	cmd.RunE = a.action(func(*cobra.Command, []string) error { return a.runExport(since) })
	return cmd
}

func (a *app) runExport(since uint64) (err error) {
	eng, err := a.open(true)
	if err != nil {
		return err
	}
	defer closeEngine(eng, &err)
	_, err = eng.Export(a.stdout, since)
	return err
}

func (a *app) importCommand() *cobra.Command {
	var from string
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Append the events of an export (all or nothing, idempotent)",
		Long: "import reads events as written by export (FILE, or - for stdin) and appends them in one\n" +
			"transaction: all of them or none. Events already present (same id and content) are skipped,\n" +
			"so importing a file twice changes nothing. Each event must continue its stream.",
		Example: "  flowctl import events.jsonl\n  flowctl export --db a.db | flowctl import --db b.db -",
		Args:    cobra.ExactArgs(1),
	}
	cmd.Flags().StringVar(&from, "from", "events", "input format: events (the JSONL of export)")
	cmd.RunE = a.action(func(_ *cobra.Command, args []string) error { return a.runImport(args[0], from) })
	return cmd
}

func (a *app) runImport(file, from string) (err error) {
	if from != "events" {
		return usageError{fmt.Errorf("--from %q: this version imports only 'events'", from)}
	}
	in := a.stdin
	if file != "-" {
		f, err := os.Open(a.abs(file))
		if err != nil {
			return withHint(err, "give the path of a file written by 'flowctl export', or - for stdin")
		}
		defer f.Close()
		in = f
	}
	eng, err := a.open(false)
	if err != nil {
		return err
	}
	defer closeEngine(eng, &err)
	res, err := eng.Import(in)
	if err != nil {
		return err
	}
	return a.printer().one(res, func(w io.Writer) {
		fmt.Fprintf(w, "read %d events: %d appended, %d already present\n", res.Read, res.Appended, res.Skipped)
	})
}
