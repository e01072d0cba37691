package flow

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow/internal/snapstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/snapshot"
	"pgregory.net/rapid"
)

// TestSnapshots_FromCapturesAndKeptStates: for any history of batches and
// single commands (tasks, context, steps, exec records, checkpoints,
// rollbacks that delete entities), with any snapshot spacing, the
// snapshots a writing engine makes from what its batches' flushes
// encoded (the journal's captures) and from the states it keeps whole
// (full snapshots that read nothing) verify, and every read at a point
// of the project is a replay's. Over the cases, both shortcuts are taken.
func TestSnapshots_FromCapturesAndKeptStates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	n, captured, whole := 0, 0, 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		path := filepath.Join(dir, fmt.Sprintf("c%d.db", n))
		e, err := Open(path, Options{Create: true, NoSync: true, Actor: "tester", Session: "s1", Now: fixedClock(),
			SnapshotEvery: rapid.IntRange(3, 40).Draw(rt, "every")})
		if err != nil {
			rt.Fatal(err)
		}
		defer e.Close()
		if _, err := e.CreateProject(NewProject{Name: "p"}); err != nil {
			rt.Fatal(err)
		}
		var ids, checkpoints []string // the live tasks, the checkpoints
		task := func() string { return rapid.SampledFrom(ids).Draw(rt, "task") }
		op := func(b *Engine) error {
			var err error
			switch k := rapid.IntRange(0, 9).Draw(rt, "op"); {
			case k <= 2 || len(ids) == 0:
				var r *projection.Task
				r, err = b.AddTask(NewTask{Project: "p", Title: "task " + strings.Repeat("t", rapid.IntRange(0, 300).Draw(rt, "len"))})
				if err == nil {
					ids = append(ids, r.ID)
				}
			case k <= 5:
				_, err = b.MergeContext(ContextPatch{Project: "p", ID: task(), Patch: fmt.Sprintf(`{"k%d":"%s"}`, k, strings.Repeat("v", rapid.IntRange(0, 200).Draw(rt, "v")))})
			case k == 6:
				_, err = b.AddStep(NewStep{Project: "p", Task: task(), Title: "step"})
			case k == 7:
				_, err = b.RecordExec(NewExec{Project: "p", Task: task(), Command: "make", Success: true})
			case k == 8:
				var cp *projection.Checkpoint
				if cp, err = b.CreateCheckpoint(NewCheckpoint{Project: "p", Label: "cp"}); err == nil {
					checkpoints = append(checkpoints, cp.ID)
				}
			default:
				if len(checkpoints) == 0 || b.batch != nil {
					return nil
				}
				to := rapid.SampledFrom(checkpoints).Draw(rt, "to")
				if _, err = b.Rollback(RollbackInput{Project: "p", To: Point{Checkpoint: to}, Reason: "test"}); err != nil {
					return err
				}
				live, err := b.Tasks("p", TaskFilter{})
				if err != nil {
					return err
				}
				ids = ids[:0]
				for _, t := range live {
					ids = append(ids, t.ID)
				}
			}
			return err
		}
		for range rapid.IntRange(1, 30).Draw(rt, "rounds") {
			if rapid.Bool().Draw(rt, "batch") {
				err := e.Batch(func(b *Engine) error {
					for range rapid.IntRange(1, 40).Draw(rt, "ops") {
						if err := op(b); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					rt.Fatalf("batch: %v", err)
				}
			} else if err := op(e); err != nil {
				rt.Fatalf("command: %v", err)
			}
		}
		if _, err := e.VerifySnapshots(""); err != nil {
			rt.Fatal(err)
		}
		sameStates(rt, e)
		c, w := e.snaps.Reused()
		captured, whole = captured+c, whole+w
	})
	if captured == 0 || whole == 0 {
		t.Fatalf("entities from captures %d, full snapshots from kept states %d: want both", captured, whole)
	}
}

// sameStates checks that the state of project p at every seq is a
// replay's (deltaSameStates for rapid).
func sameStates(t *rapid.T, e *Engine) {
	head, _, err := storeHead(e.log)
	if err != nil {
		t.Fatal(err)
	}
	seqs := make([]uint64, head+1)
	for i := range seqs {
		seqs[i] = uint64(i)
	}
	err = e.view(func(tx store.Tx) error {
		return snapstore.ReplayProject(tx, "p", seqs, func(i int, want *projection.Memory) error {
			got, err := e.stateAt(tx, "p", seqs[i])
			if err != nil {
				return err
			}
			a, _ := snapshot.EncodeState(got.Scope("p"))
			b, _ := snapshot.EncodeState(want.Scope("p"))
			if !bytes.Equal(a, b) {
				return fmt.Errorf("the state of p at seq %d differs from a replay of the log", seqs[i])
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}
