package main

import (
	"io"

	"github.com/flowctl/flowctl/digest"
	"github.com/flowctl/flowctl/flow"
	"github.com/spf13/cobra"
)

func (a *app) reportCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "report [T]",
		Short: "Print a markdown report of a task, or of the whole project",
		Long: "report prints a markdown document. With a task id: the task's fields, steps, context, approvals,\n" +
			"exec records (with the head of their output), notes and the timeline of its events. Without\n" +
			"one: the project's status, tasks, plans, approvals, recent exec records and its last events.\n" +
			"FLOW_TASK_ID is not used: without an argument the report is always the project's.\n" +
			"-o json prints {\"markdown\": ..., ...} with the parts the document was made from.",
		Example: "  flowctl report T-3 > T-3.md\n  flowctl report\n  flowctl report T-3 -o json | jq -r .markdown",
		Args:    cobra.MaximumNArgs(1),
		RunE: a.action(func(_ *cobra.Command, args []string) error {
			id := ""
			if len(args) == 1 {
				var err error
				if id, err = flow.ParseTaskID(args[0]); err != nil {
					return err
				}
			}
			return a.withEngine(true, func(s *session) error { return a.printReport(s, id) })
		}),
	}
}

// printReport prints the report of task id, or of the project when id is "".
func (a *app) printReport(s *session, id string) error {
	var v any
	var md string
	if id == "" {
		r, err := digest.ReportProjectFor(s.eng, s.project, a.actor())
		if err != nil {
			return err
		}
		v, md = r, r.Markdown
	} else {
		r, err := digest.ReportTask(s.eng, s.project, id)
		if err != nil {
			return err
		}
		v, md = r, r.Markdown
	}
	return a.printer().one(v, func(w io.Writer) { io.WriteString(w, md) })
}
