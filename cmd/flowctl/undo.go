package main

import (
	"fmt"
	"io"

	"github.com/flowctl/flowctl/flow"
	"github.com/spf13/cobra"
)

func (a *app) undoCommand() *cobra.Command {
	var in flow.UndoInput
	var wo writeOpts
	cmd := &cobra.Command{
		Use:   "undo [--dry-run] [--reason R]",
		Short: "Revert your last command in the project (all its events), keeping the history",
		Long: "undo finds your (the actor's) last command in the current project, every event it appended,\n" +
			"and puts the entities they changed back as they were before it, as rollback does: one\n" +
			"rollback.applied event (marked as an undo of those seqs) and a rollback.marked event on the\n" +
			"stream of each plan and task it changes. Nothing is deleted. Run again, it walks further back:\n" +
			"undo events and the commands already undone are skipped, so an undo of an undo is not a redo\n" +
			"(to redo, run the command again). If another command has changed the same entities since,\n" +
			"undo refuses (exit 4) and names them; so it does for the command that created the project.\n" +
			"Lines marked '!' are things that happened in the world (a command that ran, an approval that\n" +
			"was granted). --dry-run prints the same and appends nothing. Events written before flowctl\n" +
			"grouped a command's events (by correlation id) each count as a command.",
		Example: "  flowctl undo --dry-run\n  flowctl undo\n  flowctl undo -o json | jq .events",
		Args:    cobra.NoArgs,
	}
	cmd.Flags().BoolVar(&in.DryRun, "dry-run", false, "print what would be reverted and append nothing")
	cmd.Flags().StringVar(&in.Reason, "reason", "", "why (recorded)")
	wo.addFlags(cmd)
	cmd.RunE = a.action(func(*cobra.Command, []string) error {
		in.Write = wo.write()
		return a.withEngine(in.DryRun, func(s *session) error {
			in.Project = s.project
			eng := s.eng
			if in.DryRun { // read-only: the engine records no actor, but undo is the actor's
				eng = eng.As(a.actor(), a.g.session)
			}
			res, err := eng.Undo(in)
			if err != nil {
				return err
			}
			return a.printer().one(res, func(w io.Writer) { writeUndo(w, res) })
		})
	})
	return cmd
}

// writeUndo prints the command undone, the changes, then what was done.
func writeUndo(w io.Writer, r *flow.UndoResult) {
	for _, ev := range r.Events {
		fmt.Fprintf(w, "  seq %d  %s  %s\n", ev.Seq, ev.Type, printable(ev.Stream))
	}
	writeChanges(w, r.Changes)
	if r.Applied {
		fmt.Fprintf(w, "undid seqs %d-%d of %s (event seq %d)\n", r.First, r.Last, printable(r.Actor), r.Seq)
	} else {
		fmt.Fprintf(w, "dry run: would undo seqs %d-%d of %s; nothing appended\n", r.First, r.Last, printable(r.Actor))
	}
}
