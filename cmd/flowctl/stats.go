package main

import (
	"fmt"
	"io"
	"strconv"

	"github.com/flowctl/flowctl/digest"
	"github.com/spf13/cobra"
)

func (a *app) statsCommand() *cobra.Command {
	alpha := digest.DefaultAlpha
	cmd := &cobra.Command{
		Use:   "stats [--alpha A]",
		Short: "Exec record statistics: success rate and elapsed time per command, task and tool",
		Long: "stats summarises the project's exec records: success rate and elapsed_ms (count, mean, p50, max)\n" +
			"per command (program name plus its first argument unless that is a flag: 'go test'; code\n" +
			"records are 'code'), per task, and per tool (program name) with an exponentially weighted\n" +
			"success rate: it starts at 0.5 and each record, in seq order, moves it to\n" +
			"(1-alpha)*rate + alpha*(1 if it succeeded else 0).",
		Example: "  flowctl stats\n  flowctl stats --alpha 0.1 -o json | jq '.tools[] | {tool, ewma}'",
		Args:    cobra.NoArgs,
	}
	cmd.Flags().Float64Var(&alpha, "alpha", digest.DefaultAlpha, "weight of each new record in the weighted success rate, in (0, 1]")
	cmd.RunE = a.action(func(*cobra.Command, []string) error {
		if !(alpha > 0 && alpha <= 1) {
			return usageError{fmt.Errorf("--alpha %v: use a number in (0, 1]", alpha)}
		}
		return a.withEngine(true, func(s *session) error {
			st, err := digest.Stats(s.eng, s.project, digest.StatsOptions{Alpha: alpha})
			if err != nil {
				return err
			}
			return a.printer().one(st, func(w io.Writer) { writeStats(w, st) })
		})
	})
	return cmd
}

// writeStats prints the totals and one table per grouping.
func writeStats(w io.Writer, st *digest.ExecStats) {
	t := st.Total
	if t.Runs == 0 {
		fmt.Fprintf(w, "No exec records in project %s.\n", printable(st.Project))
		return
	}
	fmt.Fprintf(w, "%d exec records: %d ok, %d failed (%s ok); elapsed mean %s, p50 %s, max %s\n",
		t.Runs, t.Successes, t.Failures, statsPercent(t.SuccessRate), statsMS(t.Elapsed.Mean), statsMS(t.Elapsed.P50), statsMS(t.Elapsed.Max))
	const cols = "RUNS\tOK\tFAILED\tRATE\tMEAN\tP50\tMAX"
	fmt.Fprintln(w, "\nper command:")
	rows := make([][]string, len(st.Commands))
	for i, c := range st.Commands {
		rows[i] = append([]string{c.Command}, statsCells(c.Outcomes)...)
	}
	table(w, "COMMAND\t"+cols, rows)
	fmt.Fprintln(w, "\nper task:")
	rows = make([][]string, len(st.Tasks))
	for i, x := range st.Tasks {
		id, title := x.Task, x.Title
		if id == "" {
			id, title = "-", "(no task)"
		}
		rows[i] = append(append([]string{id}, statsCells(x.Outcomes)...), title)
	}
	table(w, "TASK\t"+cols+"\tTITLE", rows)
	fmt.Fprintf(w, "\nper tool (weighted rate: alpha %s, from %s):\n", statsFloat(st.Alpha), statsFloat(st.Prior))
	rows = make([][]string, len(st.Tools))
	for i, x := range st.Tools {
		rows[i] = append([]string{x.Tool}, statsCells(x.Outcomes)...)
		rows[i] = append(rows[i], statsFloat(x.EWMA), strconv.FormatUint(x.LastSeq, 10))
	}
	table(w, "TOOL\t"+cols+"\tWEIGHTED\tLAST SEQ", rows)
}

func statsCells(o digest.Outcomes) []string {
	return []string{strconv.Itoa(o.Runs), strconv.Itoa(o.Successes), strconv.Itoa(o.Failures), statsPercent(o.SuccessRate),
		statsMS(o.Elapsed.Mean), statsMS(o.Elapsed.P50), statsMS(o.Elapsed.Max)}
}

func statsPercent(rate float64) string { return strconv.FormatFloat(rate*100, 'f', 1, 64) + "%" }

// statsMS prints milliseconds with one decimal.
func statsMS(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) + "ms" }

func statsFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
