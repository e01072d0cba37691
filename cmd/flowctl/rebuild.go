package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

func (a *app) rebuildCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "rebuild",
		Short: "Rebuild every projection from the log",
		Long: "rebuild drops the projections (tasks, plans, approvals, exec records, ...) and folds the whole\n" +
			"log into new ones, in one transaction. The log itself is not touched. flowctl also does this by\n" +
			"itself when a newer binary changes how events are folded.",
		Example: "  flowctl rebuild",
		Args:    cobra.NoArgs,
		RunE: a.action(func(*cobra.Command, []string) (err error) {
			defer a.holdOutput(&err)()
			eng, err := a.open(false)
			if err != nil {
				return err
			}
			defer closeEngine(eng, &err)
			rep, err := eng.Rebuild()
			if err != nil {
				return err
			}
			return a.printer().one(rep, func(w io.Writer) {
				fmt.Fprintf(w, "rebuilt the projections from %s", plural(rep.Events, "event"))
				if rep.Skipped > 0 {
					fmt.Fprintf(w, " (%d of types this binary does not know were kept and skipped)", rep.Skipped)
				}
				fmt.Fprintln(w)
			})
		}),
	}
}
