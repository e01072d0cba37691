package flow

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// statusByFullScan is the overview computed the slow way, by decoding
// every entity of the project: the reference the summary index must match.
func statusByFullScan(tb testing.TB, e *Engine, project, actor string) *Status {
	tb.Helper()
	var st *Status
	err := e.readHead(func(src source, head uint64) error {
		p, err := mustProject(src, project)
		if err != nil {
			return err
		}
		st = &Status{Project: p.Name, Archived: p.Archived, HeadSeq: head,
			Ready: []TaskBrief{}, Blocked: []BlockedTask{}, Claims: []LiveClaim{}, PendingApprovals: []PendingBrief{}, Overdue: []DueTask{}}
		tasks, _ := src.Tasks(project)
		status := statusByID(tasks)
		for _, t := range tasks {
			st.Tasks.add(t.Status, 1)
			st.addTask(t, status, actor, e.opts.Now())
		}
		st.sortOverdue()
		approvals, _ := src.Approvals(project)
		for _, a := range approvals {
			if a.Status == projection.ApprovalPending {
				st.PendingApprovals = append(st.PendingApprovals, PendingBrief{ID: a.ID, Task: a.Task, Step: a.Step,
					Message: a.Message, RequestedBy: a.RequestedBy, RequestedAt: a.CreatedAt, Expires: a.Expires, Status: a.Status})
			}
		}
		plans, _ := src.Plans(project)
		for _, pl := range plans {
			if pl.Status == "closed" {
				st.Plans.Closed++
			} else {
				st.Plans.Open++
			}
		}
		execs, err := src.Execs(project)
		for _, x := range execs {
			st.Execs.Total++
			if !x.Success {
				st.Execs.Failed++
			}
		}
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

// TestSummary_StatusMatchesFullScan checks the overview read from the
// summary index against one that decodes every entity, at the head (the
// index in the file) and at earlier points (the index a replay implies),
// through claims on finished tasks, a rollback that removes entities, and
// a rebuild.
func TestSummary_StatusMatchesFullScan(t *testing.T) {
	e := mustOpen(t)
	statusFixture(t, e)
	mark, err := e.Status("alpha")
	if err != nil {
		t.Fatal(err)
	}
	// A finished task that still holds a live claim is listed as claimed.
	lease := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	statusEmit(t, e, projection.TaskStream("alpha", "T-1"), "alpha", projection.TypeTaskClaimed,
		projection.TaskClaimed{Actor: "erin", LeaseUntil: lease})
	statusTask(t, e, "alpha", "nine", "T-1")
	statusExec(t, e, "alpha", projection.ExecRecorded{ID: "X-3", Command: "make", ExitCode: 2})
	check := func(when string) {
		t.Helper()
		for _, actor := range []string{"tester", "bob", "erin"} {
			got, err := e.StatusFor("alpha", actor)
			if err != nil {
				t.Fatal(err)
			}
			if want := statusByFullScan(t, e, "alpha", actor); !reflect.DeepEqual(got, want) {
				t.Errorf("%s, for %s: status from the index\n%+v\nby a full scan\n%+v", when, actor, got, want)
			}
			rs, err := e.ReadyFor("alpha", actor, false)
			if err != nil {
				t.Fatal(err)
			}
			if ids := briefIDs(rs, func(r Readiness) string { return r.Task.ID }); !reflect.DeepEqual(ids, briefIDs(got.Ready, func(b TaskBrief) string { return b.ID })) {
				t.Errorf("%s, for %s: Ready = %v, status ready = %+v", when, actor, ids, got.Ready)
			}
		}
	}
	check("after the fixture")
	if got := briefIDs(mustStatus(t, e).Claims, func(c LiveClaim) string { return c.Task }); !reflect.DeepEqual(got, []string{"T-1", "T-4"}) {
		t.Errorf("claims = %v, want [T-1 T-4]: a done task's live claim counts", got)
	}
	if _, err := e.Rollback(RollbackInput{Project: "alpha", To: Point{Seq: mark.HeadSeq}}); err != nil {
		t.Fatal(err)
	}
	check("after a rollback")
	if st := mustStatus(t, e); st.Tasks.Total != 8 || st.Execs.Total != 2 {
		t.Errorf("after the rollback: %d tasks, %d execs; want 8 and 2", st.Tasks.Total, st.Execs.Total)
	}
	at := e.At("alpha", Point{Seq: mark.HeadSeq + 2})
	if got, want := mustStatus(t, at), statusByFullScan(t, at, "alpha", at.opts.Actor); !reflect.DeepEqual(got, want) {
		t.Errorf("at seq %d: status from the index\n%+v\nby a full scan\n%+v", mark.HeadSeq+2, got, want)
	}
	if _, err := e.Rebuild(); err != nil {
		t.Fatal(err)
	}
	check("after a rebuild")
}

func mustStatus(tb testing.TB, e *Engine) *Status {
	tb.Helper()
	st, err := e.Status("alpha")
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

// TestSummary_VerifyCatchesDamage changes, adds and removes index entries
// behind the engine's back: verify names the index each time.
func TestSummary_VerifyCatchesDamage(t *testing.T) {
	for name, damage := range map[string]func(tx store.Tx) error{
		"changed": func(tx store.Tx) error {
			return tx.Put(projstore.BucketSummaries, projstore.SummaryRefKey(projstore.BucketTasks, "alpha/T-1"), []byte("todo"))
		},
		"extra": func(tx store.Tx) error {
			return tx.Put(projstore.BucketSummaries, append(projstore.SummaryStatusPrefix(projstore.BucketTasks, "alpha", "todo"), "T-99"...), nil)
		},
		"missing": func(tx store.Tx) error {
			return tx.Delete(projstore.BucketSummaries, append(projstore.SummaryCountPrefix(projstore.BucketExecs, "alpha"), "ok"...))
		},
		"lease": func(tx store.Tx) error {
			return tx.Delete(projstore.BucketSummaries, projstore.SummaryLeaseKey("alpha", uint64(time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()), "T-4"))
		},
	} {
		t.Run(name, func(t *testing.T) {
			e := mustOpen(t)
			statusFixture(t, e)
			if err := e.log.Update(damage); err != nil {
				t.Fatal(err)
			}
			_, err := e.Verify()
			var ce *eventlog.CorruptionError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), projstore.BucketSummaries) {
				t.Fatalf("Verify = %v, want a corruption naming %s", err, projstore.BucketSummaries)
			}
			if _, err := e.Rebuild(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestSummary_IndexedButMissing: an index entry whose task is gone is
// reported as damage, never as a task that silently vanishes.
func TestSummary_IndexedButMissing(t *testing.T) {
	e := mustOpen(t)
	statusFixture(t, e)
	if err := e.log.Update(func(tx store.Tx) error { return tx.Delete(projstore.BucketTasks, []byte("alpha/T-2")) }); err != nil {
		t.Fatal(err)
	}
	_, err := e.Status("alpha")
	if !errors.Is(err, ErrDamagedProjection) {
		t.Fatalf("Status = %v, want ErrDamagedProjection", err)
	}
	if _, err := e.Rebuild(); err != nil {
		t.Fatal(err)
	}
}

// TestSummary_IndexMatchesEntities: the index's listing (ids, statuses,
// titles, messages) is what reading every entity gives, in id order,
// through an edit of a title and a claim (whose lease shares the value).
func TestSummary_IndexMatchesEntities(t *testing.T) {
	e := mustOpen(t)
	statusFixture(t, e)
	lease := time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	statusEmit(t, e, projection.TaskStream("alpha", "T-2"), "alpha", projection.TypeTaskClaimed,
		projection.TaskClaimed{Actor: "erin", LeaseUntil: lease})
	title := "a new title with \x00 and ü"
	if _, err := e.EditTask(TaskEdit{Project: "alpha", ID: "T-1", Title: &title}); err == nil {
		t.Fatal("a title with NUL was accepted")
	}
	title = "a new title with ü"
	if _, err := e.EditTask(TaskEdit{Project: "alpha", ID: "T-1", Title: &title}); err != nil {
		t.Fatal(err)
	}
	tasks, err := e.Tasks("alpha", TaskFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var want []IndexEntry
	for _, t := range tasks {
		want = append(want, IndexEntry{ID: t.ID, Status: t.Status, Title: t.Title})
	}
	got, err := e.TaskIndex("alpha")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("TaskIndex\n%+v\nwant\n%+v", got, want)
	}
	aps, err := e.Approvals("alpha", ApprovalFilter{})
	if err != nil {
		t.Fatal(err)
	}
	gotAps, err := e.ApprovalIndex("alpha")
	if err != nil || len(gotAps) != len(aps) {
		t.Fatalf("ApprovalIndex: %d entries, %v; want %d", len(gotAps), err, len(aps))
	}
	for i, ap := range aps {
		if gotAps[i] != (IndexEntry{ID: ap.ID, Status: ap.Status, Title: ap.Message}) {
			t.Errorf("approval %d: %+v, want %s %s %q", i, gotAps[i], ap.ID, ap.Status, ap.Message)
		}
	}
	if _, err := e.Verify(); err != nil {
		t.Fatal(err)
	}
}
