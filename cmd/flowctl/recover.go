package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/flowctl/flowctl/flow"
	"github.com/spf13/cobra"
)

func (a *app) recoverCommand() *cobra.Command {
	var into string
	cmd := &cobra.Command{
		Use:   "recover --into NEW",
		Short: "Copy every event that still verifies out of a damaged file into a new one",
		Long: "recover reads the file (--db) however damaged it is, skipping pages that fail and searching the\n" +
			"file's pages for records its page tree cannot give, and writes a new file NEW from the events\n" +
			"that still verify: seqs 1 to the first one missing or failing its CRC, hash or chain, byte for\n" +
			"byte with their hashes. Its projections are rebuilt; snapshots are not copied. Events after a\n" +
			"gap cannot keep their hashes: they are lost, and recover says which seqs and how many of them\n" +
			"still verify on their own. NEW is verified before recover ends. The damaged file is only read:\n" +
			"check NEW, then move it in its place.",
		Example: "  flowctl recover --into .flow/recovered.db\n  flowctl recover --db broken.db --into fixed.db -o json",
		Args:    cobra.NoArgs,
	}
	cmd.Flags().StringVar(&into, "into", "", "the new file to write (must not exist)")
	cmd.RunE = a.action(func(*cobra.Command, []string) error { return a.runRecover(into) })
	return cmd
}

func (a *app) runRecover(into string) (err error) {
	if into == "" {
		return usageError{errors.New("give --into NEW: recover writes a new file and leaves the damaged one as it is")}
	}
	defer a.holdOutput(&err)()
	path, err := a.dbPath()
	if err != nil {
		return err
	}
	rep, err := flow.Recover(path, a.abs(into), flow.Options{LockTimeout: a.g.lockTimeout, Actor: a.actor(), Warn: a.warn})
	if err != nil {
		return err
	}
	return a.printer().one(rep, func(w io.Writer) { printRecovered(w, rep) })
}

func printRecovered(w io.Writer, rep flow.RecoverReport) {
	total := rep.Kept + rep.Lost
	fmt.Fprintf(w, "recovered %d of %s into %s: head %s@%d, verified\n", rep.Kept, plural(total, "event"), rep.Into, rep.HeadHash, rep.Kept)
	if rep.Lost > 0 {
		fmt.Fprintf(w, "lost seqs %d-%d (%s): %s\n", rep.LostFrom, rep.LostTo, plural(rep.Lost, "event"), rep.Reason)
	}
	if rep.Stranded > 0 {
		fmt.Fprintf(w, "%d of the lost events still verify on their own, but a gap precedes them: they cannot keep their hashes\n", rep.Stranded)
	}
	if rep.PastHead > 0 {
		fmt.Fprintf(w, "%d found after the file's head continue its chain (a commit whose meta page was lost, or one that never completed): not copied\n", rep.PastHead)
	}
	if len(rep.Damage) > 0 {
		fmt.Fprintf(w, "damage found: %s\n", strings.Join(rep.Damage, "; "))
	}
	fmt.Fprintf(w, "check it with 'flowctl verify --db %s', then move it in place of %s\n", rep.Into, rep.From)
}
