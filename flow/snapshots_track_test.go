package flow

import (
	"errors"
	"fmt"
	"testing"

	"github.com/flowctl/flowctl/flow/internal/snapstore"
	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/snapshot"
)

// TestSnapshots_TrackedFromTheJournal: an engine that keeps writing
// makes its snapshots from what its folds wrote since the last one (the
// Cache's journal), not from the whole state; they are of the summed
// formats (5 and 6), every one verifies against a replay, and every read
// at a point is the replay's. Batches, rollbacks (entities deleted),
// failed commands and a new process (no journal) in between change
// none of that.
func TestSnapshots_TrackedFromTheJournal(t *testing.T) {
	t.Parallel()
	e := snapsOpen(t, 3)
	deltaHistory(t, e.Engine, 40)
	if e.snaps.Tracked() == 0 {
		t.Fatal("no snapshot was made from the journal")
	}
	cp, err := e.CreateCheckpoint(NewCheckpoint{Project: "p", Label: "before"})
	if err != nil {
		t.Fatal(err)
	}
	deltaMore(t, e.Engine, 7)
	for i := range 5 { // a batch of commands, a snapshot due inside it
		err := e.Batch(func(b *Engine) error {
			for j := range 4 {
				if _, err := b.MergeContext(ContextPatch{Project: "p", ID: fmt.Sprintf("T-%d", 5+j), Patch: fmt.Sprintf(`{"batch":%d}`, i)}); err != nil {
					return err
				}
			}
			_, err := b.AddTask(NewTask{Project: "p", Title: fmt.Sprintf("batched %d", i)})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// A command that fails: the cache forgets its journals.
	if _, err := e.MergeContext(ContextPatch{Project: "p", ID: "T-999", Patch: `{}`}); err == nil {
		t.Fatal("a patch of a task that does not exist was taken")
	}
	deltaMore(t, e.Engine, 7)
	// A rollback deletes entities made since the checkpoint.
	if _, err := e.Rollback(RollbackInput{Project: "p", To: Point{Checkpoint: cp.ID}, Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	deltaMore(t, e.Engine, 9)
	before := e.snaps.Tracked()
	e.snaps = &snapstore.Cache{} // as a new process
	deltaMore(t, e.Engine, 12)
	if e.snaps.Tracked() == 0 || before == 0 {
		t.Fatalf("snapshots from the journal: %d, then %d after a new cache", before, e.snaps.Tracked())
	}
	infos := mustSnapshots(t, e.Engine, "p")
	summed := 0
	keys, values := snapsStored(t, e.Engine)
	for i := range keys {
		if h, err := snapshot.Frame(values[i]); err == nil && h.Summed() {
			summed++
		}
	}
	if summed == 0 || len(infos) != len(keys) {
		t.Fatalf("%d of %d snapshots summed", summed, len(keys))
	}
	if _, err := e.VerifySnapshots(""); err != nil {
		t.Fatal(err)
	}
	deltaSameStates(t, e.Engine)
}

// TestSnapshots_DamagedSummedSnapshotIsDetected: damage to the state a
// summed delta names (its entities) is found by verify, and reads skip
// it.
func TestSnapshots_DamagedSummedSnapshotIsDetected(t *testing.T) {
	t.Parallel()
	e := snapsOpen(t, 3)
	deltaHistory(t, e.Engine, 30)
	keys, values := snapsStored(t, e.Engine)
	at := -1
	for i := len(values) - 1; i >= 0; i-- {
		if h, err := snapshot.Frame(values[i]); err == nil && h.Format == snapshot.NamesDeltaVersion {
			at = i
			break
		}
	}
	if at < 0 {
		t.Fatal("no summed delta stored")
	}
	h, d, err := snapshot.DecodeDelta(values[at])
	if err != nil {
		t.Fatal(err)
	}
	h.StateHash[0] ^= 1 // a delta that names another state, soundly framed
	b, _, err := snapshot.PackDeltaNames(h, snapshot.AppendDeltaBody(nil, rawScopeOf(t, d), &d.Deleted))
	if err != nil {
		t.Fatal(err)
	}
	snapsPut(t, e.Engine, keys[at], b)
	if _, err := e.VerifySnapshots("p"); !errors.Is(err, snapshot.ErrCorrupt) {
		t.Fatalf("VerifySnapshots = %v, want the damage found", err)
	}
	deltaSameStates(t, e.Engine)
}

// rawScopeOf is the RawScope of a delta's changed entities.
func rawScopeOf(t *testing.T, d *snapshot.Delta) *snapshot.RawScope {
	t.Helper()
	enc := func(v any) []byte {
		b, ok := projection.AppendEntity(nil, v)
		if !ok {
			t.Fatalf("no encoding of %T", v)
		}
		return b
	}
	r := &snapshot.RawScope{Plans: [][]byte{}, Tasks: [][]byte{}, Approvals: [][]byte{}, Execs: [][]byte{}, Checkpoints: [][]byte{}}
	if d.Changed.Project != nil {
		r.Project = enc(d.Changed.Project)
	}
	for _, v := range d.Changed.Plans {
		r.Plans = append(r.Plans, enc(v))
	}
	for _, v := range d.Changed.Tasks {
		r.Tasks = append(r.Tasks, enc(v))
	}
	for _, v := range d.Changed.Approvals {
		r.Approvals = append(r.Approvals, enc(v))
	}
	for _, v := range d.Changed.Execs {
		r.Execs = append(r.Execs, enc(v))
	}
	for _, v := range d.Changed.Checkpoints {
		r.Checkpoints = append(r.Checkpoints, enc(v))
	}
	return r
}
