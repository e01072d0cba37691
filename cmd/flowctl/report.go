package main

import (
	"errors"
	"io"

	"github.com/flowctl/flowctl/digest"
	"github.com/flowctl/flowctl/flow"
	"github.com/spf13/cobra"
)

func (a *app) reportCommand() *cobra.Command {
	var sessionName string
	cmd := &cobra.Command{
		Use:   "report [T] [--session S]",
		Short: "Print a markdown report of a task, or of the whole project",
		Long: "report prints a markdown document. With a task id: the task's fields, steps, context, approvals,\n" +
			"exec records (with the head of their output), notes and the timeline of its events. Without\n" +
			"one: the project's status, tasks, plans, approvals, recent exec records and its last events.\n" +
			"FLOW_TASK_ID is not used: without an argument the report is always the project's.\n" +
			"With --session S: what that session did (its events, in every project unless --project names\n" +
			"one): actors, time spent (its last event's time less its first's), the tasks it touched\n" +
			"with their status now, and its steps, approvals, exec records and checkpoints; a session\n" +
			"without an event is not found (exit 3).\n" +
			"-o json prints {\"markdown\": ..., ...} with the parts the document was made from.",
		Example: "  flowctl report T-3 > T-3.md\n  flowctl report\n  flowctl report T-3 -o json | jq -r .markdown\n  flowctl report --session s-42",
		Args:    cobra.MaximumNArgs(1),
	}
	cmd.Flags().StringVar(&sessionName, "session", "", "report what this session did instead")
	cmd.RunE = a.action(func(_ *cobra.Command, args []string) error {
		if sessionName != "" {
			if len(args) > 0 {
				return usageError{errors.New("give a task or --session, not both")}
			}
			return a.printSessionReport(sessionName)
		}
		id := ""
		if len(args) == 1 {
			var err error
			if id, err = flow.ParseTaskID(args[0]); err != nil {
				return err
			}
		}
		return a.withEngine(true, func(s *session) error { return a.printReport(s, id) })
	})
	return cmd
}

// printSessionReport prints what session did, in --project's project (or
// FLOW_PROJECT's) or in every project.
func (a *app) printSessionReport(session string) (err error) {
	defer a.holdOutput(&err)()
	eng, err := a.open(true)
	if err != nil {
		return err
	}
	defer closeEngine(eng, &err)
	project := ""
	if a.g.project != "" {
		if project, err = eng.ResolveProject(a.g.project); err != nil {
			return err
		}
	}
	r, err := digest.ReportSession(eng, project, session)
	if err != nil {
		return err
	}
	return a.printer().one(r, func(w io.Writer) { io.WriteString(w, r.Markdown) })
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
