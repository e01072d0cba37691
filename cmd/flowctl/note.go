package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
	"github.com/spf13/cobra"
)

func (a *app) noteCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "note",
		Short: "Add and list notes and long-term memories of a task or project",
		Long: "A note is commentary on the work; a memory (--kind memory) is long-term memory that 'prime'\n" +
			"gives back to an assistant. A note belongs to a task (--task, or FLOW_TASK_ID) or, without one,\n" +
			"to the project.",
	}
	cmd.AddCommand(a.noteAddCommand(), a.noteLsCommand())
	return cmd
}

// noteTask returns the task of --task (none when it is empty), else of
// FLOW_TASK_ID unless all, else none.
func (a *app) noteTask(cmd *cobra.Command, all bool) (string, error) {
	if cmd.Flags().Changed("task") {
		flag, _ := cmd.Flags().GetString("task")
		if flag == "" {
			return "", nil
		}
		return flow.ParseTaskID(flag)
	}
	if v := a.getenv("FLOW_TASK_ID"); v != "" && !all {
		return flow.ParseTaskID(v)
	}
	return "", nil
}

func (a *app) noteAddCommand() *cobra.Command {
	var in flow.NewNote
	var task string
	var wo writeOpts
	cmd := &cobra.Command{
		Use:   "add [--task T] [--kind note|memory] TEXT",
		Short: "Add a note to a task, or to the project",
		Long: "add records TEXT (or, with -, stdin) as a note of the task given with --task or FLOW_TASK_ID,\n" +
			"or of the project when there is none (--task '' chooses the project even with FLOW_TASK_ID set).\n" +
			"--if-version is the version of that task or project.",
		Example: "  flowctl note add --task T-3 'the v1 format has no length prefix'\n" +
			"  flowctl note add --kind memory 'run the tests with -race; the cache is shared'",
		Args: cobra.ExactArgs(1),
	}
	cmd.Flags().StringVar(&task, "task", "", "the task (env FLOW_TASK_ID); without one the note is the project's")
	enumVar(cmd.Flags(), &in.Kind, "kind", flow.NoteKindNote, noteKinds, "note, or memory (long-term memory read by prime)")
	wo.addFlags(cmd)
	cmd.RunE = a.action(func(c *cobra.Command, args []string) error {
		var err error
		if in.Task, err = a.noteTask(c, false); err != nil {
			return err
		}
		if in.Text, err = a.noteText(args[0]); err != nil {
			return err
		}
		return a.withEngine(false, func(s *session) error {
			in.Project, in.Write = s.project, wo.write()
			n, err := s.eng.AddNote(in)
			if err != nil {
				return err
			}
			return a.printer().one(n, func(w io.Writer) {
				fmt.Fprintf(w, "Added %s to %s (seq %d)\n", n.Kind, noteOwner(n), n.Seq)
			})
		})
	})
	return cmd
}

// noteText is TEXT, or stdin for "-".
func (a *app) noteText(arg string) (string, error) {
	if arg != "-" {
		return arg, nil
	}
	b, err := io.ReadAll(io.LimitReader(a.stdin, flow.MaxText+1))
	return strings.TrimRight(string(b), "\r\n"), err
}

func noteOwner(n *flow.Note) string {
	if n.Task != "" {
		return n.Task
	}
	return "project " + n.Project
}

func (a *app) noteLsCommand() *cobra.Command {
	var task, kind string
	var all bool
	cmd := &cobra.Command{
		Use:   "ls [--task T] [--kind K]",
		Short: "List notes, oldest first",
		Long: "ls lists the notes of the task given with --task or FLOW_TASK_ID, or else every note of the\n" +
			"project (its own and its tasks'). --all (or --task '') ignores FLOW_TASK_ID.",
		Example: "  flowctl note ls --task T-3\n  flowctl note ls --kind memory -o json",
		Args:    cobra.NoArgs,
	}
	cmd.Flags().StringVar(&task, "task", "", "only this task's notes (env FLOW_TASK_ID)")
	enumVar(cmd.Flags(), &kind, "kind", "", noteKinds, "only notes of this kind: note or memory")
	cmd.Flags().BoolVar(&all, "all", false, "every note of the project, even with FLOW_TASK_ID set")
	cmd.MarkFlagsMutuallyExclusive("task", "all")
	cmd.RunE = a.action(func(c *cobra.Command, _ []string) error {
		id, err := a.noteTask(c, all)
		if err != nil {
			return err
		}
		return a.withEngine(true, func(s *session) error {
			notes, err := s.eng.Notes(s.project, flow.NoteFilter{Task: id, Kind: kind})
			if err != nil {
				return err
			}
			return printList(a.printer(), notes, func(w io.Writer) { writeNoteTable(w, notes) })
		})
	})
	return cmd
}

func writeNoteTable(w io.Writer, notes []flow.Note) {
	rows := make([][]string, len(notes))
	for i, n := range notes {
		task := n.Task
		if task == "" {
			task = "-"
		}
		rows[i] = []string{fmt.Sprint(n.Seq), fmtTime(projection.TimeOf(n.Time)), n.Actor, task, n.Kind, n.Text}
	}
	table(w, "SEQ\tTIME\tACTOR\tTASK\tKIND\tTEXT", rows)
}
