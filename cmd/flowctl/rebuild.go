package main

import (
	"fmt"
	"io"

	"github.com/flowctl/flowctl/flow"

	"github.com/spf13/cobra"
)

func (a *app) rebuildCommand() *cobra.Command {
	var into, project string
	cmd := &cobra.Command{
		Use:   "rebuild [--project P] [--into NEW]",
		Short: "Rebuild every projection from the log",
		Long: "rebuild drops the projections (tasks, plans, approvals, exec records, ...) and folds the whole\n" +
			"log into new ones, in one transaction. The log itself is not touched. flowctl also does this by\n" +
			"itself when a newer binary changes how events are folded. With --into NEW it writes a new file\n" +
			"instead, from every event that still verifies: 'flowctl recover --into NEW', for a damaged file.\n" +
			"With --project P it rebuilds that project's projections alone, from its events (FLOW_PROJECT\n" +
			"does not apply: a plain rebuild is always of the whole file).",
		Example: "  flowctl rebuild\n  flowctl rebuild --project web\n  flowctl rebuild --into .flow/recovered.db",
		Args:    cobra.NoArgs,
		RunE: a.action(func(*cobra.Command, []string) (err error) {
			if into != "" {
				return a.runRecover(into)
			}
			defer a.holdOutput(&err)()
			eng, err := a.open(false)
			if err != nil {
				return err
			}
			defer closeEngine(eng, &err)
			var rep flow.RebuildReport
			if project != "" {
				rep, err = eng.RebuildProject(project)
			} else {
				rep, err = eng.Rebuild()
			}
			if err != nil {
				return err
			}
			return a.printer().one(rep, func(w io.Writer) {
				if project != "" {
					fmt.Fprintf(w, "rebuilt the projections of %s from %s", project, plural(rep.Events, "event"))
				} else {
					fmt.Fprintf(w, "rebuilt the projections from %s", plural(rep.Events, "event"))
				}
				if rep.Skipped > 0 {
					fmt.Fprintf(w, " (%d of types this binary does not know were kept and skipped)", rep.Skipped)
				}
				fmt.Fprintln(w)
			})
		}),
	}
	cmd.Flags().StringVar(&project, "project", "", "rebuild this project's projections alone")
	cmd.Flags().StringVar(&into, "into", "", "write a new file from every event that still verifies, as 'recover --into' does")
	return cmd
}
