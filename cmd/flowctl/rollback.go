package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/flowctl/flowctl/flow"
	"github.com/spf13/cobra"
)

type rollbackOptions struct {
	to, task, reason string
	dryRun           bool
	limit            int
	wo               writeOpts
}

func (a *app) rollbackCommand() *cobra.Command {
	var o rollbackOptions
	cmd := &cobra.Command{
		Use:   "rollback --to C-n|SEQ|TIME [--task T] [--dry-run] [--reason R]",
		Short: "Restore the project (or one task) as it was at a point, keeping the history",
		Long: "rollback computes the state at the point, prints what changes from now to it, one line per\n" +
			"entity ('~' changed back, '-' removed: created after the point, '+' back), and appends one\n" +
			"rollback.applied event that carries the restored states, then a rollback.marked event on the\n" +
			"stream of each plan and task it changes, so that their versions move on (a writer holding an\n" +
			"older --if-version is refused). Nothing is deleted: 'log' still shows\n" +
			"everything, and a rollback can itself be rolled back (--to the seq just before it).\n" +
			"Lines marked '!' are things that happened in the world (a command that ran, an approval that\n" +
			"was granted): flowctl forgets them, but cannot undo them. --dry-run prints the same and appends\n" +
			"nothing. With --task only that task, its approvals and its exec records go back; the task must\n" +
			"have existed at the point. A point before the project's (or the task's) first event is refused.\n" +
			"--limit N lists only the first N changes (and counts them all); the rollback restores everything.\n" +
			"A point is " + pointHelp + ".",
		Example: "  flowctl rollback --to C-2 --dry-run\n  flowctl rollback --to C-2 --reason 'wrong approach'\n" +
			"  flowctl rollback --to 41 --task T-3\n  flowctl rollback --to 57   # undo the rollback at seq 58",
		Args: cobra.NoArgs,
	}
	fs := cmd.Flags()
	fs.StringVar(&o.to, "to", "", "the point to go back to (required): "+pointHelp)
	fs.StringVar(&o.task, "task", "", "roll back only this task (its fields, steps, context, approvals, exec records)")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print what would change and append nothing")
	fs.StringVar(&o.reason, "reason", "", "why (recorded)")
	fs.IntVar(&o.limit, "limit", 0, "list only the first N changes (0: all)")
	o.wo.addFlags(cmd)
	cmd.RunE = a.action(func(c *cobra.Command, _ []string) error {
		if !c.Flags().Changed("to") {
			return usageError{errors.New("--to is required: give a checkpoint (C-1), a seq (42) or an RFC 3339 time")}
		}
		if o.dryRun {
			if err := refuseGiven(c, "--dry-run appends nothing", "if-version", "actor", "session"); err != nil {
				return err
			}
		}
		in, err := o.input()
		if err != nil {
			return err
		}
		return a.withEngine(o.dryRun, func(s *session) error {
			in.Project = s.project
			if err := s.eng.CheckRollbackTask(s.project, in.Task, in.To); err != nil {
				return err
			}
			res, err := s.eng.Rollback(in)
			if err != nil {
				return err
			}
			return a.printer().one(res, func(w io.Writer) { writeRollback(w, res, o.dryRun) })
		})
	})
	return cmd
}

// input checks the flags and turns them into the engine's input.
func (o *rollbackOptions) input() (flow.RollbackInput, error) {
	in := flow.RollbackInput{Reason: o.reason, DryRun: o.dryRun, Limit: o.limit, Write: o.wo.write()}
	if err := checkLimit(o.limit); err != nil {
		return in, err
	}
	var err error
	if in.To, err = parsePoint("--to", o.to); err != nil {
		return in, err
	}
	if o.task != "" {
		if in.Task, err = flow.ParseTaskID(o.task); err != nil {
			return in, err
		}
	}
	return in, nil
}

// writeRollback prints the changes, then what was done.
func writeRollback(w io.Writer, r *flow.RollbackResult, dryRun bool) {
	writeChanges(w, r.Changes)
	if r.Truncated {
		fmt.Fprintf(w, "(%s)\n", changeCount(len(r.Changes), r.Total))
	}
	what := "project " + printable(r.Project)
	if r.Task != "" {
		what = "task " + r.Task
	}
	switch {
	case r.Applied:
		fmt.Fprintf(w, "rolled back %s to seq %d (event seq %d)\n", what, r.ToSeq, r.Seq)
	case dryRun && len(r.Changes) > 0:
		fmt.Fprintf(w, "dry run: would roll back %s to seq %d; nothing appended\n", what, r.ToSeq)
	case dryRun:
		fmt.Fprintf(w, "dry run: nothing to roll back (%s is as it was at seq %d); nothing appended\n", what, r.ToSeq)
	default:
		fmt.Fprintf(w, "nothing to roll back: %s is as it was at seq %d\n", what, r.ToSeq)
	}
}
