package flow

import (
	"errors"
	"math"
	"testing"
	"time"
)

// TestNumbers_AbsurdValuesRefused: exit codes outside 0-255, leases that
// are not positive or longer than MaxLease, approval expiries past
// MaxApprovalTTL, priorities outside 0-MaxPriority and elapsed times past
// a year are ErrInvalid on every front door, and append nothing.
func TestNumbers_AbsurdValuesRefused(t *testing.T) {
	e := textFixture(t)
	exec := func(code int, ms float64) func() error {
		return func() error {
			_, err := e.RecordExec(NewExec{Project: "p", Command: "x", ExitCode: code, Success: code == 0, ElapsedMS: ms})
			return err
		}
	}
	claim := func(d time.Duration) func() error {
		return func() error { _, err := e.ClaimTask(Claim{Project: "p", ID: "T-1", Lease: d}); return err }
	}
	priority := func(p int) func() error {
		return func() error { _, err := e.AddTask(NewTask{Project: "p", Title: "x", Priority: p}); return err }
	}
	edit := func(p int) func() error {
		return func() error { _, err := e.EditTask(TaskEdit{Project: "p", ID: "T-1", Priority: &p}); return err }
	}
	cases := map[string]func() error{
		"ExitCodeHuge":      exec(99999999999, 0),
		"ExitCode256":       exec(256, 0),
		"ExitCodeNegative":  exec(-1, 0),
		"ElapsedCenturies":  exec(0, 1e15),
		"LeaseNegative":     claim(-time.Minute),
		"LeaseTooLong":      claim(MaxLease + time.Second),
		"LeaseMillionHours": claim(1000000 * time.Hour),
		"HeartbeatTooLong": func() error {
			_, err := e.Heartbeat(Claim{Project: "p", ID: "T-1", Lease: MaxLease + time.Second})
			return err
		},
		"ExpiryTooFar": func() error {
			_, err := e.RequestApproval(NewApproval{Project: "p", Message: "m", TTL: MaxApprovalTTL + time.Second})
			return err
		},
		"ExpiryOverflow": func() error {
			_, err := e.RequestApproval(NewApproval{Project: "p", Message: "m", TTL: math.MaxInt64})
			return err
		},
		"PriorityNegative":     priority(-1),
		"PriorityHuge":         priority(MaxPriority + 1),
		"PriorityOverflow":     priority(math.MinInt),
		"EditPriorityNegative": edit(-5),
		"EditPriorityHuge":     edit(math.MaxInt),
		"ProgressOver100": func() error {
			p := 101
			_, err := e.MoveStep(StepMove{Project: "p", ID: "T-1.1", To: "in_progress", Progress: &p})
			return err
		},
	}
	before := len(collect(t, e, Filter{}))
	for name, try := range cases {
		if err := try(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s = %v, want ErrInvalid", name, err)
		}
	}
	if n := len(collect(t, e, Filter{})); n != before {
		t.Errorf("refused numbers appended %d events", n-before)
	}
	for name, try := range map[string]func() error{
		"ExitCode255": exec(255, 12.5), "ExitCode0": exec(0, 0), "LeaseMax": claim(MaxLease),
		"Priority0": priority(0), "PriorityMax": priority(MaxPriority),
	} {
		if err := try(); err != nil {
			t.Errorf("%s = %v, want it accepted", name, err)
		}
	}
}
