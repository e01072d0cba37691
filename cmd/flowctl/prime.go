package main

import (
	"io"

	"github.com/flowctl/flowctl/digest"
	"github.com/spf13/cobra"
)

func (a *app) primeCommand() *cobra.Command {
	var budget int
	cmd := &cobra.Command{
		Use:   "prime [--budget TOKENS]",
		Short: "Print a markdown digest of the work for an assistant's first prompt",
		Long: "prime prints what an assistant needs at the start of a session, in markdown: the project, the task\n" +
			"you hold (a live claim by --actor: its steps, context and last exec results), pending approvals,\n" +
			"ready tasks, open plans, the last checkpoint, notes of kind memory, the last events one by one\n" +
			"(short-term memory) and every older event folded into one line per task (long-term memory).\n" +
			"It fits --budget tokens (4 characters each) by leaving out the least important items first,\n" +
			"and its last line says what it left out. -o json prints {\"markdown\": ..., \"left_out\": [...], ...}.",
		Example: "  flowctl prime\n  flowctl prime --budget 500\n  flowctl prime -o json | jq .left_out",
		Args:    cobra.NoArgs,
		RunE: a.action(func(*cobra.Command, []string) error {
			return a.withEngine(true, func(s *session) error { return a.printPrime(s, budget) })
		}),
	}
	cmd.Flags().IntVar(&budget, "budget", digest.DefaultPrimeBudget, "the most tokens (4 characters each) the digest may take; 0: the default")
	return cmd
}

func (a *app) printPrime(s *session, budget int) error {
	p, err := digest.Prime(s.eng, digest.PrimeInput{Project: s.project, Actor: a.actor(), Session: a.g.session, Budget: budget})
	if err != nil {
		return err
	}
	return a.printer().one(p, func(w io.Writer) { io.WriteString(w, p.Markdown) })
}
