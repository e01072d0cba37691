package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
	"github.com/spf13/cobra"
)

func (a *app) stepCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "step",
		Short: "Add and move a task's execution steps, with progress",
		Long: "Steps are the execution steps of a task, T-n.1, T-n.2, ... Each moves pending -> in_progress ->\n" +
			"completed | failed | skipped (a pending step can be skipped too), with a progress of 0-100.\n" +
			"A STEP is T-n.m, n.m, or just m for a step of the task in FLOW_TASK_ID. Steps of a done or\n" +
			"cancelled task do not change.",
	}
	cmd.AddCommand(a.stepAddCommand(), a.stepLsCommand(), a.stepProgressCommand(), a.stepShowCommand(), a.stepRetryCommand())
	for _, m := range stepMoves {
		cmd.AddCommand(a.stepMoveCommand(m))
	}
	return cmd
}

func (a *app) stepAddCommand() *cobra.Command {
	var wo writeOpts
	cmd := &cobra.Command{
		Use:     "add [T] TITLE",
		Short:   "Add a pending step (T-n.m) to a task",
		Example: "  flowctl step add T-3 'run the tests'",
		Args:    cobra.RangeArgs(1, 2),
	}
	wo.addFlags(cmd)
	cmd.RunE = a.action(func(_ *cobra.Command, args []string) error {
		id, err := a.taskArg(args[:len(args)-1], 0)
		if err != nil {
			return err
		}
		return a.withEngine(false, func(s *session) error {
			st, err := s.eng.AddStep(flow.NewStep{Project: s.project, Task: id, Title: args[len(args)-1], Write: wo.write()})
			if err != nil {
				return err
			}
			return a.printer().one(st, func(w io.Writer) { fmt.Fprintf(w, "Added step %s: %s\n", st.ID, printable(st.Title)) })
		})
	})
	return cmd
}

func (a *app) stepLsCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "ls [T]",
		Short:   "List a task's steps",
		Example: "  flowctl step ls T-3\n  flowctl step ls -o json",
		Args:    cobra.MaximumNArgs(1),
		RunE: a.action(func(_ *cobra.Command, args []string) error {
			id, err := a.taskArg(args, 0)
			if err != nil {
				return err
			}
			return a.withEngine(true, func(s *session) error {
				steps, err := s.eng.Steps(s.project, id)
				if err != nil {
					return err
				}
				return printList(a.printer(), steps, func(w io.Writer) { writeStepTable(w, steps) })
			})
		}),
	}
}

func writeStepTable(w io.Writer, steps []flow.TaskStep) {
	rows := make([][]string, len(steps))
	for i, s := range steps {
		info := s.Note
		if s.Error != "" {
			info = "error: " + s.Error
		} else if s.Result != "" {
			info = "result: " + s.Result
		}
		rows[i] = []string{s.ID, s.Status, fmt.Sprintf("%d%%", s.Progress), strconv.Itoa(s.Attempt), s.Title, info}
	}
	table(w, "ID\tSTATUS\tPROGRESS\tATTEMPT\tTITLE\tNOTE", rows)
}

// stepMove is one status command of a step.
type stepMove struct {
	name, to, short string
	text            string // the flag recording why: note, result or error
}

var stepMoves = []stepMove{
	{"start", projection.StepInProgress, "Start a step (pending -> in_progress)", ""},
	{"done", projection.StepCompleted, "Complete a step (in_progress -> completed, progress 100)", "result"},
	{"fail", projection.StepFailed, "Fail a step (in_progress -> failed) with --error", "error"},
	{"skip", projection.StepSkipped, "Skip a step (pending or in_progress -> skipped)", ""},
}

func (a *app) stepMoveCommand(m stepMove) *cobra.Command {
	var in flow.StepMove
	var wo writeOpts
	cmd := &cobra.Command{
		Use:     m.name + " STEP",
		Short:   m.short,
		Example: fmt.Sprintf("  flowctl step %s T-3.1", m.name),
		Args:    cobra.ExactArgs(1),
	}
	cmd.Flags().StringVar(&in.Note, "note", "", "a note on the step (recorded)")
	switch m.text {
	case "result":
		cmd.Flags().StringVar(&in.Result, "result", "", "what the step produced (recorded): text, or a JSON object or array, kept as a structured result")
		cmd.Example += " --result 'all 41 tests pass'\n  flowctl step done T-3.2 --result '{\"passed\":41,\"failed\":0}'"
	case "error":
		cmd.Flags().StringVar(&in.Error, "error", "", "what went wrong (required, recorded)")
		_ = cmd.MarkFlagRequired("error")
		cmd.Example += " --error 'exit 1: parse.go:12: unexpected EOF'"
	}
	wo.addFlags(cmd)
	cmd.RunE = a.action(func(_ *cobra.Command, args []string) error {
		in.To, in.Write = m.to, wo.write()
		in.Result, in.ResultData = splitResult(in.Result)
		return a.runStepMove(args[0], in)
	})
	return cmd
}

// splitResult reads --result: a value that starts with { or [ (after
// space) is a structured result, JSON the engine checks; anything else is
// text.
func splitResult(result string) (text, data string) {
	if t := strings.TrimSpace(result); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		return "", t
	}
	return result, ""
}

func (a *app) stepProgressCommand() *cobra.Command {
	var in flow.StepMove
	var wo writeOpts
	cmd := &cobra.Command{
		Use:   "progress STEP PCT",
		Short: "Set a step's progress (0-100); a pending step is started by it",
		Long: "progress sets the progress of a step in progress to PCT, 0 to 100 (a trailing % is allowed).\n" +
			"A pending step is started by it (pending -> in_progress) in the same event.",
		Example: "  flowctl step progress T-3.2 40 --note 'parser done, printer next'",
		Args:    cobra.ExactArgs(2),
	}
	cmd.Flags().StringVar(&in.Note, "note", "", "a note on the step (recorded)")
	wo.addFlags(cmd)
	cmd.RunE = a.action(func(_ *cobra.Command, args []string) error {
		p, err := stepPercent(args[1])
		if err != nil {
			return err
		}
		in.To, in.Progress, in.Write = projection.StepInProgress, &p, wo.write()
		return a.runStepMove(args[0], in)
	})
	return cmd
}

// stepPercent parses PCT: an integer 0-100, optionally with a trailing %.
func stepPercent(arg string) (int, error) {
	p, err := strconv.Atoi(strings.TrimSuffix(arg, "%"))
	if err != nil || p < 0 || p > 100 {
		return 0, usageError{fmt.Errorf("progress %q: give a whole number from 0 to 100", arg)}
	}
	return p, nil
}

func (a *app) runStepMove(arg string, in flow.StepMove) error {
	id, err := a.stepArg(arg)
	if err != nil {
		return err
	}
	return a.withEngine(false, func(s *session) error {
		in.Project, in.ID = s.project, id
		st, err := s.eng.MoveStep(in)
		if err != nil {
			return err
		}
		return a.printer().one(st, func(w io.Writer) {
			fmt.Fprintf(w, "%s %s (%d%%): %s\n", st.ID, st.Status, st.Progress, printable(st.Title))
		})
	})
}

// stepArg parses STEP: T-n.m, n.m, or m for a step of FLOW_TASK_ID.
func (a *app) stepArg(arg string) (string, error) {
	if n, err := strconv.Atoi(arg); err == nil && n > 0 && strconv.Itoa(n) == arg {
		task, err := a.taskArg(nil, 0)
		if err != nil {
			return "", usageError{fmt.Errorf("step %q: give T-n.m, or set FLOW_TASK_ID to use a bare step number", arg)}
		}
		arg = fmt.Sprintf("%s.%d", task, n)
	}
	_, id, err := flow.ParseStepID(arg)
	return id, err
}

func (a *app) stepRetryCommand() *cobra.Command {
	var note string
	var wo writeOpts
	cmd := &cobra.Command{
		Use:   "retry STEP",
		Short: "Retry a failed step (failed -> in_progress, attempt + 1)",
		Long: "retry moves a failed step back to in_progress for another attempt: its attempt grows by one,\n" +
			"started_at is now, and its error, completed_at and progress are cleared (the log keeps them).\n" +
			"Only a failed step can be retried: any other is a conflict (exit 4).",
		Example: "  flowctl step retry T-3.2 --note 'flaky network, once more'",
		Args:    cobra.ExactArgs(1),
	}
	cmd.Flags().StringVar(&note, "note", "", "a note on the step (recorded)")
	wo.addFlags(cmd)
	cmd.RunE = a.action(func(_ *cobra.Command, args []string) error {
		return a.runStepMove(args[0], flow.StepMove{To: projection.StepInProgress, Note: note, Retry: true, Write: wo.write()})
	})
	return cmd
}

func (a *app) stepShowCommand() *cobra.Command {
	var at atFlag
	cmd := &cobra.Command{
		Use:   "show STEP",
		Short: "Show a step: status, progress, attempt, times, note, result, error",
		Long: "show prints one step. -o json prints its fields: id, title, status, progress, note, result,\n" +
			"result_data (a structured result), error, attempt, started_at, completed_at, updated_at, task\n" +
			"and the task's version.",
		Example: "  flowctl step show T-3.2\n  flowctl step show T-3.2 -o json | jq .attempt",
		Args:    cobra.ExactArgs(1),
	}
	at.add(cmd)
	cmd.RunE = a.action(func(_ *cobra.Command, args []string) error {
		id, err := a.stepArg(args[0])
		if err != nil {
			return err
		}
		return a.withEngine(true, func(s *session) error {
			if err := at.view(s); err != nil {
				return err
			}
			st, err := s.eng.Step(s.project, id)
			if err != nil {
				return err
			}
			return a.printer().one(st, func(w io.Writer) { writeStep(w, st) })
		})
	})
	return cmd
}

func writeStep(w io.Writer, st *flow.TaskStep) {
	fmt.Fprintf(w, "%s  %s  [%s]  %d%%  (task %s v%d)\n", st.ID, printable(st.Title), st.Status, st.Progress, st.Task, st.Version)
	fmt.Fprintf(w, "attempt %d, started %s, completed %s, updated %s\n", st.Attempt, fmtTime(st.StartedAt), fmtTime(st.CompletedAt), fmtTime(st.UpdatedAt))
	for _, kv := range [][2]string{{"note", st.Note}, {"result", st.Result}, {"result data", string(st.ResultData)}, {"error", st.Error}} {
		if kv[1] != "" {
			fmt.Fprintf(w, "%s: %s\n", kv[0], printable(kv[1]))
		}
	}
}
