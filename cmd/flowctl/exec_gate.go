package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/spf13/cobra"
)

// execGate holds exec run's approval flags.
type execGate struct {
	require  bool
	ttl      time.Duration
	wait     bool
	timeout  time.Duration
	interval time.Duration
	message  string
}

func (g *execGate) addFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.BoolVar(&g.require, "require-approval", false, "run only with a granted, unused approval of exactly this command (else ask for one and exit 6)")
	fs.DurationVar(&g.ttl, "ttl", 0, "with --require-approval: how long a new request can be granted (default: never expires)")
	fs.BoolVar(&g.wait, "wait", false, "with --require-approval: wait for the decision, then run")
	fs.DurationVar(&g.timeout, "timeout", 10*time.Minute, "with --wait: how long to wait")
	fs.DurationVar(&g.interval, "interval", 500*time.Millisecond, "with --wait: time between polls")
	fs.StringVarP(&g.message, "message", "m", "", "with --require-approval: the request's message (default: run <command>)")
}

// unused refuses the gate's flags without --require-approval.
func (g *execGate) unused() error {
	if g.ttl != 0 || g.wait || g.message != "" {
		return usageError{errors.New("--ttl, --wait and --message go with --require-approval")}
	}
	return nil
}

// passGate lets the run go ahead only by using up a granted approval of
// exactly this action; otherwise it prints the pending request and
// returns ErrPending (exit 6), or with --wait waits for the decision.
func (a *app) passGate(ctx context.Context, g execGate, in flow.NewExec, argv []string) error {
	if g.timeout < 0 || g.interval <= 0 {
		return usageError{errors.New("--timeout must not be negative and --interval must be positive")}
	}
	action, err := flow.ExecActionJSON(argv, in.Cwd, in.Task)
	if err != nil {
		return err
	}
	msg := g.message
	if msg == "" {
		msg = "run " + oneLine(in.Command, 200)
	}
	gate := flow.Gate{Project: in.Project, Task: in.Task, Step: in.Step, Action: action, Message: msg, TTL: g.ttl}
	res, err := a.gate(gate)
	if err != nil || res.Passed {
		return err
	}
	if !g.wait {
		return a.gatePending(res)
	}
	if !a.g.quiet {
		fmt.Fprintf(a.stderr, "flowctl: waiting for approval %s (action sha256 %s)\n", res.Approval.ID, res.Approval.ActionHash)
	}
	if _, err := a.waitApproval(ctx, res.Approval.ID, g.timeout, g.interval); err != nil {
		return fmt.Errorf("%w; nothing ran", err)
	}
	if res, err = a.gate(gate); err != nil || res.Passed {
		return err
	}
	return a.gatePending(res) // granted, and used up by another run meanwhile
}

func (a *app) gate(in flow.Gate) (*flow.GateResult, error) {
	var res *flow.GateResult
	err := a.withEngine(false, func(s *session) error {
		var err error
		res, err = s.eng.PassApproval(in)
		return err
	})
	if err == nil && res.Passed && !a.g.quiet {
		fmt.Fprintf(a.stderr, "flowctl: approval %s used (action sha256 %s)\n", res.Approval.ID, res.Approval.ActionHash)
	}
	return res, err
}

// gatePending prints the request the run waits for and returns the
// pending error.
func (a *app) gatePending(res *flow.GateResult) error {
	ap := res.Approval
	verb := "reused the pending request"
	if res.Requested {
		verb = "requested"
	}
	err := a.printer().one(ap, func(w io.Writer) {
		fmt.Fprintf(w, "Approval %s %s: %s\naction sha256 %s\n", ap.ID, verb, printable(ap.Message), ap.ActionHash)
	})
	if err != nil {
		return err
	}
	return fmt.Errorf("%w: approval %s of this command is %s: nothing ran; once someone else grants it ('flowctl approval grant %s'), run this again",
		flow.ErrPending, ap.ID, ap.Status, ap.ID)
}
