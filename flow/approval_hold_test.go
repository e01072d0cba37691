package flow

import (
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// clock is a test clock that moves only when told to.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Millisecond) // event times stay distinct
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// holdFixture is apprFixture on an engine with a clock the test moves.
func holdFixture(t *testing.T) (*Engine, *clock) {
	t.Helper()
	c := &clock{t: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)}
	path := filepath.Join(t.TempDir(), DefaultDir, DefaultFile)
	e, err := Open(path, Options{Create: true, NoSync: true, Actor: "tester", Session: "s1", Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := e.Verify(); err != nil {
			t.Errorf("Verify on cleanup: %v", err)
		}
		e.Close()
	})
	if _, err := e.CreateProject(NewProject{Name: "website"}); err != nil {
		t.Fatal(err)
	}
	apprTask(t, e, "build")
	if _, err := e.MoveTask(Move{Project: "website", ID: "T-1", To: projection.StatusDoing}); err != nil {
		t.Fatal(err)
	}
	return e, c
}

func TestDecideApproval_SelfDecision(t *testing.T) {
	for _, grant := range []bool{true, false} {
		e := apprFixture(t)
		apprRequest(t, e, NewApproval{Task: "T-1"})
		before := apprCount(t, e)
		_, err := e.DecideApproval(Decision{Project: "website", ID: "A-1", Grant: grant})
		if !errors.Is(err, ErrSelfDecision) || !errors.Is(err, store.ErrConflict) {
			t.Errorf("grant=%t by the requester: %v, want ErrSelfDecision (a conflict)", grant, err)
		}
		if n := apprCount(t, e); n != before {
			t.Errorf("grant=%t: %d events after the refusal, want %d", grant, n, before)
		}
	}
}

func TestDecideApproval_SelfGrantAllowed(t *testing.T) {
	e := apprFixture(t)
	apprRequest(t, e, NewApproval{Task: "T-1"})
	p, err := e.SetProjectSetting(SetSetting{Project: "website", Key: SettingSelfGrant, Value: "allow"})
	if err != nil {
		t.Fatal(err)
	}
	if got := ProjectSettings(p)[SettingSelfGrant]; got != "allow" {
		t.Errorf("setting after set = %q, want allow", got)
	}
	if evs := collect(t, e, Filter{Type: projection.TypeProjectSettingChanged}); len(evs) != 1 || evs[0].Stream != "project/website" {
		t.Errorf("setting events = %+v, want one on the project's stream", evs)
	}
	before := apprCount(t, e)
	if _, err := e.SetProjectSetting(SetSetting{Project: "website", Key: SettingSelfGrant, Value: "allow"}); err != nil {
		t.Fatal(err)
	}
	if n := apprCount(t, e); n != before {
		t.Errorf("setting the same value appended %d events", n-before)
	}
	a, err := e.DecideApproval(Decision{Project: "website", ID: "A-1", Grant: true})
	if err != nil || a.Status != projection.ApprovalGranted || a.DecidedBy != "tester" {
		t.Fatalf("self-grant with the setting: %+v, %v", a, err)
	}
	// Back to deny: refused again.
	if _, err := e.SetProjectSetting(SetSetting{Project: "website", Key: SettingSelfGrant, Value: "deny"}); err != nil {
		t.Fatal(err)
	}
	apprRequest(t, e, NewApproval{Task: "T-1"})
	if _, err := e.DecideApproval(Decision{Project: "website", ID: "A-2", Grant: true}); !errors.Is(err, ErrSelfDecision) {
		t.Errorf("after deny: %v, want ErrSelfDecision", err)
	}
}

func TestSetProjectSetting_Invalid(t *testing.T) {
	e := apprFixture(t)
	for _, in := range []SetSetting{
		{Project: "website", Key: "approvals.nope", Value: "allow"},
		{Project: "website", Key: SettingSelfGrant, Value: "yes"},
	} {
		if _, err := e.SetProjectSetting(in); !errors.Is(err, ErrInvalid) {
			t.Errorf("SetProjectSetting(%+v) = %v, want ErrInvalid", in, err)
		}
	}
	if _, err := e.SetProjectSetting(SetSetting{Project: "nope", Key: SettingSelfGrant, Value: "allow"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown project: %v, want ErrNotFound", err)
	}
}

func TestApproval_ExpiredShowsAndCannotBeGranted(t *testing.T) {
	e, c := holdFixture(t)
	apprRequest(t, e, NewApproval{Task: "T-1", TTL: time.Hour})
	apprRequest(t, e, NewApproval{Task: "T-1"})
	if a, _ := e.Approval("website", "A-1"); a.Status != projection.ApprovalPending {
		t.Fatalf("before the expiry: %s, want pending", a.Status)
	}
	c.advance(2 * time.Hour)
	a, err := e.Approval("website", "A-1")
	if err != nil || a.Status != ApprovalStatusExpired {
		t.Errorf("after the expiry: %+v, %v; want status expired", a, err)
	}
	ids := func(status string) []string {
		var out []string
		as, err := e.Approvals("website", ApprovalFilter{Status: status})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range as {
			out = append(out, a.ID+":"+a.Status)
		}
		return out
	}
	if got := ids(ApprovalStatusExpired); len(got) != 1 || got[0] != "A-1:expired" {
		t.Errorf("expired = %v, want [A-1:expired]", got)
	}
	if got := ids(projection.ApprovalPending); len(got) != 1 || got[0] != "A-2:pending" {
		t.Errorf("pending = %v, want [A-2:pending]", got)
	}
	if got := ids(""); len(got) != 2 || got[0] != "A-1:expired" {
		t.Errorf("all = %v, want A-1 expired first", got)
	}
	st, err := e.Status("website")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.PendingApprovals) != 2 || st.PendingApprovals[0].Status != ApprovalStatusExpired || st.PendingApprovals[1].Status != "pending" {
		t.Errorf("status pending approvals = %+v", st.PendingApprovals)
	}
	before := apprCount(t, e)
	if _, err := e.As("reviewer", "").DecideApproval(Decision{Project: "website", ID: "A-1", Grant: true}); !errors.Is(err, ErrExpired) {
		t.Errorf("grant of an expired request: %v, want ErrExpired", err)
	}
	if n := apprCount(t, e); n != before {
		t.Errorf("the refused grant appended %d events", n-before)
	}
	if _, err := e.PollApproval("website", "A-1"); !errors.Is(err, ErrExpired) {
		t.Errorf("poll: %v, want ErrExpired", err)
	}
}

func TestPassApproval_RunsOnceForExactlyTheAction(t *testing.T) {
	e, c := holdFixture(t)
	action := func(argv []string, cwd string) string {
		s, err := ExecActionJSON(argv, cwd, "T-1")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	deploy := action([]string{"make", "deploy"}, "/src")
	gate := func(act string) *GateResult {
		t.Helper()
		r, err := e.PassApproval(Gate{Project: "website", Task: "T-1", Action: act, Message: "run it?", TTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := gate(deploy)
	if r.Passed || !r.Requested || r.Approval.ID != "A-1" || r.Approval.ActionHash != ActionHash([]byte(deploy)) {
		t.Fatalf("first gate = %+v, want a new request A-1", r)
	}
	before := apprCount(t, e)
	if r = gate(deploy); r.Passed || r.Requested || r.Approval.ID != "A-1" {
		t.Errorf("second gate = %+v, want A-1 reused", r)
	}
	if n := apprCount(t, e); n != before {
		t.Errorf("reusing the pending request appended %d events", n-before)
	}
	if _, err := e.As("reviewer", "").DecideApproval(Decision{Project: "website", ID: "A-1", Grant: true}); err != nil {
		t.Fatal(err)
	}
	for _, other := range []string{action([]string{"make", "deploy", "-n"}, "/src"), action([]string{"make", "deploy"}, "/elsewhere")} {
		if r = gate(other); r.Passed || !r.Requested {
			t.Errorf("another action = %+v, want a new request, not a pass", r)
		}
	}
	r = gate(deploy)
	if !r.Passed || r.Approval.ID != "A-1" || r.Approval.UsedAt.IsZero() || r.Approval.UsedBy != "tester" {
		t.Fatalf("gate after the grant = %+v, want A-1 passed and used", r)
	}
	if evs := collect(t, e, Filter{Type: projection.TypeApprovalConsumed}); len(evs) != 1 || evs[0].Stream != "task/website/T-1" {
		t.Errorf("consumed events = %+v, want one on the task's stream", evs)
	}
	if r = gate(deploy); r.Passed || !r.Requested {
		t.Errorf("gate after the one use = %+v, want a new request", r)
	}
	// A grant that expired before it was used lets nothing through.
	id := r.Approval.ID
	if _, err := e.As("reviewer", "").DecideApproval(Decision{Project: "website", ID: id, Grant: true}); err != nil {
		t.Fatal(err)
	}
	c.advance(2 * time.Hour)
	if r = gate(deploy); r.Passed || !r.Requested {
		t.Errorf("gate with an expired grant = %+v, want a new request", r)
	}
}

func TestMoveTask_ForceNeverPassesAPendingApproval(t *testing.T) {
	e := apprFixture(t)
	apprRequest(t, e, NewApproval{Task: "T-1"})
	before := apprCount(t, e)
	if _, err := e.MoveTask(Move{Project: "website", ID: "T-1", To: projection.StatusDone, Force: true}); !errors.Is(err, ErrPending) {
		t.Errorf("forced done: %v, want ErrPending", err)
	}
	if _, _, err := e.UpdateTask(TaskUpdate{Project: "website", ID: "T-1", Status: projection.StatusDone, Force: true}); !errors.Is(err, ErrPending) {
		t.Errorf("forced update to done: %v, want ErrPending", err)
	}
	if n := apprCount(t, e); n != before {
		t.Errorf("the refusals appended %d events", n-before)
	}
}
