package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
	"github.com/spf13/cobra"
)

func (a *app) execCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "exec",
		Short: "Run and record commands: exit code, elapsed time, stdout/stderr head and tail, git HEAD",
	}
	cmd.AddCommand(a.execRunCommand(), a.execRecordCommand(), a.execLsCommand(), a.execShowCommand())
	return cmd
}

// execTarget is what an exec record is about: flags, else the environment.
type execTarget struct{ task, step, plan string }

func (t *execTarget) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&t.task, "task", "", "task the command belongs to (env FLOW_TASK_ID); none: the project")
	cmd.Flags().StringVar(&t.step, "step", "", "step the command belongs to (T-n.m)")
	cmd.Flags().StringVar(&t.plan, "plan", "", "plan the command belongs to (env FLOW_PLAN_ID; default: the task's)")
}

func (a *app) execRunCommand() *cobra.Command {
	var target execTarget
	var ifVersion uint64
	var gate execGate
	cmd := &cobra.Command{
		Use:   "run [--task T] [--step T-n.m] [--require-approval [--ttl D] [--wait]] -- CMD [ARGS...]",
		Short: "Run a command, passing its output through, and record it (exits with the command's code)",
		Long: "run starts CMD with flowctl's stdin and working directory and FLOW_PROJECT, FLOW_TASK_ID,\n" +
			"FLOW_TASK_NAME (the task's title), FLOW_STEP_ID (with --step) and FLOW_PLAN_ID set, copies its stdout and stderr through unchanged as they come, and records it:\n" +
			"command line, cwd, exit code, success (exit 0), elapsed time, the first and last 16 KiB of\n" +
			"stdout and stderr with their sizes and SHA-256, and the git HEAD when the command started.\n" +
			"Nothing is added to stdout; 'recorded X-n' goes to stderr (not with -q). flowctl exits with\n" +
			"the command's exit code (128+n when killed by signal n); a command that cannot be started\n" +
			"is recorded with exit code 127. Ids are checked before the command runs; the file is locked\n" +
			"only to write the record, after the command has finished.\n\n" +
			"--require-approval runs CMD only with a granted, unexpired, unused approval for exactly this\n" +
			"action: the argv, the working directory and the task (JSON, hashed with SHA-256). The run uses\n" +
			"the approval up (approval.consumed: one approval, one run). Without one it asks for one (or\n" +
			"reuses the pending request for the same action), runs nothing and exits 6; --wait polls until\n" +
			"it is decided (exit 4 when denied or expired, 6 at --timeout), then runs.",
		Example: "  flowctl exec run --task T-3 -- go test ./...\n  FLOW_TASK_ID=T-3 flowctl exec run make lint\n" +
			"  flowctl exec run --task T-3 --require-approval --ttl 1h -- ./deploy.sh prod",
		Args: cobra.MinimumNArgs(1),
	}
	target.addFlags(cmd)
	// No --idempotency-key: a retry runs the command again, so it is a
	// new record.
	ifVersionVar(cmd, &ifVersion, "fail with exit 4, before running, unless the task (or project) is at this version")
	gate.addFlags(cmd)
	cmd.Flags().SetInterspersed(false) // flags after CMD are CMD's
	cmd.RunE = a.action(func(cmd *cobra.Command, args []string) error {
		in := a.execInput(target, writeOpts{ifVersion: ifVersion})
		in.Command, in.Cwd = shellJoin(args), a.dir
		in, title, err := a.checkExec(in)
		if err != nil {
			return err
		}
		if gate.require {
			if err := a.passGate(cmd.Context(), gate, in, args); err != nil {
				return err
			}
		} else if err := gate.unused(); err != nil {
			return err
		}
		in.GitHead = gitHead(a.dir)
		res := teeRun{argv: args, dir: a.dir, env: execEnv(in, title), stdin: a.stdin, stdout: a.stdout, stderr: a.stderr}.run(cmd.Context())
		in.ExitCode, in.Success, in.ElapsedMS = res.exitCode, res.exitCode == 0, float64(res.elapsed.Microseconds())/1000
		in.Stdout, in.Stderr = res.stdout, res.stderr
		x, err := a.recordExec(in)
		if err != nil {
			return fmt.Errorf("%s exited %d but was not recorded: %w", args[0], res.exitCode, err)
		}
		return a.execOutcome(x, res, args[0])
	})
	return cmd
}

// execInput starts an exec record from the flags and FLOW_TASK_ID /
// FLOW_PLAN_ID; its result is filled in once the command has run.
func (a *app) execInput(t execTarget, wo writeOpts) flow.NewExec {
	return flow.NewExec{Task: a.subjectTask(t.task, t.step), Step: t.step, Plan: a.planDefault(t.plan), Success: true, Write: wo.write()}
}

// checkExec validates a record before its command runs, returning it
// normalized, with its project, and its task's title ("" for none).
func (a *app) checkExec(in flow.NewExec) (flow.NewExec, string, error) {
	var title string
	err := a.withEngine(true, func(s *session) error {
		in.Project = s.project
		var err error
		if in, err = s.eng.CheckExec(in); err != nil || in.Task == "" {
			return err
		}
		t, err := s.eng.Task(in.Project, in.Task)
		if err == nil {
			title = t.Title
		}
		return err
	})
	return in, title, err
}

func (a *app) recordExec(in flow.NewExec) (*projection.Exec, error) {
	var x *projection.Exec
	err := a.withEngine(false, func(s *session) error {
		in.Project = s.project
		var err error
		x, err = s.eng.RecordExec(in)
		return err
	})
	return x, err
}

// execEnv is flowctl's environment with the record's project, task (id
// and title, FLOW_TASK_NAME as seed 003 names it), step and plan set, so
// that flowctl commands run by the command find them.
func execEnv(in flow.NewExec, title string) []string {
	env := append(os.Environ(), "FLOW_PROJECT="+in.Project)
	if in.Task != "" {
		env = append(env, "FLOW_TASK_ID="+in.Task, "FLOW_TASK_NAME="+title)
	}
	if in.Step != "" {
		env = append(env, "FLOW_STEP_ID="+in.Step)
	}
	if in.Plan != "" {
		env = append(env, "FLOW_PLAN_ID="+in.Plan)
	}
	return env
}

// execOutcome reports a finished, recorded run: a line on stderr when it
// succeeded, else an error carrying the command's exit code.
func (a *app) execOutcome(x *projection.Exec, res teeResult, name string) error {
	switch {
	case res.startErr != nil:
		return exitStatus{fmt.Errorf("cannot run %s: %v (recorded %s with exit code %d)", name, res.startErr, x.ID, exitNotStarted), exitNotStarted, false}
	case res.exitCode != 0:
		return exitStatus{fmt.Errorf("%s exited with status %d (recorded %s)", name, res.exitCode, x.ID), res.exitCode, false}
	}
	if !a.g.quiet {
		fmt.Fprintf(a.stderr, "flowctl: recorded %s (exit 0, %s)\n", x.ID, fmtElapsed(x.ElapsedMS))
	}
	return nil
}

func fmtElapsed(ms float64) string {
	return (time.Duration(ms * float64(time.Millisecond))).Round(time.Millisecond).String()
}

func (a *app) execRecordCommand() *cobra.Command {
	var wo writeOpts
	cmd := &cobra.Command{
		Use:   "record JSON|@file|-",
		Short: "Record a command or code that was run elsewhere, given as JSON (the seeds' exec log shape)",
		Long: "record takes one JSON object with the fields code or command (one is required), stdout, stderr,\n" +
			"success and/or exit_code, elapsed_ms, added_vars, added_imports, cwd, task, step and plan.\n" +
			"A line of seed 003's exec log is taken as it is: task_id and plan_id for task and plan\n" +
			"(\"unknown\" and \"local\" name none), and timestamp, when it ran, kept as occurred_at.\n" +
			"Unknown fields are refused. task and plan default to FLOW_TASK_ID and FLOW_PLAN_ID.",
		Example: "  flowctl exec record '{\"code\":\"x = 1\",\"stdout\":\"\",\"stderr\":\"\",\"success\":true,\"elapsed_ms\":0.4}'\n" +
			"  tail -1 exec_log.jsonl | flowctl exec record -",
		Args: cobra.ExactArgs(1),
	}
	wo.addFlags(cmd)
	cmd.RunE = a.action(func(_ *cobra.Command, args []string) error {
		b, err := a.readInput(args[0])
		if err != nil {
			return err
		}
		in, err := flow.DecodeExec(b)
		if err != nil {
			return err
		}
		in.Task, in.Plan, in.Write = a.subjectTask(in.Task, in.Step), a.planDefault(in.Plan), wo.write()
		return a.withEngine(false, func(s *session) error {
			in.Project = s.project
			x, err := s.eng.RecordExec(in)
			if err != nil {
				return err
			}
			return a.printer().one(x, func(w io.Writer) { fmt.Fprintf(w, "Recorded %s (exit %d)\n", x.ID, x.ExitCode) })
		})
	})
	return cmd
}

func (a *app) execLsCommand() *cobra.Command {
	var f flow.ExecFilter
	cmd := &cobra.Command{
		Use:     "ls",
		Short:   "List exec records",
		Example: "  flowctl exec ls --task T-3\n  flowctl exec ls --failed -o json",
		Args:    cobra.NoArgs,
	}
	cmd.Flags().StringVar(&f.Task, "task", "", "only records of this task")
	cmd.Flags().BoolVar(&f.Failed, "failed", false, "only records that did not succeed")
	var limit int
	limitFlag(cmd, &limit, "records")
	cmd.RunE = a.action(func(*cobra.Command, []string) error {
		if err := checkLimit(limit); err != nil {
			return err
		}
		return a.withEngine(true, func(s *session) error {
			pg := a.page(limit, "records", "ID\tTASK\tEXIT\tELAPSED\tWHEN\tCOMMAND")
			err := s.eng.EachExec(s.project, f, func(x *projection.Exec) error {
				return pg.add(x, func() []string {
					return []string{x.ID, orDash(x.Task), strconv.Itoa(x.ExitCode), fmtElapsed(x.ElapsedMS), fmtTime(execWhen(x)), oneLine(execWhat(x), 60)}
				})
			})
			if err != nil {
				return err
			}
			return pg.end()
		})
	})
	return cmd
}

// execWhen is when a record's command ran: its occurred_at if it has
// one (an imported record), else when it was recorded.
func execWhen(x *projection.Exec) projection.Time {
	if !x.OccurredAt.IsZero() {
		return x.OccurredAt
	}
	return x.CreatedAt
}

// execWhat is the command line of a record, or its code.
func execWhat(x *projection.Exec) string {
	if x.Command != "" {
		return x.Command
	}
	return x.Code
}

// oneLine is the first line of s, cut to at most n runes.
func oneLine(s string, n int) string {
	s, _, more := strings.Cut(s, "\n")
	if r := []rune(s); len(r) > n {
		s, more = string(r[:n]), true
	}
	if more {
		s += "…"
	}
	return s
}

func (a *app) execShowCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "show X",
		Short:   "Show an exec record, with the kept stdout and stderr",
		Example: "  flowctl exec show X-4\n  flowctl exec show X-4 -o json | jq -r .stdout.head",
		Args:    cobra.ExactArgs(1),
		RunE: a.action(func(_ *cobra.Command, args []string) error {
			id, err := flow.ParseExecID(args[0])
			if err != nil {
				return err
			}
			return a.withEngine(true, func(s *session) error {
				x, err := s.eng.Exec(s.project, id)
				if err != nil {
					return err
				}
				return a.printer().one(x, func(w io.Writer) { writeExec(w, x) })
			})
		}),
	}
}

func writeExec(w io.Writer, x *projection.Exec) {
	result := "ok"
	if !x.Success {
		result = "failed"
	}
	fmt.Fprintf(w, "%s  exit %d (%s)  %s  v%d\n", x.ID, x.ExitCode, result, fmtElapsed(x.ElapsedMS), x.Version)
	fmt.Fprintf(w, "task: %s   step: %s   plan: %s\n", orDash(x.Task), orDash(x.Step), orDash(x.Plan))
	if x.Command != "" {
		fmt.Fprintf(w, "command: %s\n", printable(x.Command))
	}
	if x.Code != "" {
		fmt.Fprintf(w, "code:\n%s\n", printableBlock(x.Code))
	}
	fmt.Fprintf(w, "cwd: %s   git: %s\n", orDash(printable(x.Cwd)), orDash(x.GitHead))
	for _, kv := range [][2]string{{"added vars", strings.Join(x.AddedVars, ", ")}, {"added imports", strings.Join(x.AddedImports, ", ")}} {
		if kv[1] != "" {
			fmt.Fprintf(w, "%s: %s\n", kv[0], printable(kv[1]))
		}
	}
	fmt.Fprintf(w, "recorded by %s at %s", printable(x.Actor), fmtTime(x.CreatedAt))
	if !x.OccurredAt.IsZero() {
		fmt.Fprintf(w, ", ran at %s", fmtTime(x.OccurredAt))
	}
	fmt.Fprintln(w)
	writeOutput(w, "stdout", x.Stdout)
	writeOutput(w, "stderr", x.Stderr)
}

func writeOutput(w io.Writer, name string, o projection.Output) {
	fmt.Fprintf(w, "\n%s: %d bytes, sha256 %s\n", name, o.Bytes, o.SHA256)
	if o.Head == "" {
		return
	}
	fmt.Fprint(w, printableBlock(o.Head))
	if o.Tail != "" {
		if gap := o.Bytes - int64(len(o.Head)+len(o.Tail)); gap > 0 {
			fmt.Fprintf(w, "\n[... %d bytes not kept ...]\n", gap)
		}
		fmt.Fprint(w, printableBlock(o.Tail))
	}
	if !strings.HasSuffix(o.Head+o.Tail, "\n") {
		fmt.Fprintln(w)
	}
}

// printableBlock escapes control characters other than newlines and tabs,
// so that recorded output cannot move the cursor or recolour a terminal.
func printableBlock(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
