package digest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/flow/scopediff"
	"github.com/flowctl/flowctl/internal/flowtest"
	"github.com/flowctl/flowctl/projection"
)

// diffEngine writes a history of project p with snapshots every 3
// events (so chains of deltas lie between most pairs of points): tasks,
// moves, context merges, notes, checkpoints and a rollback.
func diffEngine(t *testing.T) *flow.Engine {
	t.Helper()
	path := filepath.Join(t.TempDir(), flow.DefaultDir, flow.DefaultFile)
	e, err := flow.Open(path, flow.Options{Create: true, NoSync: true, Actor: "tester", Session: "s1", Now: flowtest.Clock(), SnapshotEvery: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(e.CreateProject(flow.NewProject{Name: "p"}))
	for i := range 12 {
		must(e.AddTask(flow.NewTask{Project: "p", Title: fmt.Sprint("task ", i)}))
	}
	for i := range 60 {
		id := fmt.Sprintf("T-%d", 1+i%12)
		switch i % 6 {
		case 0:
			must(e.MoveTask(flow.Move{Project: "p", ID: id, To: []string{"doing", "done", "todo"}[i%3]}))
		case 1, 4:
			must(e.MergeContext(flow.ContextPatch{Project: "p", ID: id, Patch: fmt.Sprintf(`{"round":%d}`, i)}))
		case 2:
			must(e.AddNote(flow.NewNote{Project: "p", Task: id, Text: "note"}))
		case 3:
			must(e.AddTask(flow.NewTask{Project: "p", Title: fmt.Sprint("later ", i)}))
		case 5:
			must(e.CreateCheckpoint(flow.NewCheckpoint{Project: "p"}))
		}
		if i == 40 {
			must(e.Rollback(flow.RollbackInput{Project: "p", To: flow.Point{Seq: 20}}))
		}
	}
	return e
}

// scopeVia reads the whole state of project at p through a view At p.
func scopeVia(t *testing.T, e *flow.Engine, project string, p flow.Point) *projection.Scope {
	t.Helper()
	s := &projection.Scope{}
	err := e.At(project, p).Read(func(r *flow.Reader) (err error) {
		if s.Project, err = r.Project(project); err != nil {
			return err
		}
		if s.Plans, err = r.Plans(project); err != nil {
			return err
		}
		if s.Tasks, err = r.Tasks(project); err != nil {
			return err
		}
		if s.Approvals, err = r.Approvals(project); err != nil {
			return err
		}
		if s.Execs, err = r.Execs(project); err != nil {
			return err
		}
		s.Checkpoints, err = r.Checkpoints(project)
		return err
	})
	if err != nil {
		t.Fatalf("state at %s: %v", p, err)
	}
	return s
}

// TestDiff_EqualsTwoReads: Diff (one read at the earlier point, folded or
// resolved on to the later one, shared entities left out) gives what
// comparing two independent reads at the points gives, for every pair of
// points in either order.
func TestDiff_EqualsTwoReads(t *testing.T) {
	e := diffEngine(t)
	var head uint64
	if err := e.Read(func(r *flow.Reader) error { head = r.Head(); return nil }); err != nil {
		t.Fatal(err)
	}
	var first uint64 = 1 // the project's creation: a state at 0 has no project to read
	states := map[uint64]*projection.Scope{}
	for s := first; s <= head; s++ {
		states[s] = scopeVia(t, e, "p", flow.Point{Seq: s})
	}
	pairs := 0
	for a := first; a <= head; a += 3 {
		for b := first; b <= head; b += 5 {
			d, err := Diff(e, "p", flow.Point{Seq: a}, flow.Point{Seq: b})
			if err != nil {
				t.Fatalf("Diff(%d, %d): %v", a, b, err)
			}
			want, _ := json.Marshal(scopediff.Of(states[a], states[b]))
			got, _ := json.Marshal(d.Changes)
			if d.From != a || d.To != b || !bytes.Equal(got, want) {
				t.Fatalf("Diff(%d, %d) = %d..%d %s, two reads give %s", a, b, d.From, d.To, got, want)
			}
			pairs++
		}
	}
	t.Logf("%d pairs over %d events", pairs, head)
}

// TestChanged_LeavesOutSharedEntities: Changed drops exactly the pairs of
// entities that are the same pointer, and keeps the rest in order.
func TestChanged_LeavesOutSharedEntities(t *testing.T) {
	shared, old, changed := &projection.Task{ID: "T-1"}, &projection.Task{ID: "T-2"}, &projection.Task{ID: "T-2", Title: "x"}
	gone, added := &projection.Task{ID: "T-3"}, &projection.Task{ID: "T-10"}
	a := &projection.Scope{Tasks: []*projection.Task{shared, old, gone}}
	b := &projection.Scope{Tasks: []*projection.Task{shared, changed, added}}
	x, y := Changed(a, b)
	if len(x.Tasks) != 2 || x.Tasks[0] != old || x.Tasks[1] != gone {
		t.Errorf("from: %v", x.Tasks)
	}
	if len(y.Tasks) != 2 || y.Tasks[0] != changed || y.Tasks[1] != added {
		t.Errorf("to: %v", y.Tasks)
	}
	if x.Plans == nil || y.Execs == nil {
		t.Error("empty lists must be empty slices")
	}
}

// TestChanged_LeavesOutEqualCopies: a pair that is two pointers to equal
// entities (a snapshot's delta decodes its own copy) is left out; a pair
// that differs in any encoded field, even one the comparison ignores, is
// kept for it to judge.
func TestChanged_LeavesOutEqualCopies(t *testing.T) {
	one, copyOfOne := &projection.Task{ID: "T-1", Title: "x", Deps: []string{"T-2"}}, &projection.Task{ID: "T-1", Title: "x", Deps: []string{"T-2"}}
	two, newer := &projection.Task{ID: "T-2"}, &projection.Task{ID: "T-2"}
	two.Version, newer.Version = 1, 2
	a := &projection.Scope{Tasks: []*projection.Task{one, two}}
	b := &projection.Scope{Tasks: []*projection.Task{copyOfOne, newer}}
	x, y := Changed(a, b)
	if len(x.Tasks) != 1 || x.Tasks[0] != two || len(y.Tasks) != 1 || y.Tasks[0] != newer {
		t.Errorf("Changed = %v, %v; want only T-2's pair", x.Tasks, y.Tasks)
	}
}

// TestChanged_AnyOrder: Changed matches entities by id, so lists in any
// order leave out the same pairs, each side keeping its own order.
func TestChanged_AnyOrder(t *testing.T) {
	one, two, three := &projection.Task{ID: "T-1"}, &projection.Task{ID: "T-2"}, &projection.Task{ID: "T-3"}
	twoCopy, threeNew, four := &projection.Task{ID: "T-2"}, &projection.Task{ID: "T-3", Title: "x"}, &projection.Task{ID: "T-4"}
	a := &projection.Scope{Tasks: []*projection.Task{three, one, two}}
	b := &projection.Scope{Tasks: []*projection.Task{four, twoCopy, threeNew}}
	x, y := Changed(a, b)
	if len(x.Tasks) != 2 || x.Tasks[0] != three || x.Tasks[1] != one {
		t.Errorf("from: %v", x.Tasks)
	}
	if len(y.Tasks) != 2 || y.Tasks[0] != four || y.Tasks[1] != threeNew {
		t.Errorf("to: %v", y.Tasks)
	}
}

// TestDiffPage_PagesOfTheDiff: every page of a diff (offset, limit) is
// that slice of the whole diff's changes, with its total, and Truncated
// exactly when changes follow the page, for pairs of points in either
// order.
func TestDiffPage_PagesOfTheDiff(t *testing.T) {
	e := diffEngine(t)
	var head uint64
	if err := e.Read(func(r *flow.Reader) error { head = r.Head(); return nil }); err != nil {
		t.Fatal(err)
	}
	pages := 0
	for a := uint64(1); a <= head; a += 7 {
		for b := uint64(1); b <= head; b += 11 {
			all, err := Diff(e, "p", flow.Point{Seq: a}, flow.Point{Seq: b})
			if err != nil {
				t.Fatal(err)
			}
			if all.Total != len(all.Changes) || all.Truncated {
				t.Fatalf("Diff(%d, %d): total %d truncated %v of %d changes", a, b, all.Total, all.Truncated, len(all.Changes))
			}
			for _, pg := range [][2]int{{0, 1}, {0, 3}, {2, 3}, {5, 0}, {0, 1000}, {len(all.Changes), 2}, {len(all.Changes) + 4, 2}} {
				offset, limit := pg[0], pg[1]
				d, err := DiffPage(e, "p", flow.Point{Seq: a}, flow.Point{Seq: b}, offset, limit)
				if err != nil {
					t.Fatal(err)
				}
				lo := min(offset, len(all.Changes))
				hi := len(all.Changes)
				if limit > 0 {
					hi = min(hi, lo+limit)
				}
				want, _ := json.Marshal(all.Changes[lo:hi])
				got, _ := json.Marshal(d.Changes)
				if !bytes.Equal(got, want) || d.Total != all.Total || d.Truncated != (hi < all.Total) {
					t.Fatalf("DiffPage(%d, %d, offset %d, limit %d) = %s (total %d, truncated %v); want %s of %d", a, b, offset, limit, got, d.Total, d.Truncated, want, all.Total)
				}
				pages++
			}
		}
	}
	t.Logf("%d pages", pages)
}

// TestDiffPage_ToHead: a diff to or from the head (the head's state read
// from the projections, flow.Engine.DiffChanges, entities at the head
// alone titled only on the page) gives what comparing two independent
// reads gives, whole and a page at a time, from every point.
func TestDiffPage_ToHead(t *testing.T) {
	e := diffEngine(t)
	var head uint64
	if err := e.Read(func(r *flow.Reader) error { head = r.Head(); return nil }); err != nil {
		t.Fatal(err)
	}
	now := scopeVia(t, e, "p", flow.Point{Seq: head})
	for a := uint64(1); a <= head; a++ {
		at := scopeVia(t, e, "p", flow.Point{Seq: a})
		for _, c := range []struct {
			from, to flow.Point
			want     []flow.Change
		}{
			{flow.Point{Seq: a}, flow.Point{Seq: head}, scopediff.Of(at, now)},
			{flow.Point{Seq: head}, flow.Point{Seq: a}, scopediff.Of(now, at)},
		} {
			for _, pg := range [][2]int{{0, 0}, {0, 3}, {2, 3}, {len(c.want) - 1, 5}, {len(c.want) + 2, 2}} {
				d, err := DiffPage(e, "p", c.from, c.to, pg[0], pg[1])
				if err != nil {
					t.Fatal(err)
				}
				lo, hi := max(min(pg[0], len(c.want)), 0), len(c.want)
				if pg[1] > 0 {
					hi = min(hi, lo+pg[1])
				}
				want, _ := json.Marshal(c.want[lo:hi])
				got, _ := json.Marshal(d.Changes)
				if !bytes.Equal(got, want) || d.Total != len(c.want) {
					t.Fatalf("DiffPage(%v, %v, %v) = %s of %d; two reads give %s of %d", c.from, c.to, pg, got, d.Total, want, len(c.want))
				}
			}
		}
	}
}
