package flow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/flowctl/flowctl/flow/internal/history"
	"github.com/flowctl/flowctl/flow/store"
)

// TestDiff_NearPointsFoldBetween: on a project of many entities, a diff
// of two near points folds the events between them (history.Between
// answers, by its own measure of cost), one of two far points reads the
// states from snapshots (Between declines); both list what two replays
// compared list.
func TestDiff_NearPointsFoldBetween(t *testing.T) {
	e := snapsOpen(t, 20)
	if _, err := e.CreateProject(NewProject{Name: "p"}); err != nil {
		t.Fatal(err)
	}
	for i := range 120 {
		r, err := e.AddTask(NewTask{Project: "p", Title: fmt.Sprint("task ", i)})
		if err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			if _, err := e.MoveTask(Move{Project: "p", ID: r.ID, To: "doing"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	head, _, err := storeHead(e.log)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		a, b    uint64
		between bool
	}{{head - 6, head, true}, {head - 30, head - 2, true}, {head - 6, head - 6, true}, {10, head, false}} {
		_ = e.view(func(tx store.Tx) error {
			_, _, err = history.Between(tx, "p", c.a, c.b, e.warn)
			return nil
		})
		if got := err == nil; got != c.between || err != nil && !errors.Is(err, history.ErrNotBetween) {
			t.Fatalf("Between(%d, %d): %v, want it to answer: %v", c.a, c.b, err, c.between)
		}
		checkDiffBothWays(t, e.Engine, c.a, c.b)
	}
}

// checkDiffBothWays checks project p's changes from a to b and from b to
// a (Engine.DiffChanges) against those of two whole replays.
func checkDiffBothWays(t *testing.T, e *Engine, a, b uint64) {
	t.Helper()
	for _, ab := range [][2]uint64{{a, b}, {b, a}} {
		want, total := DiffPage(ttReplayScope(t, e, "p", ab[0]), ttReplayScope(t, e, "p", ab[1]), 0, 0)
		_, _, got, n, err := e.DiffChanges("p", Point{Seq: ab[0]}, Point{Seq: ab[1]}, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if n != total || !bytes.Equal(g, w) {
			t.Fatalf("diff %d %d: %d changes %s, two replays %d: %s", ab[0], ab[1], n, g, total, w)
		}
	}
}
