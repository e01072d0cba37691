package flow

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/internal/snapstore"
	"github.com/flowctl/flowctl/flow/scopediff"
	"github.com/flowctl/flowctl/flow/store"
)

// TestRollback_Oracle: at every seq of a history with moves, approvals,
// exec records, a checkpoint and a rollback, a dry run (both states from
// one ScopesAt, shared entities left out) reports the changes, and plans
// the payload and marks, that the whole states compared give: the
// current one read from the projections, the target one folded alone.
func TestRollback_Oracle(t *testing.T) {
	e := mustOpen(t)
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(e.CreateProject(NewProject{Name: "p"}))
	for i := 1; i <= 6; i++ {
		must(e.AddTask(NewTask{Project: "p", Title: fmt.Sprint("t", i)}))
		must(e.RecordExec(NewExec{Project: "p", Task: fmt.Sprint("T-", i), Command: "make", Success: i%2 == 0, ExitCode: i % 2}))
	}
	must(e.MoveTask(Move{Project: "p", ID: "T-1", To: "doing"}))
	must(e.CreateCheckpoint(NewCheckpoint{Project: "p", Label: "mid"}))
	a, err := e.RequestApproval(NewApproval{Project: "p", Task: "T-2", Message: "ok?"})
	must(a, err)
	must(e.As("reviewer", "r1").DecideApproval(Decision{Project: "p", ID: a.ID, Grant: true}))
	must(e.MoveTask(Move{Project: "p", ID: "T-3", To: "blocked"}))
	must(e.Rollback(RollbackInput{Project: "p", To: Point{Checkpoint: "C-1"}}))
	must(e.AddTask(NewTask{Project: "p", Title: "late"}))
	must(e.RecordExec(NewExec{Project: "p", Task: "T-7", Command: "go test", Success: false, ExitCode: 1}))
	must(e.MoveTask(Move{Project: "p", ID: "T-2", To: "doing"}))
	var head uint64
	must(nil, e.Read(func(r *Reader) error { head = r.Head(); return nil }))
	checked := 0
	for seq := uint64(1); seq <= head; seq++ {
		for _, task := range []string{"", "T-2"} {
			// planRollback appends nothing: not a dry run, it plans the payload too.
			in := RollbackInput{Project: "p", To: Point{Seq: seq}, Task: task}
			var got, want string
			err := e.view(func(tx store.Tx) error {
				src := projstore.NewTx(tx)
				res, p, err := e.planRollback(tx, src, in)
				if err != nil {
					return err
				}
				got = planJSON(t, res.Changes, p)
				if res.Total != len(res.Changes) || res.Truncated {
					t.Errorf("seq %d task %q: total %d truncated %v of %d changes", seq, task, res.Total, res.Truncated, len(res.Changes))
				}
				// A dry run previews the same changes, a page at a time.
				for _, limit := range []int{0, 1, 2, 5} {
					dry := in
					dry.DryRun, dry.Limit = true, limit
					page, _, err := e.planRollback(tx, src, dry)
					if err != nil {
						return err
					}
					n := len(res.Changes)
					if limit > 0 {
						n = min(n, limit)
					}
					if planJSON(t, page.Changes, nil) != planJSON(t, res.Changes[:n], nil) || page.Total != res.Total || page.Truncated != (n < res.Total) {
						t.Errorf("seq %d task %q limit %d: %d changes of %d (truncated %v), want the first %d of %d", seq, task, limit, len(page.Changes), page.Total, page.Truncated, n, res.Total)
					}
				}
				// The oracle: the whole states, as a rollback read them before.
				seq, target, err := e.scopeAt(tx, src, in.Project, in.To)
				if err != nil {
					return err
				}
				current, err := snapstore.ScopeOf(src, in.Project)
				if err != nil {
					return err
				}
				if task != "" {
					if target, current, err = taskScopes(target, current, task, seq); err != nil {
						return err
					}
				}
				changes := flagWorld(scopediff.Of(current, target), current, target)
				payload, err := rollbackPayload(current, target, in, seq)
				if err != nil {
					return err
				}
				var wp *rollbackPlan
				if payload != nil {
					streamPositions(tx, in.Project, payload)
					wp = &rollbackPlan{payload: payload}
					if task == "" {
						wp.marks = marksOf(in.Project, current, payload)
					}
				}
				want = planJSON(t, changes, wp)
				return nil
			})
			if err != nil {
				continue // a point the scope did not exist at: refused either way
			}
			checked++
			if got != want {
				t.Errorf("seq %d task %q:\n got %s\nwant %s", seq, task, got, want)
			}
		}
	}
	if checked < int(head) {
		t.Fatalf("only %d of %d points checked", checked, 2*head)
	}
}

func planJSON(t *testing.T, changes []Change, p *rollbackPlan) string {
	t.Helper()
	v := map[string]any{"changes": changes}
	if p != nil {
		marks := []string{}
		for _, m := range p.marks {
			marks = append(marks, fmt.Sprint(m.stream, m.removed))
		}
		v["payload"], v["marks"] = p.payload, marks
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
