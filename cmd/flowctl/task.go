package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/view"
	"github.com/spf13/cobra"
)

func (a *app) taskCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "task", Short: "Add, list, show, edit, move and claim tasks"}
	cmd.AddCommand(a.taskAddCommand(), a.taskLsCommand(), a.taskShowCommand(), a.taskEditCommand())
	for _, m := range taskMoves {
		cmd.AddCommand(a.taskMoveCommand(m))
	}
	cmd.AddCommand(a.taskClaimCommand("claim"), a.taskClaimCommand("heartbeat"), a.taskClaimCommand("release"))
	return cmd
}

func (a *app) taskAddCommand() *cobra.Command {
	var in flow.NewTask
	var wo writeOpts
	cmd := &cobra.Command{
		Use:   "add TITLE",
		Short: "Add a task (T-n)",
		Example: "  flowctl task add 'write the parser' --dep T-1 --tag backend --priority 2\n" +
			"  flowctl task add 'parse numbers' --parent T-2 --due +3d",
		Args: cobra.ExactArgs(1),
	}
	var due string
	fs := cmd.Flags()
	fs.StringVar(&in.Plan, "plan", "", "plan the task belongs to (env FLOW_PLAN_ID)")
	fs.StringVar(&in.Description, "description", "", "what is to be done")
	fs.StringSliceVar(&in.Deps, "dep", nil, "a task this one depends on (repeat or comma-separate)")
	fs.StringVar(&in.Owner, "owner", "", "who owns it")
	fs.StringSliceVar(&in.Tags, "tag", nil, "a tag (repeat or comma-separate)")
	fs.IntVar(&in.Priority, "priority", 0, "priority; higher is more urgent")
	fs.StringVar(&in.Ref, "ref", "", "an outside reference (issue URL, original id)")
	fs.StringVar(&in.Parent, "parent", "", "the task this one is a subtask of")
	fs.StringVar(&due, "due", "", "when it is due: RFC 3339, a date, or +N m|h|d|w from now (+3d)")
	wo.addKeyFlag(cmd)
	cmd.RunE = a.action(func(_ *cobra.Command, args []string) error {
		var err error
		if in.Due, err = flow.ParseDue(due, time.Now()); err != nil {
			return err
		}
		return a.withEngine(false, func(s *session) error {
			in.Project, in.Title, in.Write = s.project, args[0], wo.write()
			in.Plan = a.planDefault(in.Plan)
			t, err := s.eng.AddTask(in)
			if err != nil {
				return err
			}
			return a.printer().one(t, func(w io.Writer) { fmt.Fprintf(w, "Created task %s: %s\n", t.ID, printable(t.Title)) })
		})
	})
	return cmd
}

func (a *app) taskLsCommand() *cobra.Command {
	var f flow.TaskFilter
	cmd := &cobra.Command{
		Use:     "ls",
		Short:   "List tasks",
		Example: "  flowctl task ls --status doing\n  flowctl task ls --status done --limit 20\n  flowctl task ls --tag backend -o json\n  flowctl task ls --tree",
		Args:    cobra.NoArgs,
	}
	fs := cmd.Flags()
	enumVar(fs, &f.Status, "status", "", taskStatuses, "only tasks with this status: "+strings.Join(taskStatuses, ", "))
	fs.StringVar(&f.Plan, "plan", "", "only tasks of this plan")
	fs.StringVar(&f.Owner, "owner", "", "only tasks of this owner")
	fs.StringVar(&f.Tag, "tag", "", "only tasks with this tag")
	var tree bool
	fs.BoolVar(&tree, "tree", false, "print subtasks under their parents, as a tree (-o json: nested)")
	var limit int
	limitFlag(cmd, &limit, "tasks")
	var at atFlag
	at.add(cmd)
	cmd.RunE = a.action(func(*cobra.Command, []string) error {
		if err := checkLimit(limit); err != nil {
			return err
		}
		if tree && limit > 0 {
			return usageError{fmt.Errorf("--tree prints the whole tree: leave out --limit")}
		}
		if f.Plan != "" {
			id, err := flow.ParsePlanID(f.Plan)
			if err != nil {
				return err
			}
			f.Plan = id
		}
		return a.withEngine(true, func(s *session) error {
			if err := at.view(s); err != nil {
				return err
			}
			if tree {
				roots, err := s.eng.TaskTree(s.project, f)
				if err != nil {
					return err
				}
				return a.printTrees(roots)
			}
			pg := a.page(limit, "tasks", taskHeader)
			err := s.eng.EachTask(s.project, f, func(t *projection.Task) error {
				return pg.add(t, func() []string { return taskRow(t) })
			})
			if err != nil {
				return err
			}
			return pg.end()
		})
	})
	return cmd
}

const taskHeader = "ID\tSTATUS\tPRI\tOWNER\tDEPS\tTITLE"

func writeTaskTable(w io.Writer, tasks []*projection.Task) {
	rows := make([][]string, len(tasks))
	for i, t := range tasks {
		rows[i] = taskRow(t)
	}
	table(w, taskHeader, rows)
}

func taskRow(t *projection.Task) []string {
	return []string{t.ID, t.Status, fmt.Sprint(t.Priority), t.Owner, strings.Join(t.Deps, ","), t.Title}
}

func (a *app) taskShowCommand() *cobra.Command {
	var at atFlag
	cmd := &cobra.Command{
		Use:     "show [T]",
		Short:   "Show a task: fields, steps, context, claim",
		Example: "  flowctl task show T-3\n  flowctl task show T-3 -o json | jq .version",
		Args:    cobra.MaximumNArgs(1),
		RunE: a.action(func(_ *cobra.Command, args []string) error {
			id, err := a.taskArg(args, 0)
			if err != nil {
				return err
			}
			return a.withEngine(true, func(s *session) error {
				if err := at.view(s); err != nil {
					return err
				}
				f, err := s.eng.TaskFamily(s.project, id)
				if err != nil {
					return err
				}
				return a.printer().one(view.TaskDetailOf(f), func(w io.Writer) { writeTask(w, f) })
			})
		}),
	}
	at.add(cmd)
	return cmd
}

func writeTask(w io.Writer, f *flow.Family) {
	t := f.Task
	fmt.Fprintf(w, "%s  %s  [%s]  v%d\n", t.ID, printable(t.Title), t.Status, t.Version)
	var meta []string
	for _, kv := range [][2]string{{"plan", t.Plan}, {"owner", t.Owner}, {"ref", t.Ref}} {
		if kv[1] != "" {
			meta = append(meta, kv[0]+": "+kv[1])
		}
	}
	meta = append(meta, fmt.Sprintf("priority: %d", t.Priority))
	if len(t.Tags) > 0 {
		meta = append(meta, "tags: "+strings.Join(t.Tags, ", "))
	}
	fmt.Fprintln(w, printable(strings.Join(meta, "   ")))
	if t.Due != 0 {
		fmt.Fprintf(w, "due: %s\n", fmtTime(t.Due))
	}
	if len(t.Deps) > 0 {
		fmt.Fprintf(w, "depends on: %s\n", strings.Join(t.Deps, ", "))
	}
	writeFamily(w, f)
	if t.Claim != nil {
		fmt.Fprintf(w, "claimed by %s until %s\n", printable(t.Claim.Actor), fmtTime(t.Claim.LeaseUntil))
	}
	if len(t.PendingApprovals) > 0 {
		fmt.Fprintf(w, "pending approvals: %s\n", strings.Join(t.PendingApprovals, ", "))
	}
	if t.Description != "" {
		fmt.Fprintf(w, "\n%s\n", printable(t.Description))
	}
	if len(t.Steps) > 0 {
		fmt.Fprintln(w, "\nsteps:")
		rows := make([][]string, len(t.Steps))
		for i, s := range t.Steps {
			rows[i] = []string{"  " + s.ID, s.Status, fmt.Sprintf("%d%%", s.Progress), stepAttempt(s), s.Title}
		}
		table(w, "", rows)
	}
	if t.Context != projection.EmptyContext {
		fmt.Fprintf(w, "\ncontext: %s\n", t.Context)
	}
	fmt.Fprintf(w, "\ncreated %s by %s, updated %s\n", fmtTime(t.CreatedAt), printable(t.CreatedBy), fmtTime(t.UpdatedAt))
}

func (a *app) taskEditCommand() *cobra.Command {
	var title, desc, owner, plan, due string
	var tags []string
	var priority int
	var wo writeOpts
	cmd := &cobra.Command{
		Use:     "edit [T]",
		Aliases: []string{"update"},
		Short:   "Change a task's title, description, owner, tags, priority, plan, parent or due date",
		Example: "  flowctl task edit T-3 --title 'parse the v2 format' --priority 3\n" +
			"  flowctl task update T-3 --parent T-1 --due 2026-12-01\n  flowctl task update T-3 --parent '' --due ''",
		Args: cobra.MaximumNArgs(1),
	}
	fs := cmd.Flags()
	fs.StringVar(&title, "title", "", "new title")
	fs.StringVar(&desc, "description", "", "new description")
	fs.StringVar(&owner, "owner", "", "new owner")
	fs.StringSliceVar(&tags, "tag", nil, "new tags, replacing the old ones")
	fs.IntVar(&priority, "priority", 0, "new priority")
	fs.StringVar(&plan, "plan", "", "move to this plan")
	fs.String("parent", "", "make it a subtask of this task ('' detaches it)")
	fs.StringVar(&due, "due", "", "new due date: RFC 3339, a date, or +N m|h|d|w from now ('' clears it)")
	wo.addFlags(cmd)
	cmd.RunE = a.action(func(cmd *cobra.Command, args []string) error {
		id, err := a.taskArg(args, 0)
		if err != nil {
			return err
		}
		in := flow.TaskEdit{ID: id, Write: wo.write()}
		changed := cmd.Flags().Changed
		for flag, dst := range map[string]**string{"title": &in.Title, "description": &in.Description, "owner": &in.Owner, "plan": &in.Plan, "parent": &in.Parent} {
			if changed(flag) {
				v, _ := cmd.Flags().GetString(flag)
				*dst = &v
			}
		}
		if changed("tag") {
			in.Tags = &tags
		}
		if changed("priority") {
			in.Priority = &priority
		}
		if changed("due") {
			d, err := flow.ParseDue(due, time.Now())
			if err != nil {
				return err
			}
			in.Due = &d
		}
		return a.withEngine(false, func(s *session) error {
			in.Project = s.project
			t, err := s.eng.EditTask(in)
			if err != nil {
				return err
			}
			return a.printer().one(t, func(w io.Writer) { fmt.Fprintf(w, "Updated task %s (v%d)\n", t.ID, t.Version) })
		})
	})
	return cmd
}

// taskMove is one status command: its name, target status and wording.
type taskMove struct{ name, to, short, done string }

var taskMoves = []taskMove{
	{"start", projection.StatusDoing, "Start a task (todo or blocked -> doing)", "Started"},
	{"done", projection.StatusDone, "Finish a task (doing -> done); refused while deps, approvals or steps are open", "Done:"},
	{"block", projection.StatusBlocked, "Mark a task blocked", "Blocked"},
	{"cancel", projection.StatusCancelled, "Cancel a task", "Cancelled"},
	{"reopen", projection.StatusTodo, "Reopen a done, cancelled or blocked task (-> todo)", "Reopened"},
}

func (a *app) taskMoveCommand(m taskMove) *cobra.Command {
	var reason string
	var force bool
	var wo writeOpts
	cmd := &cobra.Command{
		Use:     m.name + " [T]",
		Short:   m.short,
		Example: fmt.Sprintf("  flowctl task %s T-3 --reason 'see review'", m.name),
		Args:    cobra.MaximumNArgs(1),
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (recorded)")
	if m.to == projection.StatusDone {
		cmd.Flags().BoolVar(&force, "force", false, "finish despite open dependencies or running steps (recorded; never past a pending approval)")
	}
	wo.addFlags(cmd)
	cmd.RunE = a.action(func(_ *cobra.Command, args []string) error {
		id, err := a.taskArg(args, 0)
		if err != nil {
			return err
		}
		return a.withEngine(false, func(s *session) error {
			t, err := s.eng.MoveTask(flow.Move{Project: s.project, ID: id, To: m.to, Reason: reason, Force: force, Write: wo.write()})
			if err != nil {
				return err
			}
			return a.printer().one(t, func(w io.Writer) {
				fmt.Fprintf(w, "%s %s (%s, v%d)\n", m.done, t.ID, t.Status, t.Version)
			})
		})
	})
	return cmd
}

func (a *app) taskClaimCommand(name string) *cobra.Command {
	var lease time.Duration
	var force bool
	var wo writeOpts
	shorts := map[string]string{
		"claim":     "Claim a task for this actor and session, with a lease",
		"heartbeat": "Renew this actor's claim on a task",
		"release":   "Release this actor's claim on a task",
	}
	cmd := &cobra.Command{
		Use:     name + " [T]",
		Short:   shorts[name],
		Example: fmt.Sprintf("  flowctl task %s T-3", name),
		Args:    cobra.MaximumNArgs(1),
	}
	if name != "release" {
		cmd.Flags().DurationVar(&lease, "lease", flow.DefaultLease, "how long the claim holds without a heartbeat (at most 168h)")
	} else {
		cmd.Flags().BoolVar(&force, "force", false, "release a claim held by someone else")
	}
	wo.addFlags(cmd)
	cmd.RunE = a.action(func(_ *cobra.Command, args []string) error {
		id, err := a.taskArg(args, 0)
		if err != nil {
			return err
		}
		if name != "release" && lease <= 0 {
			return usageError{fmt.Errorf("--lease %s: must be positive (at most %s)", lease, flow.MaxLease)}
		}
		return a.withEngine(false, func(s *session) error {
			in := flow.Claim{Project: s.project, ID: id, Lease: lease, Force: force, Write: wo.write()}
			do := map[string]func(flow.Claim) (*projection.Task, error){
				"claim": s.eng.ClaimTask, "heartbeat": s.eng.Heartbeat, "release": s.eng.ReleaseTask,
			}[name]
			t, err := do(in)
			if err != nil {
				return err
			}
			return a.printer().one(t, func(w io.Writer) {
				if t.Claim == nil {
					fmt.Fprintf(w, "%s is not claimed\n", t.ID)
					return
				}
				fmt.Fprintf(w, "%s is claimed by %s until %s\n", t.ID, printable(t.Claim.Actor), fmtTime(t.Claim.LeaseUntil))
			})
		})
	})
	return cmd
}
