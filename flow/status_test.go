package flow

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/projection"
)

// statusEmit appends one event through the engine's own write path (the
// commands for steps, approvals and exec records live elsewhere).
func statusEmit(tb testing.TB, e *Engine, stream, project, typ string, payload any) {
	tb.Helper()
	_, err := e.command(Write{}, "test."+typ, nil, func(w *writer) (Ref, error) {
		_, err := w.emit(stream, eventlog.Any, project, typ, payload)
		return Ref{}, err
	})
	if err != nil {
		tb.Fatalf("emit %s on %s: %v", typ, stream, err)
	}
}

func statusProject(tb testing.TB, e *Engine, name string) {
	tb.Helper()
	if _, err := e.CreateProject(NewProject{Name: name}); err != nil {
		tb.Fatal(err)
	}
}

func statusTask(tb testing.TB, e *Engine, project, title string, deps ...string) string {
	tb.Helper()
	t, err := e.AddTask(NewTask{Project: project, Title: title, Deps: deps})
	if err != nil {
		tb.Fatal(err)
	}
	return t.ID
}

func statusMove(tb testing.TB, e *Engine, project, id string, to ...string) {
	tb.Helper()
	for _, s := range to {
		if _, err := e.MoveTask(Move{Project: project, ID: id, To: s}); err != nil {
			tb.Fatalf("move %s to %s: %v", id, s, err)
		}
	}
}

func statusExec(tb testing.TB, e *Engine, project string, x projection.ExecRecorded) {
	tb.Helper()
	stream := projection.ProjectStream(project)
	if x.Task != "" {
		stream = projection.TaskStream(project, x.Task)
	}
	statusEmit(tb, e, stream, project, projection.TypeExecRecorded, x)
}

func statusApproval(tb testing.TB, e *Engine, project, task, id string) {
	tb.Helper()
	statusEmit(tb, e, projection.TaskStream(project, task), project, projection.TypeApprovalRequested,
		projection.ApprovalRequested{ID: id, Task: task, Message: "may I?", ActionHash: strings.Repeat("0", 64)})
}

// statusFixture builds a project with one task in every situation:
// T-1 done; T-2 todo after T-1 (ready); T-3 todo after T-4 (blocked by a
// dep); T-4 doing, claimed by someone else; T-5 blocked; T-6 cancelled;
// T-7 todo with a pending approval; T-8 todo with an expired claim (ready).
func statusFixture(tb testing.TB, e *Engine) {
	tb.Helper()
	statusProject(tb, e, "alpha")
	t1 := statusTask(tb, e, "alpha", "one")
	statusTask(tb, e, "alpha", "two", t1)
	t3 := statusTask(tb, e, "alpha", "three")
	t4 := statusTask(tb, e, "alpha", "four")
	if _, err := e.AddDep(DepChange{Project: "alpha", ID: t3, Dep: t4}); err != nil {
		tb.Fatal(err)
	}
	t5, t6, t7, t8 := statusTask(tb, e, "alpha", "five"), statusTask(tb, e, "alpha", "six"),
		statusTask(tb, e, "alpha", "seven"), statusTask(tb, e, "alpha", "eight")
	statusMove(tb, e, "alpha", t1, "doing", "done")
	statusMove(tb, e, "alpha", t4, "doing")
	statusMove(tb, e, "alpha", t5, "blocked")
	statusMove(tb, e, "alpha", t6, "cancelled")
	lease := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	statusEmit(tb, e, projection.TaskStream("alpha", t4), "alpha", projection.TypeTaskClaimed,
		projection.TaskClaimed{Actor: "bob", Session: "b1", LeaseUntil: lease})
	statusEmit(tb, e, projection.TaskStream("alpha", t8), "alpha", projection.TypeTaskClaimed,
		projection.TaskClaimed{Actor: "carol", LeaseUntil: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()})
	statusApproval(tb, e, "alpha", t7, "A-1")
	for _, title := range []string{"p1", "p2"} {
		if _, err := e.AddPlan(NewPlan{Project: "alpha", Title: title}); err != nil {
			tb.Fatal(err)
		}
	}
	if _, err := e.ClosePlan(ClosePlan{Project: "alpha", ID: "P-2"}); err != nil {
		tb.Fatal(err)
	}
	statusExec(tb, e, "alpha", projection.ExecRecorded{ID: "X-1", Task: t4, Command: "go test", Success: true, ElapsedMS: 10})
	statusExec(tb, e, "alpha", projection.ExecRecorded{ID: "X-2", Command: "go vet", ExitCode: 1, ElapsedMS: 5})
}

func briefIDs[T any](items []T, id func(T) string) []string {
	out := []string{}
	for _, v := range items {
		out = append(out, id(v))
	}
	return out
}

func TestEngine_Status(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		e := mustOpen(t)
		statusFixture(t, e)
		st, err := e.Status("alpha")
		if err != nil {
			t.Fatal(err)
		}
		want := TaskCounts{Total: 8, Todo: 4, Doing: 1, Done: 1, Blocked: 1, Cancelled: 1}
		if st.Tasks != want {
			t.Errorf("tasks = %+v, want %+v", st.Tasks, want)
		}
		if got := briefIDs(st.Ready, func(b TaskBrief) string { return b.ID }); !slices.Equal(got, []string{"T-2", "T-8"}) {
			t.Errorf("ready = %v, want [T-2 T-8]", got)
		}
		if got := briefIDs(st.Blocked, func(b BlockedTask) string { return b.ID + ":" + strings.Join(b.WaitingFor, ",") }); !slices.Equal(got, []string{"T-3:T-4", "T-5:"}) {
			t.Errorf("blocked = %v, want [T-3:T-4 T-5:]", got)
		}
		if got := briefIDs(st.PendingApprovals, func(a PendingBrief) string { return a.ID + "@" + a.Task }); !slices.Equal(got, []string{"A-1@T-7"}) {
			t.Errorf("pending approvals = %v, want [A-1@T-7]", got)
		}
		if got := briefIDs(st.Claims, func(c LiveClaim) string { return c.Task + ":" + c.Actor }); !slices.Equal(got, []string{"T-4:bob"}) {
			t.Errorf("live claims = %v, want [T-4:bob] (T-8's lease has expired)", got)
		}
		if st.Plans != (PlanCounts{Open: 1, Closed: 1}) {
			t.Errorf("plans = %+v, want 1 open, 1 closed", st.Plans)
		}
		if st.Execs != (ExecCounts{Total: 2, Failed: 1}) {
			t.Errorf("execs = %+v, want 2, 1 failed", st.Execs)
		}
		evs := collect(t, e, Filter{})
		if last := evs[len(evs)-1].Seq; st.HeadSeq != last {
			t.Errorf("head_seq = %d, want %d", st.HeadSeq, last)
		}
	})
	t.Run("ReadyIsReady", func(t *testing.T) {
		e := mustOpen(t)
		statusFixture(t, e)
		st, err := e.Status("alpha")
		if err != nil {
			t.Fatal(err)
		}
		rs, err := e.Ready("alpha", false)
		if err != nil {
			t.Fatal(err)
		}
		want := briefIDs(rs, func(r Readiness) string { return r.Task.ID })
		if got := briefIDs(st.Ready, func(b TaskBrief) string { return b.ID }); !slices.Equal(got, want) {
			t.Errorf("status ready = %v, Ready = %v", got, want)
		}
	})
	t.Run("ReadyForActor", func(t *testing.T) {
		e := mustOpen(t)
		statusFixture(t, e)
		lease := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
		statusEmit(t, e, projection.TaskStream("alpha", "T-2"), "alpha", projection.TypeTaskClaimed,
			projection.TaskClaimed{Actor: "dave", LeaseUntil: lease})
		for _, tt := range []struct {
			actor string
			want  []string
		}{{"tester", []string{"T-8"}}, {"dave", []string{"T-2", "T-8"}}} {
			st, err := e.StatusFor("alpha", tt.actor)
			if err != nil {
				t.Fatal(err)
			}
			if got := briefIDs(st.Ready, func(b TaskBrief) string { return b.ID }); !slices.Equal(got, tt.want) {
				t.Errorf("ready for %s = %v, want %v", tt.actor, got, tt.want)
			}
			rs, err := e.ReadyFor("alpha", tt.actor, false)
			if err != nil {
				t.Fatal(err)
			}
			if got := briefIDs(rs, func(r Readiness) string { return r.Task.ID }); !slices.Equal(got, tt.want) {
				t.Errorf("ReadyFor(%s) = %v, want %v", tt.actor, got, tt.want)
			}
		}
	})
	t.Run("Empty", func(t *testing.T) {
		e := mustOpen(t)
		statusProject(t, e, "empty")
		st, err := e.Status("empty")
		if err != nil {
			t.Fatal(err)
		}
		if st.Tasks != (TaskCounts{}) || st.Plans != (PlanCounts{}) || st.Execs != (ExecCounts{}) || st.HeadSeq != 1 {
			t.Errorf("status of an empty project = %+v", st)
		}
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{`"ready":[]`, `"blocked":[]`, `"pending_approvals":[]`, `"claims":[]`, `"cancelled":0`} {
			if !strings.Contains(string(b), key) {
				t.Errorf("JSON %s lacks %s", b, key)
			}
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		e := mustOpen(t)
		statusProject(t, e, "alpha")
		if _, err := e.Status("nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("err = %v, want ErrNotFound", err)
		}
	})
}
