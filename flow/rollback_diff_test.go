package flow

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
)

// TestRollbackPreview_PageToHead: a dry run listing a page of its
// changes (Limit: the state at head read from the projections, entities
// at head alone titled only on the page) lists the first Limit changes
// of the whole dry run, titles and World flags alike, with its total,
// to every point.
func TestRollbackPreview_PageToHead(t *testing.T) {
	path := filepath.Join(t.TempDir(), DefaultDir, DefaultFile)
	e, err := Open(path, Options{Create: true, NoSync: true, Actor: "tester", Session: "s1", Now: fixedClock(), SnapshotEvery: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(e.CreateProject(NewProject{Name: "p"}))
	for i := range 40 {
		id := fmt.Sprintf("T-%d", 1+i/4)
		switch i % 4 {
		case 0:
			must(e.AddTask(NewTask{Project: "p", Title: fmt.Sprint("task ", i)}))
		case 1:
			must(e.MoveTask(Move{Project: "p", ID: id, To: "doing"}))
		case 2:
			must(e.MergeContext(ContextPatch{Project: "p", ID: id, Patch: fmt.Sprintf(`{"round":%d}`, i)}))
		case 3:
			must(e.CreateCheckpoint(NewCheckpoint{Project: "p"}))
		}
	}
	var head uint64
	if err := e.Read(func(r *Reader) error { head = r.Head(); return nil }); err != nil {
		t.Fatal(err)
	}
	for seq := uint64(2); seq <= head; seq++ {
		all, err := e.Rollback(RollbackInput{Project: "p", To: Point{Seq: seq}, DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, limit := range []int{1, 3, 1000} {
			pg, err := e.Rollback(RollbackInput{Project: "p", To: Point{Seq: seq}, DryRun: true, Limit: limit})
			if err != nil {
				t.Fatal(err)
			}
			n := min(limit, len(all.Changes))
			want, _ := json.Marshal(all.Changes[:n])
			got, _ := json.Marshal(pg.Changes)
			if !bytes.Equal(got, want) || pg.Total != len(all.Changes) || pg.Truncated != (n < len(all.Changes)) {
				t.Fatalf("dry run to %d, limit %d: %s (total %d); the whole dry run's first: %s (of %d)", seq, limit, got, pg.Total, want, len(all.Changes))
			}
		}
	}
}
