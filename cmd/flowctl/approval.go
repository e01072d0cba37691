package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
	"github.com/spf13/cobra"
)

func (a *app) approvalCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "approval",
		Short: "Ask for, decide, wait for and check approvals of proposed actions",
		Long: "An approval binds a decision to the SHA-256 of a proposed action (JSON). 'approval check'\n" +
			"exits 0 only when the approval is granted for exactly that action.",
	}
	cmd.AddCommand(a.approvalRequestCommand(), a.approvalLsCommand(), a.approvalShowCommand(),
		a.approvalDecideCommand(true), a.approvalDecideCommand(false), a.approvalWaitCommand(), a.approvalCheckCommand())
	return cmd
}

// subjectTask returns the task an approval or exec record is about: the
// flag, else none when a step names it, else FLOW_TASK_ID.
func (a *app) subjectTask(flag, step string) string {
	if flag != "" || step != "" {
		return flag
	}
	return a.getenv("FLOW_TASK_ID")
}

func (a *app) approvalRequestCommand() *cobra.Command {
	var in flow.NewApproval
	var action string
	var wo writeOpts
	cmd := &cobra.Command{
		Use:   "request --message M [--task T] [--step T-n.m] [--action JSON|@file|-] [--expires 1h]",
		Short: "Ask for an approval (A-n) of a proposed action",
		Example: "  flowctl approval request --task T-3 --message 'deploy to prod?' --action @deploy.json --expires 1h\n" +
			"  echo '{\"cmd\":\"rm -rf build\"}' | flowctl approval request -m 'clean?' --action -",
		Args: cobra.NoArgs,
	}
	fs := cmd.Flags()
	fs.StringVarP(&in.Message, "message", "m", "", "what is asked (required)")
	fs.StringVar(&in.Task, "task", "", "task the approval is about (env FLOW_TASK_ID); none: the project")
	fs.StringVar(&in.Step, "step", "", "step the approval is about (T-n.m)")
	fs.StringVar(&in.Code, "code", "", "code the action would run, for the reviewer")
	fs.StringVar(&action, "action", "", "the proposed action: JSON, @file, or - for stdin; bound by its exact bytes")
	fs.DurationVar(&in.TTL, "expires", 0, "how long the request can be granted, e.g. 1h (default: never expires)")
	fs.DurationVar(&in.TTL, "ttl", 0, "the same as --expires")
	cmd.MarkFlagRequired("message")
	wo.addFlags(cmd)
	cmd.RunE = a.action(func(*cobra.Command, []string) error {
		in.Task, in.Write = a.subjectTask(in.Task, in.Step), wo.write()
		if action != "" {
			b, err := a.readInput(action)
			if err != nil {
				return err
			}
			in.Action = string(b)
		}
		return a.withEngine(false, func(s *session) error {
			in.Project = s.project
			ap, err := s.eng.RequestApproval(in)
			if err != nil {
				return err
			}
			return a.printer().one(ap, func(w io.Writer) {
				fmt.Fprintf(w, "Requested approval %s: %s\n", ap.ID, printable(ap.Message))
			})
		})
	})
	return cmd
}

func (a *app) approvalLsCommand() *cobra.Command {
	var f flow.ApprovalFilter
	cmd := &cobra.Command{
		Use:     "ls",
		Short:   "List approvals",
		Example: "  flowctl approval ls --status pending\n  flowctl approval ls --task T-3 -o json",
		Args:    cobra.NoArgs,
	}
	enumVar(cmd.Flags(), &f.Status, "status", "", approvalStatuses, "only approvals with this status: pending, expired, granted or denied")
	cmd.Flags().StringVar(&f.Task, "task", "", "only approvals of this task")
	var limit int
	limitFlag(cmd, &limit, "approvals")
	cmd.RunE = a.action(func(*cobra.Command, []string) error {
		if err := checkLimit(limit); err != nil {
			return err
		}
		return a.withEngine(true, func(s *session) error {
			pg := a.page(limit, "approvals", "ID\tSTATUS\tTASK\tSTEP\tEXPIRES\tMESSAGE")
			err := s.eng.EachApproval(s.project, f, func(ap *projection.Approval) error {
				return pg.add(ap, func() []string {
					return []string{ap.ID, approvalStatus(ap), orDash(ap.Task), orDash(ap.Step), fmtTime(ap.Expires), ap.Message}
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

// approvalStatus is the status for people: the engine's reads already
// show a pending approval past its expiry as "expired".
func approvalStatus(ap *projection.Approval) string { return ap.Status }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// approvalArg parses the approval id argument.
func approvalArg(args []string) (string, error) { return flow.ParseApprovalID(args[0]) }

func (a *app) approvalShowCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "show A",
		Short:   "Show an approval, with its action",
		Example: "  flowctl approval show A-2\n  flowctl approval show A-2 -o json | jq .action",
		Args:    cobra.ExactArgs(1),
		RunE: a.action(func(_ *cobra.Command, args []string) error {
			id, err := approvalArg(args)
			if err != nil {
				return err
			}
			return a.withEngine(true, func(s *session) error {
				ap, err := s.eng.Approval(s.project, id)
				if err != nil {
					return err
				}
				return a.printer().one(ap, func(w io.Writer) { writeApproval(w, ap) })
			})
		}),
	}
}

func writeApproval(w io.Writer, ap *projection.Approval) {
	fmt.Fprintf(w, "%s  [%s]  v%d\n", ap.ID, approvalStatus(ap), ap.Version)
	fmt.Fprintf(w, "message: %s\n", printable(ap.Message))
	if ap.Task != "" {
		fmt.Fprintf(w, "task: %s", ap.Task)
		if ap.Step != "" {
			fmt.Fprintf(w, "   step: %s", ap.Step)
		}
		fmt.Fprintln(w)
	}
	if ap.Code != "" {
		fmt.Fprintf(w, "code: %s\n", printable(ap.Code))
	}
	if ap.Action != "" {
		fmt.Fprintf(w, "action: %s\n", printable(string(ap.Action)))
	}
	fmt.Fprintf(w, "action sha256: %s\n", ap.ActionHash)
	if !ap.Expires.IsZero() {
		fmt.Fprintf(w, "expires: %s\n", fmtTime(ap.Expires))
	}
	fmt.Fprintf(w, "requested by %s at %s\n", printable(ap.RequestedBy), fmtTime(ap.CreatedAt))
	if ap.Status != projection.ApprovalPending && ap.Status != flow.ApprovalStatusExpired {
		fmt.Fprintf(w, "%s by %s at %s", ap.Status, printable(ap.DecidedBy), fmtTime(ap.DecidedAt))
		if ap.Comment != "" {
			fmt.Fprintf(w, ": %s", printable(ap.Comment))
		}
		fmt.Fprintln(w)
	}
	if !ap.UsedAt.IsZero() {
		fmt.Fprintf(w, "used by %s at %s\n", printable(ap.UsedBy), fmtTime(ap.UsedAt))
	}
}

func (a *app) approvalDecideCommand(grant bool) *cobra.Command {
	var comment string
	var wo writeOpts
	name, short, done := "deny", "Deny a pending approval", "Denied"
	if grant {
		name, short, done = "grant", "Grant a pending approval (not once it has expired, nor your own request)", "Granted"
	}
	cmd := &cobra.Command{
		Use:     name + " A",
		Short:   short,
		Example: fmt.Sprintf("  flowctl approval %s A-2 --comment 'checked the plan'", name),
		Args:    cobra.ExactArgs(1),
	}
	cmd.Flags().StringVar(&comment, "comment", "", "why (recorded)")
	wo.addFlags(cmd)
	cmd.RunE = a.action(func(_ *cobra.Command, args []string) error {
		id, err := approvalArg(args)
		if err != nil {
			return err
		}
		return a.withEngine(false, func(s *session) error {
			ap, err := s.eng.DecideApproval(flow.Decision{Project: s.project, ID: id, Grant: grant, Comment: comment, Write: wo.write()})
			if err != nil {
				return err
			}
			return a.printer().one(ap, func(w io.Writer) { fmt.Fprintf(w, "%s %s: %s\n", done, ap.ID, printable(ap.Message)) })
		})
	})
	return cmd
}

func (a *app) approvalWaitCommand() *cobra.Command {
	var timeout, interval time.Duration
	cmd := &cobra.Command{
		Use:   "wait A [--timeout 30s] [--interval 200ms]",
		Short: "Wait for a decision: exit 0 granted, 4 denied or expired, 6 still pending at the timeout",
		Long: "wait polls the approval, opening the file read-only for each poll and closing it in between,\n" +
			"so it never keeps writers waiting. It prints the approval as it last saw it.",
		Example: "  flowctl approval wait A-2 --timeout 10m && ./deploy.sh",
		Args:    cobra.ExactArgs(1),
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 30*time.Second, "how long to wait; 0 polls once")
	cmd.Flags().DurationVar(&interval, "interval", 200*time.Millisecond, "time between polls")
	cmd.RunE = a.action(func(cmd *cobra.Command, args []string) error {
		id, err := approvalArg(args)
		if err != nil {
			return err
		}
		if timeout < 0 || interval <= 0 {
			return usageError{errors.New("--timeout must not be negative and --interval must be positive")}
		}
		ap, err := a.waitApproval(cmd.Context(), id, timeout, interval)
		if ap == nil {
			return err
		}
		if perr := a.printApproval(ap); perr != nil {
			return perr
		}
		return err
	})
	return cmd
}

// waitApproval polls until the approval is decided (or expired), the
// timeout passes or ctx ends, with a fresh read-only engine per poll.
func (a *app) waitApproval(ctx context.Context, id string, timeout, interval time.Duration) (*projection.Approval, error) {
	deadline := time.Now().Add(timeout)
	for {
		ap, err := a.pollApproval(id)
		if !errors.Is(err, flow.ErrPending) {
			return ap, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return ap, fmt.Errorf("%w after waiting %s", err, timeout)
		}
		t := time.NewTimer(min(interval, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return ap, fmt.Errorf("%w (interrupted)", err)
		case <-t.C:
		}
	}
}

func (a *app) pollApproval(id string) (*projection.Approval, error) {
	var ap *projection.Approval
	var state error
	err := a.withEngine(true, func(s *session) error {
		var err error
		ap, err = s.eng.PollApproval(s.project, id)
		if ap != nil {
			state, err = err, nil
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return ap, state
}

func (a *app) printApproval(ap *projection.Approval) error {
	return a.printer().one(ap, func(w io.Writer) {
		fmt.Fprintf(w, "%s %s", ap.ID, approvalStatus(ap))
		if ap.DecidedBy != "" {
			fmt.Fprintf(w, " by %s", printable(ap.DecidedBy))
		}
		if ap.Comment != "" {
			fmt.Fprintf(w, ": %s", printable(ap.Comment))
		}
		fmt.Fprintln(w)
	})
}

func (a *app) approvalCheckCommand() *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "check A --action FILE",
		Short: "Exit 0 only if the approval is granted for exactly this action (4 denied or other action, 6 pending)",
		Long: "check compares the SHA-256 of FILE's exact bytes (- for stdin) with the hash of the action the\n" +
			"approval was requested for. An approval requested without an action matches an empty file.",
		Example: "  flowctl approval check A-2 --action deploy.json && ./deploy.sh deploy.json",
		Args:    cobra.ExactArgs(1),
	}
	cmd.Flags().StringVar(&file, "action", "", "file holding the action to check, or - for stdin (required)")
	cmd.MarkFlagRequired("action")
	cmd.RunE = a.action(func(_ *cobra.Command, args []string) error {
		id, err := approvalArg(args)
		if err != nil {
			return err
		}
		sum, err := a.hashInput(file)
		if err != nil {
			return err
		}
		return a.withEngine(true, func(s *session) error {
			ap, err := s.eng.CheckApproval(s.project, id, sum)
			if err != nil {
				return err
			}
			return a.printer().one(ap, func(w io.Writer) {
				fmt.Fprintf(w, "%s is granted for this action (sha256 %s)\n", ap.ID, sum)
			})
		})
	})
	return cmd
}

// hashInput returns the hex SHA-256 of a file's exact bytes, or stdin's.
func (a *app) hashInput(name string) (string, error) {
	var r io.Reader = a.stdin
	if name != "-" {
		f, err := os.Open(a.abs(name))
		if err != nil {
			return "", err
		}
		defer f.Close()
		r = f
	}
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
