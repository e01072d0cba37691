package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/flowctl/flowctl/flow"
	"github.com/spf13/cobra"
)

func (a *app) statusCommand() *cobra.Command {
	var at atFlag
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the project at a glance: tasks by status, ready, blocked, approvals, claims",
		Long: "status counts the project's tasks by status and lists the ready tasks (as 'ready' does), the\n" +
			"blocked ones (status blocked, or todo with dependencies not done), pending approvals and live\n" +
			"claims, with plan and exec record counts and the head seq of the log, and the overdue tasks (open,\n" +
			"past their --due; JSON: overdue, overdue_count). As for 'ready', your own live claims (--actor)\n" +
			"do not keep a task from being ready.",
		Example: "  flowctl status\n  flowctl status -o json | jq .tasks",
		Args:    cobra.NoArgs,
		RunE: a.action(func(*cobra.Command, []string) error {
			return a.withEngine(true, func(s *session) error {
				if err := at.view(s); err != nil {
					return err
				}
				st, err := a.statusFor(s, at.set())
				if err != nil {
					return err
				}
				return a.printer().one(st, func(w io.Writer) { writeProjectStatus(w, st) })
			})
		}),
	}
	at.add(cmd)
	return cmd
}

// statusFor reads the status as the acting person sees it: their own
// live claims do not keep a task from being ready. Who that is may take
// running git, so a read of the head asks only when some live claim could
// be theirs; a view at a point (a replay) asks at once.
func (a *app) statusFor(s *session, at bool) (*flow.Status, error) {
	if at {
		return s.eng.StatusFor(s.project, a.actor())
	}
	st, err := s.eng.StatusFor(s.project, "")
	if err != nil || !claimsOf(st, a.actor) {
		return st, err
	}
	return s.eng.StatusFor(s.project, a.actor())
}

// claimsOf reports whether one of st's live claims is the actor's,
// resolving the actor only when there is a live claim.
func claimsOf(st *flow.Status, actor func() string) bool {
	if len(st.Claims) == 0 {
		return false
	}
	me := actor()
	for _, c := range st.Claims {
		if c.Actor == me {
			return true
		}
	}
	return false
}

// writeProjectStatus prints the status for people: counts, then one short
// section per list.
func writeProjectStatus(w io.Writer, st *flow.Status) {
	archived := ""
	if st.Archived {
		archived = " (archived)"
	}
	fmt.Fprintf(w, "Project %s%s at seq %d\n", printable(st.Project), archived, st.HeadSeq)
	c, d := st.Tasks, displayOf(w)
	count := func(n int, status string) string {
		return d.paint(fmt.Sprintf("%d %s", n, status), statusColors[status])
	}
	fmt.Fprintf(w, "tasks  %d: %s, %s, %s, %s, %s\n", c.Total,
		count(c.Todo, "todo"), count(c.Doing, "doing"), count(c.Done, "done"), count(c.Blocked, "blocked"), count(c.Cancelled, "cancelled"))
	fmt.Fprintf(w, "plans  %d open, %d closed\n", st.Plans.Open, st.Plans.Closed)
	fmt.Fprintf(w, "execs  %d recorded, %d failed\n", st.Execs.Total, st.Execs.Failed)
	statusSection(w, "ready", len(st.Ready), func() [][]string {
		rows := make([][]string, len(st.Ready))
		for i, t := range st.Ready {
			rows[i] = []string{"  " + t.ID, fmt.Sprintf("pri %d", t.Priority), t.Title}
		}
		return rows
	})
	statusSection(w, "blocked", len(st.Blocked), func() [][]string {
		rows := make([][]string, len(st.Blocked))
		for i, t := range st.Blocked {
			why := t.Status
			if len(t.WaitingFor) > 0 {
				why = "waiting for " + strings.Join(t.WaitingFor, ", ")
			}
			rows[i] = []string{"  " + t.ID, why, t.Title}
		}
		return rows
	})
	statusSection(w, "overdue", st.OverdueCount, func() [][]string {
		rows := make([][]string, len(st.Overdue))
		for i, t := range st.Overdue {
			rows[i] = []string{"  " + t.ID, t.Status, "due " + fmtTime(t.Due), t.Title}
		}
		return rows
	})
	writeStatusPending(w, st)
}

func writeStatusPending(w io.Writer, st *flow.Status) {
	statusSection(w, "pending approvals", len(st.PendingApprovals), func() [][]string {
		rows := make([][]string, len(st.PendingApprovals))
		for i, p := range st.PendingApprovals {
			rows[i] = []string{"  " + p.ID, statusDash(p.Task), p.RequestedBy, p.Message}
		}
		return rows
	})
	statusSection(w, "live claims", len(st.Claims), func() [][]string {
		rows := make([][]string, len(st.Claims))
		for i, c := range st.Claims {
			rows[i] = []string{"  " + c.Task, c.Actor, "until " + fmtTime(c.LeaseUntil), c.Title}
		}
		return rows
	})
}

// sectionColors colour the names of status's sections that ask for attention.
var sectionColors = map[string]string{"ready": sgrGreen, "blocked": sgrRed, "overdue": sgrRed, "pending approvals": sgrYellow}

// statusSection prints "name: none", or "name (n):" and a table.
func statusSection(w io.Writer, name string, n int, rows func() [][]string) {
	if n == 0 {
		fmt.Fprintf(w, "%s: none\n", name)
		return
	}
	fmt.Fprintf(w, "%s (%d):\n", displayOf(w).paint(name, sectionColors[name]), n)
	table(w, "", rows())
}

func statusDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
