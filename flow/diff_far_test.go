package flow

import (
	"errors"
	"fmt"
	"testing"

	"github.com/flowctl/flowctl/flow/internal/history"
	"github.com/flowctl/flowctl/flow/store"
)

// TestDiff_FarPointsTakeFar: on a project with snapshots every 20 of its
// events, a diff of two far points (Between declines) is answered by
// history.Far (it does not decline: no rollback, every event on its
// entity's stream), and lists what two replays compared list, for pairs
// whose span holds deltas, a full snapshot, tasks created and renamed
// after A (their titles at B: renamed in a delta's span, in the log
// after the last snapshot, or not at all), plans, approvals and exec
// records created after A and entities changed from before A.
func TestDiff_FarPointsTakeFar(t *testing.T) {
	e := snapsOpen(t, 20)
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(e.CreateProject(NewProject{Name: "p"}))
	for i := range 150 {
		r, err := e.AddTask(NewTask{Project: "p", Title: fmt.Sprint("task ", i)})
		if err != nil {
			t.Fatal(err)
		}
		switch i % 5 {
		case 0:
			must(e.MoveTask(Move{Project: "p", ID: r.ID, To: "doing"}))
		case 1:
			title := fmt.Sprint("renamed ", i)
			must(e.EditTask(TaskEdit{Project: "p", ID: r.ID, Title: &title}))
		case 2:
			must(e.RequestApproval(NewApproval{Project: "p", Task: r.ID, Message: fmt.Sprint("ok ", i)}))
		case 3:
			must(e.AddPlan(NewPlan{Project: "p", Title: fmt.Sprint("plan ", i)}))
		}
		if i%7 == 0 && i > 0 { // a task from before, renamed later
			title := fmt.Sprint("later ", i)
			must(e.EditTask(TaskEdit{Project: "p", ID: fmt.Sprint("T-", i/2), Title: &title}))
		}
	}
	head, _, err := storeHead(e.log)
	if err != nil {
		t.Fatal(err)
	}
	for n, ab := range [][2]uint64{{5, head}, {40, head}, {100, head - 3}, {60, head - 10}, {head / 2, head}, {20, 21}} {
		var x, y []Change
		err := e.view(func(tx store.Tx) error {
			_, _, err := history.Between(tx, "p", ab[0], ab[1], e.warn)
			if n == 0 && !errors.Is(err, history.ErrNotBetween) {
				return fmt.Errorf("Between answers (%v): not a far diff", err)
			}
			sa, sb, err := history.Far(tx, "p", ab[0], ab[1], e.warn)
			if err != nil {
				return err
			}
			x, _ = DiffPage(sameEncodedAll(sa, sb))
			y, _ = DiffPage(ttReplayScope(t, e.Engine, "p", ab[0]), ttReplayScope(t, e.Engine, "p", ab[1]), 0, 0)
			return nil
		})
		if err != nil {
			t.Fatalf("Far(%d, %d): %v", ab[0], ab[1], err)
		}
		if g, w := mustJSON(t, x), mustJSON(t, y); g != w {
			t.Fatalf("Far(%d, %d): %s, two replays: %s", ab[0], ab[1], g, w)
		}
		checkDiffBothWays(t, e.Engine, ab[0], ab[1])
	}
}
