package main

import (
	"io"
	"strconv"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/spf13/cobra"
)

func (a *app) sessionCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "session",
		Short: "List the sessions that wrote to the file",
		Long: "A session is the --session (or FLOW_SESSION) of the commands that appended events: one\n" +
			"agent's run, say. 'session ls' lists them; 'log --session S', 'watch --session S' and\n" +
			"'report --session S' show what one of them did.",
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(a.sessionLsCommand())
	return cmd
}

func (a *app) sessionLsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "ls",
		Short: "List sessions: actor, first and last event, event count",
		Long: "session ls lists every session of the file, the most recently active first: its actor (of\n" +
			"its first event), its first and last events (seq and time) and how many events it appended.\n" +
			"It reads the log index's lists, not the log: fast on any file size.\n" +
			"-o json prints [{session, actor, first_seq, last_seq, first_time, last_time, events}].",
		Example: "  flowctl session ls\n  flowctl session ls -o json | jq -r '.[0].session'",
		Args:    cobra.NoArgs,
		RunE: a.action(func(*cobra.Command, []string) (err error) {
			defer a.holdOutput(&err)()
			eng, err := a.open(true)
			if err != nil {
				return err
			}
			defer closeEngine(eng, &err)
			ss, err := eng.Sessions()
			if err != nil {
				return err
			}
			return printList(a.printer(), ss, func(w io.Writer) { writeSessions(w, ss) })
		}),
	}
}

func writeSessions(w io.Writer, ss []flow.Session) {
	if len(ss) == 0 {
		io.WriteString(w, "No sessions: no event was appended with --session or FLOW_SESSION.\n")
		return
	}
	rows := make([][]string, len(ss))
	for i, s := range ss {
		rows[i] = []string{s.Session, s.Actor, s.FirstTime.Format(time.RFC3339), s.LastTime.Format(time.RFC3339),
			strconv.FormatUint(s.FirstSeq, 10) + "-" + strconv.FormatUint(s.LastSeq, 10), strconv.Itoa(s.Events),
			s.LastTime.Sub(s.FirstTime).Round(time.Second).String()}
	}
	table(w, "SESSION\tACTOR\tFIRST\tLAST\tSEQS\tEVENTS\tSPENT", rows)
}
