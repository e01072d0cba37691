package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
	"github.com/spf13/cobra"
)

func (a *app) checkpointCommand() *cobra.Command {
	var in flow.NewCheckpoint
	var wo writeOpts
	cmd := &cobra.Command{
		Use:   "checkpoint [--label L] [--task T]",
		Short: "Record a named point (C-n) with a snapshot of the project; 'checkpoint ls' lists them",
		Long: "checkpoint records a named point in the project's history: everything up to the current head,\n" +
			"with a label, a task it is about, and the git HEAD when the working directory is in a git work\n" +
			"tree. It also stores a snapshot of the project's state there, so that reading it back (--at C-n,\n" +
			"diff, rollback --to C-n) is cheap. It prints the checkpoint.",
		Example: "  flowctl checkpoint --label 'parser works'\n  flowctl checkpoint --task T-3 -o json | jq .at_seq\n  flowctl checkpoint ls",
		Args:    cobra.NoArgs,
	}
	cmd.Flags().StringVar(&in.Label, "label", "", "a name for the point")
	cmd.Flags().StringVar(&in.Task, "task", "", "the task the point is about")
	wo.addFlags(cmd)
	cmd.RunE = a.action(func(*cobra.Command, []string) error {
		if in.Task != "" {
			id, err := flow.ParseTaskID(in.Task)
			if err != nil {
				return err
			}
			in.Task = id
		}
		in.GitHead = gitHead(a.dir)
		return a.withEngine(false, func(s *session) error {
			in.Project, in.Write = s.project, wo.write()
			c, err := s.eng.CreateCheckpoint(in)
			if err != nil {
				return err
			}
			return a.printer().one(c, func(w io.Writer) { writeCheckpoint(w, c) })
		})
	})
	cmd.AddCommand(a.checkpointLsCommand())
	return cmd
}

// writeCheckpoint prints a new checkpoint as one line:
// Created checkpoint C-1 at seq 12 ("parser works", task T-3, git 1a2b3c4d5e6f).
func writeCheckpoint(w io.Writer, c *projection.Checkpoint) {
	var about []string
	if c.Label != "" {
		about = append(about, fmt.Sprintf("%q", c.Label))
	}
	if c.Task != "" {
		about = append(about, "task "+c.Task)
	}
	if c.GitHead != "" {
		about = append(about, "git "+shortHash(c.GitHead))
	}
	extra := ""
	if len(about) > 0 {
		extra = " (" + strings.Join(about, ", ") + ")"
	}
	fmt.Fprintf(w, "Created checkpoint %s at seq %d%s\n", c.ID, c.AtSeq, printable(extra))
}

func (a *app) checkpointLsCommand() *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:     "ls",
		Short:   "List the project's checkpoints",
		Example: "  flowctl checkpoint ls\n  flowctl checkpoint ls -o json",
		Args:    cobra.NoArgs,
		RunE: a.action(func(*cobra.Command, []string) error {
			if err := checkLimit(limit); err != nil {
				return err
			}
			return a.withEngine(true, func(s *session) error {
				cs, err := s.eng.Checkpoints(s.project)
				if err != nil {
					return err
				}
				pg := a.page(limit, "checkpoints", "ID\tAT SEQ\tLABEL\tTASK\tGIT\tTIME")
				for _, c := range cs {
					err := pg.add(c, func() []string {
						return []string{c.ID, fmt.Sprint(c.AtSeq), orDash(c.Label), orDash(c.Task), orDash(shortHash(c.GitHead)), fmtTime(c.CreatedAt)}
					})
					if errors.Is(err, flow.ErrStop) {
						break // the page is full
					}
					if err != nil {
						return err
					}
				}
				return pg.end()
			})
		}),
	}
	limitFlag(cmd, &limit, "checkpoints")
	return cmd
}

// shortHash cuts a git commit hash to 12 characters, as people read it.
func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
