package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

func (a *app) rebuildCommand() *cobra.Command {
	var into string
	cmd := &cobra.Command{
		Use:   "rebuild [--into NEW]",
		Short: "Rebuild every projection from the log",
		Long: "rebuild drops the projections (tasks, plans, approvals, exec records, ...) and folds the whole\n" +
			"log into new ones, in one transaction. The log itself is not touched. flowctl also does this by\n" +
			"itself when a newer binary changes how events are folded. With --into NEW it writes a new file\n" +
			"instead, from every event that still verifies: 'flowctl recover --into NEW', for a damaged file.",
		Example: "  flowctl rebuild\n  flowctl rebuild --into .flow/recovered.db",
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
	cmd.Flags().StringVar(&into, "into", "", "write a new file from every event that still verifies, as 'recover --into' does")
	return cmd
}
