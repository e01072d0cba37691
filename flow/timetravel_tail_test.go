package flow

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/flowctl/flowctl/flow/internal/snapstore"
)

// TestAt_TailWithinBound: on a project whose state is over
// MaxSnapshotGap*BytesPerEvent bytes (where spacing snapshots by the
// state's size alone would space them further), a read of the whole
// state at any point folds at most TailBound(K) of the project's events
// after its snapshot (plus the events of the command that made one due),
// counted through snapstore's tail hook; and reads far past a snapshot
// do fold more than K, so the bound is the one tested.
func TestAt_TailWithinBound(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 15,000 events")
	}
	t.Parallel()
	const every, batch, project = 50, 100, "tailbound"
	e := snapsOpen(t, every)
	if _, err := e.CreateProject(NewProject{Name: project}); err != nil {
		t.Fatal(err)
	}
	title := strings.Repeat("a title long enough to make the state big ", 2)
	for b := range 150 {
		items := make([]BatchTask, batch)
		for i := range items {
			items[i].Title = fmt.Sprint(title, b, ".", i)
		}
		if _, err := e.AddTasks(project, items); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var reads, most int
	prev := snapstore.OnTail(func(p string, from, seq uint64, events int) {
		if p == project {
			mu.Lock()
			reads, most = reads+1, max(most, events)
			mu.Unlock()
		}
	})
	defer func() { snapstore.OnTail(prev) }()
	var head uint64
	if err := e.Read(func(r *Reader) error { head = r.Head(); return nil }); err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= head; seq += 499 {
		if _, err := e.At(project, Point{Seq: seq}).Tasks(project, TaskFilter{}); err != nil {
			t.Fatal(err)
		}
	}
	infos, err := e.Snapshots(project)
	if err != nil {
		t.Fatal(err)
	}
	bound := int(snapstore.TailBound(every)) + batch - 1
	if reads == 0 || most > bound || most <= every {
		t.Fatalf("%d reads folded up to %d events after a snapshot; want at most %d, and more than K=%d (%d snapshots)", reads, most, bound, every, len(infos))
	}
	if last := infos[len(infos)-1]; last.BodyBytes < snapstore.MaxSnapshotGap*snapstore.BytesPerEvent && last.Kind == "full" {
		t.Fatalf("the state is %d bytes: too small to test the bound", last.BodyBytes)
	}
	t.Logf("%d reads folded up to %d events; %d snapshots", reads, most, len(infos))
}
