package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/spf13/cobra"
)

func (a *app) compactCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "compact",
		Short: "Rewrite the file without its free pages, to give their space back",
		Long: "compact copies every event, projection and snapshot into a new file beside the old one,\n" +
			"without the pages the file no longer uses (a file never shrinks by itself: rebuilds and replaced\n" +
			"snapshots leave free pages, and every write also writes their list). The new file is verified\n" +
			"before it replaces the old one; on any failure the old file is left as it was. Writers wait\n" +
			"until it is done (--lock-timeout to get the lock first). It needs free disk space for the copy.",
		Example: "  flowctl compact\n  flowctl compact -o json",
		Args:    cobra.NoArgs,
		RunE: a.action(func(*cobra.Command, []string) (err error) {
			defer a.holdOutput(&err)()
			path, err := a.dbPath()
			if err != nil {
				return err
			}
			rep, err := flow.Compact(path, flow.Options{LockTimeout: a.g.lockTimeout, Progress: a.progressFunc("compacting: verifying the copy", "records")})
			if errors.Is(err, store.ErrNotExist) {
				err = withHint(err, "run 'flowctl init' to create it")
			}
			if err != nil {
				return err
			}
			return a.printer().one(rep, func(w io.Writer) {
				fmt.Fprintf(w, "compacted %s: %s -> %s (%s), head seq %d verified\n", rep.Path,
					byteSize(rep.BeforeBytes), byteSize(rep.AfterBytes), saved(rep.BeforeBytes, rep.AfterBytes), rep.HeadSeq)
			})
		}),
	}
}

// byteSize writes n bytes for people: 512 B, 84.0 kB, 865.2 MB.
func byteSize(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n)/unit, 0
	for ; v >= unit && i < 3; i++ {
		v /= unit
	}
	return fmt.Sprintf("%.1f %cB", v, "kMGT"[i])
}

// saved says how much smaller after is than before.
func saved(before, after int64) string {
	if before <= 0 || after >= before {
		return "nothing saved"
	}
	return fmt.Sprintf("%.0f%% smaller", 100*float64(before-after)/float64(before))
}
