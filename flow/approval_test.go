package flow

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/projection"
)

// apprFixture opens an engine with project "website" and task T-1 (doing).
func apprFixture(t *testing.T) *Engine {
	t.Helper()
	e := mustOpen(t)
	if _, err := e.CreateProject(NewProject{Name: "website"}); err != nil {
		t.Fatal(err)
	}
	apprTask(t, e, "build")
	if _, err := e.MoveTask(Move{Project: "website", ID: "T-1", To: projection.StatusDoing}); err != nil {
		t.Fatal(err)
	}
	return e
}

// apprTask adds a task to "website" and returns its id.
func apprTask(t *testing.T, e *Engine, title string) string {
	t.Helper()
	tk, err := e.AddTask(NewTask{Project: "website", Title: title})
	if err != nil {
		t.Fatal(err)
	}
	return tk.ID
}

// apprAddStep appends a step.added event to a task, as the step commands
// do, and returns the step id.
func apprAddStep(t *testing.T, e *Engine, task string) string {
	t.Helper()
	tk, err := e.Task("website", task)
	if err != nil {
		t.Fatal(err)
	}
	id := projection.StepID(task, len(tk.Steps)+1)
	_, err = e.command(Write{}, "test.step", id, func(w *writer) (Ref, error) {
		_, err := w.emit(projection.TaskStream("website", task), eventlog.Any, "website", projection.TypeStepAdded,
			projection.StepAdded{ID: id, Title: "a step"})
		return Ref{}, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func apprRequest(t *testing.T, e *Engine, in NewApproval) *projection.Approval {
	t.Helper()
	in.Project = "website"
	if in.Message == "" {
		in.Message = "may I?"
	}
	a, err := e.RequestApproval(in)
	if err != nil {
		t.Fatalf("RequestApproval(%+v): %v", in, err)
	}
	return a
}

func apprDecide(t *testing.T, e *Engine, id string, grant bool) *projection.Approval {
	t.Helper()
	a, err := e.As("reviewer", "r1").DecideApproval(Decision{Project: "website", ID: id, Grant: grant, Comment: "ok"})
	if err != nil {
		t.Fatalf("DecideApproval(%s, %t): %v", id, grant, err)
	}
	return a
}

// apprCount returns the number of events in the file.
func apprCount(t *testing.T, e *Engine) int {
	t.Helper()
	return len(collect(t, e, Filter{}))
}

func TestEngine_RequestApproval(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		e := apprFixture(t)
		action := "{ \"cmd\": \"deploy\",\n  \"to\": \"prod\" }\n"
		a := apprRequest(t, e, NewApproval{Task: "T-1", Message: "deploy?", Code: "make deploy", Action: action})
		if a.ID != "A-1" || a.Task != "T-1" || a.Status != projection.ApprovalPending || a.RequestedBy != "tester" ||
			a.Message != "deploy?" || a.Code != "make deploy" || !a.Expires.IsZero() {
			t.Errorf("approval = %+v", a)
		}
		if string(a.Action) != action {
			t.Errorf("action = %q, want it exactly as given %q", a.Action, action)
		}
		if a.ActionHash != ActionHash([]byte(action)) || len(a.ActionHash) != 64 {
			t.Errorf("action hash = %q, want the SHA-256 of the exact bytes", a.ActionHash)
		}
		b := apprRequest(t, e, NewApproval{})
		if b.ID != "A-2" || b.Task != "" || b.ActionHash != ActionHash(nil) {
			t.Errorf("second approval = %+v, want A-2 of the project bound to the empty action", b)
		}
		tk, _ := e.Task("website", "T-1")
		if !slices.Equal(tk.PendingApprovals, []string{"A-1"}) {
			t.Errorf("pending approvals = %v, want [A-1]", tk.PendingApprovals)
		}
		p, _ := e.Project("website")
		if p.Counters.Approvals != 2 {
			t.Errorf("approval counter = %d, want 2", p.Counters.Approvals)
		}
	})
	t.Run("Streams", func(t *testing.T) {
		e := apprFixture(t)
		apprRequest(t, e, NewApproval{Task: "T-1"})
		apprRequest(t, e, NewApproval{})
		onTask := collect(t, e, Filter{Stream: "task/website/T-1", Type: projection.TypeApprovalRequested})
		onProject := collect(t, e, Filter{Stream: "project/website", Type: projection.TypeApprovalRequested})
		if len(onTask) != 1 || !strings.Contains(string(onTask[0].Data), `"A-1"`) {
			t.Errorf("task stream approvals = %+v, want A-1", onTask)
		}
		if len(onProject) != 1 || !strings.Contains(string(onProject[0].Data), `"A-2"`) {
			t.Errorf("project stream approvals = %+v, want A-2", onProject)
		}
	})
	t.Run("StepNamesItsTask", func(t *testing.T) {
		e := apprFixture(t)
		step := apprAddStep(t, e, "T-1")
		a := apprRequest(t, e, NewApproval{Step: step})
		if a.Task != "T-1" || a.Step != "T-1.1" {
			t.Errorf("approval task, step = %s, %s; want T-1, T-1.1", a.Task, a.Step)
		}
	})
	t.Run("Expires", func(t *testing.T) {
		e := apprFixture(t)
		a := apprRequest(t, e, NewApproval{TTL: time.Hour})
		created := a.CreatedAt.Std()
		if exp := a.Expires.Std(); !exp.After(created.Add(time.Hour-time.Minute)) || exp.After(created.Add(time.Hour)) {
			t.Errorf("expires = %s, want about an hour after %s", exp, created)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		e := apprFixture(t)
		before := apprCount(t, e)
		bad := map[string]NewApproval{
			"empty message":      {Message: " "},
			"invalid UTF-8":      {Message: "a\xffb"},
			"action not JSON":    {Message: "m", Action: "{nope"},
			"action dup keys":    {Message: "m", Action: `{"a":1,"a":2}`},
			"action two values":  {Message: "m", Action: `{} {}`},
			"negative TTL":       {Message: "m", TTL: -time.Second},
			"bad task id":        {Message: "m", Task: "X-1"},
			"bad step id":        {Message: "m", Step: "T-1"},
			"step of other task": {Message: "m", Task: "T-2", Step: "T-1.1"},
		}
		for name, in := range bad {
			in.Project = "website"
			if _, err := e.RequestApproval(in); !errors.Is(err, ErrInvalid) || ErrorCode(err) != CodeInvalid {
				t.Errorf("%s: err = %v, want ErrInvalid", name, err)
			}
		}
		if got := apprCount(t, e); got != before {
			t.Errorf("bad requests appended %d events", got-before)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		e := apprFixture(t)
		for _, in := range []NewApproval{
			{Project: "website", Message: "m", Task: "T-9"},
			{Project: "website", Message: "m", Step: "T-1.4"},
			{Project: "nope", Message: "m"},
		} {
			if _, err := e.RequestApproval(in); !errors.Is(err, ErrNotFound) {
				t.Errorf("RequestApproval(%+v) = %v, want ErrNotFound", in, err)
			}
		}
	})
	t.Run("ErrConflict", func(t *testing.T) {
		e := apprFixture(t)
		if _, err := e.MoveTask(Move{Project: "website", ID: "T-1", To: projection.StatusDone}); err != nil {
			t.Fatal(err)
		}
		_, err := e.RequestApproval(NewApproval{Project: "website", Task: "T-1", Message: "m"})
		if ErrorCode(err) != CodeConflict || !strings.Contains(err.Error(), "done") {
			t.Errorf("request on a done task = %v, want a conflict naming its status", err)
		}
		apprTask(t, e, "other")
		_, err = e.RequestApproval(NewApproval{Project: "website", Task: "T-2", Message: "m", Write: Write{IfVersion: 7}})
		if ErrorCode(err) != CodeConflict {
			t.Errorf("stale --if-version = %v, want conflict", err)
		}
	})
}

func TestEngine_DecideApproval(t *testing.T) {
	t.Run("Grant", func(t *testing.T) {
		e := apprFixture(t)
		apprRequest(t, e, NewApproval{Task: "T-1"})
		a := apprDecide(t, e, "A-1", true)
		if a.Status != projection.ApprovalGranted || a.DecidedBy != "reviewer" || a.Comment != "ok" || a.DecidedAt.IsZero() {
			t.Errorf("granted approval = %+v", a)
		}
		tk, _ := e.Task("website", "T-1")
		if len(tk.PendingApprovals) != 0 {
			t.Errorf("pending approvals after the grant = %v, want none", tk.PendingApprovals)
		}
		evs := collect(t, e, Filter{Type: projection.TypeApprovalDecided})
		if len(evs) != 1 || evs[0].Stream != "task/website/T-1" || !strings.Contains(string(evs[0].Data), `"granted"`) {
			t.Errorf("decision events = %+v, want one on the task's stream", evs)
		}
	})
	t.Run("DenyOnProjectStream", func(t *testing.T) {
		e := apprFixture(t)
		apprRequest(t, e, NewApproval{})
		a := apprDecide(t, e, "A-1", false)
		if a.Status != projection.ApprovalDenied {
			t.Errorf("status = %s, want denied", a.Status)
		}
		evs := collect(t, e, Filter{Type: projection.TypeApprovalDecided})
		if len(evs) != 1 || evs[0].Stream != "project/website" {
			t.Errorf("decision events = %+v, want one on the project's stream", evs)
		}
	})
	t.Run("ErrConflictDecided", func(t *testing.T) {
		e := apprFixture(t)
		apprRequest(t, e, NewApproval{})
		apprDecide(t, e, "A-1", true)
		before := apprCount(t, e)
		for _, grant := range []bool{true, false} {
			_, err := e.As("reviewer", "r1").DecideApproval(Decision{Project: "website", ID: "A-1", Grant: grant})
			if ErrorCode(err) != CodeConflict || !strings.Contains(err.Error(), "already granted") {
				t.Errorf("deciding a granted approval (grant %t) = %v, want conflict", grant, err)
			}
		}
		if apprCount(t, e) != before {
			t.Errorf("refused decisions appended events")
		}
	})
	t.Run("ErrExpired", func(t *testing.T) {
		e := apprFixture(t)
		apprRequest(t, e, NewApproval{TTL: time.Second})
		_, err := e.As("reviewer", "r1").DecideApproval(Decision{Project: "website", ID: "A-1", Grant: true})
		if !errors.Is(err, ErrExpired) || ErrorCode(err) != CodeConflict {
			t.Fatalf("granting an expired approval = %v, want ErrExpired", err)
		}
		if a := apprDecide(t, e, "A-1", false); a.Status != projection.ApprovalDenied {
			t.Errorf("denying an expired approval: status %s, want denied", a.Status)
		}
	})
	t.Run("NotExpiredYet", func(t *testing.T) {
		e := apprFixture(t)
		apprRequest(t, e, NewApproval{TTL: time.Hour})
		if a := apprDecide(t, e, "A-1", true); a.Status != projection.ApprovalGranted {
			t.Errorf("status = %s, want granted", a.Status)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		e := apprFixture(t)
		_, err := e.As("reviewer", "r1").DecideApproval(Decision{Project: "website", ID: "A-9", Grant: true})
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("deciding A-9 = %v, want ErrNotFound", err)
		}
	})
	t.Run("IfVersion", func(t *testing.T) {
		e := apprFixture(t)
		a := apprRequest(t, e, NewApproval{Task: "T-1"})
		_, err := e.As("reviewer", "r1").DecideApproval(Decision{Project: "website", ID: "A-1", Grant: true, Write: Write{IfVersion: a.Version + 1}})
		if ErrorCode(err) != CodeConflict {
			t.Fatalf("stale --if-version = %v, want conflict", err)
		}
		got, err := e.As("reviewer", "r1").DecideApproval(Decision{Project: "website", ID: "A-1", Grant: true, Write: Write{IfVersion: a.Version}})
		if err != nil || got.Status != projection.ApprovalGranted || got.Version <= a.Version {
			t.Errorf("decide at the current version = %+v, %v", got, err)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		e := apprFixture(t)
		apprRequest(t, e, NewApproval{})
		_, err := e.As("reviewer", "r1").DecideApproval(Decision{Project: "website", ID: "A-1", Comment: "bad \xff"})
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("invalid comment = %v, want ErrInvalid", err)
		}
	})
}

// TestEngine_PendingApprovalBlocksDone: an undecided approval keeps its
// task from done, forced or not, alone or in a batch (ErrPending, exit 6),
// and the file is left as it was; once decided, done goes through.
func TestEngine_PendingApprovalBlocksDone(t *testing.T) {
	e := apprFixture(t)
	apprRequest(t, e, NewApproval{Task: "T-1"})
	step := apprAddStep(t, e, "T-1")
	if _, err := e.MoveStep(StepMove{Project: "website", ID: step, To: projection.StepInProgress}); err != nil {
		t.Fatal(err)
	}
	before := apprCount(t, e)
	done := Move{Project: "website", ID: "T-1", To: projection.StatusDone}
	forced := done
	forced.Force = true
	batched := func(m Move) error {
		return e.Batch(func(b *Engine) error { _, err := b.MoveTask(m); return err })
	}
	for name, try := range map[string]func() error{
		"Plain":       func() error { _, err := e.MoveTask(done); return err },
		"Forced":      func() error { _, err := e.MoveTask(forced); return err },
		"ForcedBatch": func() error { return batched(forced) },
		"PlainBatch":  func() error { return batched(done) },
	} {
		err := try()
		if !errors.Is(err, ErrPending) || ErrorCode(err) != CodePending || !strings.Contains(err.Error(), "A-1") {
			t.Errorf("%s: done with A-1 pending = %v, want ErrPending naming A-1", name, err)
		}
	}
	if n := apprCount(t, e); n != before {
		t.Fatalf("refused moves appended %d events", n-before)
	}
	apprDecide(t, e, "A-1", false)
	if tk, err := e.MoveTask(done); !errors.Is(err, ErrBlocked) || tk != nil {
		t.Errorf("done with a running step = %+v, %v; want ErrBlocked", tk, err)
	}
	if tk, err := e.MoveTask(forced); err != nil || tk.Status != projection.StatusDone || !tk.Forced {
		t.Errorf("forced done past a running step after the decision = %+v, %v", tk, err)
	}
}

func TestEngine_PollApproval(t *testing.T) {
	e := apprFixture(t)
	apprRequest(t, e, NewApproval{})                    // stays pending
	apprRequest(t, e, NewApproval{})                    // granted
	apprRequest(t, e, NewApproval{})                    // denied
	apprRequest(t, e, NewApproval{TTL: 1})              // expires at once
	apprRequest(t, e, NewApproval{TTL: MaxApprovalTTL}) // far from expiring
	apprDecide(t, e, "A-2", true)
	apprDecide(t, e, "A-3", false)
	tests := []struct {
		id   string
		want error
		code Code
	}{
		{"A-1", ErrPending, CodePending},
		{"A-2", nil, CodeOK},
		{"A-3", ErrDenied, CodeConflict},
		{"A-4", ErrExpired, CodeConflict},
		{"A-5", ErrPending, CodePending},
	}
	for _, tt := range tests {
		a, err := e.PollApproval("website", tt.id)
		if !errors.Is(err, tt.want) || ErrorCode(err) != tt.code || a == nil || a.ID != tt.id {
			t.Errorf("PollApproval(%s) = %v, %v; want %v (%s)", tt.id, a, err, tt.want, tt.code)
		}
	}
	if _, err := e.PollApproval("website", "A-9"); !errors.Is(err, ErrNotFound) {
		t.Errorf("PollApproval(A-9) = %v, want ErrNotFound", err)
	}
}

func TestEngine_CheckApproval(t *testing.T) {
	e := apprFixture(t)
	action := `{"cmd": "rm -rf build"}`
	apprRequest(t, e, NewApproval{Action: action}) // A-1 granted
	apprRequest(t, e, NewApproval{Action: action}) // A-2 pending
	apprRequest(t, e, NewApproval{Action: action}) // A-3 denied
	apprRequest(t, e, NewApproval{})               // A-4 granted, no action
	apprDecide(t, e, "A-1", true)
	apprDecide(t, e, "A-3", false)
	apprDecide(t, e, "A-4", true)
	tests := []struct {
		name, id, action string
		want             error
	}{
		{"OK", "A-1", action, nil},
		{"ErrActionMismatch", "A-1", `{"cmd": "rm -rf /"}`, ErrActionMismatch},
		{"WhitespaceMatters", "A-1", action + "\n", ErrActionMismatch},
		{"ErrPending", "A-2", action, ErrPending},
		{"ErrDenied", "A-3", action, ErrDenied},
		{"EmptyAction", "A-4", "", nil},
		{"EmptyActionMismatch", "A-4", "{}", ErrActionMismatch},
		{"ErrNotFound", "A-9", action, ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.CheckApproval("website", tt.id, ActionHash([]byte(tt.action)))
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Errorf("CheckApproval(%s) = %v, want %v", tt.id, err, tt.want)
			}
		})
	}
}

func TestEngine_Approvals(t *testing.T) {
	e := apprFixture(t)
	apprTask(t, e, "second") // T-2
	apprRequest(t, e, NewApproval{Task: "T-1"})
	apprRequest(t, e, NewApproval{Task: "T-2"})
	apprRequest(t, e, NewApproval{})
	apprDecide(t, e, "A-2", true)
	ids := func(f ApprovalFilter) []string {
		t.Helper()
		all, err := e.Approvals("website", f)
		if err != nil {
			t.Fatalf("Approvals(%+v): %v", f, err)
		}
		var out []string
		for _, a := range all {
			out = append(out, a.ID)
		}
		return out
	}
	for _, tt := range []struct {
		f    ApprovalFilter
		want []string
	}{
		{ApprovalFilter{}, []string{"A-1", "A-2", "A-3"}},
		{ApprovalFilter{Status: "pending"}, []string{"A-1", "A-3"}},
		{ApprovalFilter{Status: "granted"}, []string{"A-2"}},
		{ApprovalFilter{Status: "denied"}, nil},
		{ApprovalFilter{Task: "t-2"}, []string{"A-2"}},
		{ApprovalFilter{Task: "T-1", Status: "granted"}, nil},
	} {
		if got := ids(tt.f); !slices.Equal(got, tt.want) {
			t.Errorf("Approvals(%+v) = %v, want %v", tt.f, got, tt.want)
		}
	}
	if _, err := e.Approvals("website", ApprovalFilter{Status: "cancelled"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("status filter 'cancelled' = %v, want ErrInvalid", err)
	}
	if _, err := e.Approvals("website", ApprovalFilter{Task: "T-9"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("task filter T-9 = %v, want ErrNotFound", err)
	}
}

func TestEngine_ApprovalIdempotency(t *testing.T) {
	e := apprFixture(t)
	in := NewApproval{Project: "website", Message: "m", Write: Write{Key: "k1"}}
	a, err := e.RequestApproval(in)
	if err != nil {
		t.Fatal(err)
	}
	before := apprCount(t, e)
	b, err := e.RequestApproval(in)
	if err != nil || b.ID != a.ID || apprCount(t, e) != before {
		t.Errorf("retried request = %v, %v (%d new events), want %s and nothing appended", b, err, apprCount(t, e)-before, a.ID)
	}
}
