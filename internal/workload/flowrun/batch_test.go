package flowrun_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/internal/workload"
	"github.com/flowctl/flowctl/internal/workload/flowrun"
	"pgregory.net/rapid"
)

// stateBuckets are the buckets a command writes besides the log: the
// projections, the status index, the rollback index and the snapshots.
var stateBuckets = []string{"proj_project", "proj_plan", "proj_task", "proj_approval", "proj_exec",
	"proj_checkpoint", "proj_meta", "proj_summary", "rollback_idx", "snapshots"}

// writeOps runs ops on a new file, batch of them to a transaction (0: each
// op a command of its own, outside any Batch), verifies it and returns
// what stateBuckets hold.
func writeOps(t *rapid.T, dir string, ops []workload.Op, batch, snapEvery int) map[string][]byte {
	clock := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	path := filepath.Join(dir, fmt.Sprintf("b%d.db", batch))
	e, err := flow.Open(path, flow.Options{Create: true, NoSync: true, Actor: "agent", Session: "bench",
		SnapshotEvery: snapEvery, Now: func() time.Time { clock = clock.Add(time.Second); return clock }})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for i := 0; i < len(ops); {
		n := max(batch, 1)
		part := ops[i:min(i+n, len(ops))]
		if batch == 0 {
			err = flowrun.Run(e, part[0])
		} else {
			err = flowrun.Batch(e, part)
		}
		if err != nil {
			t.Fatalf("batch %d, op %d: %v", batch, i, err)
		}
		i += len(part)
	}
	if _, err := e.Verify(); err != nil {
		t.Fatalf("batch %d: Verify: %v", batch, err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := eventlog.Open(path, eventlog.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	out := map[string][]byte{}
	err = l.View(func(tx *eventlog.Tx) error {
		for _, b := range stateBuckets {
			err := tx.Scan(b, nil, func(k, v []byte) error {
				if b == "snapshots" { // they carry the chain's hash, of random event ids
					v = nil
				}
				out[b+"\x00"+string(k)] = bytes.Clone(v)
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A Batch's commands share their projections in memory and write them
// once, at its end: what the file holds after is what the same commands
// leave one at a time, byte for byte, snapshots and rollback index
// included.
func TestBatch_SameAsOneAtATime(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(t *rapid.T) {
		o := workload.Options{
			Projects:        rapid.IntRange(1, 3).Draw(t, "projects"),
			Seed:            rapid.Uint64().Draw(t, "seed"),
			CheckpointEvery: rapid.IntRange(20, 300).Draw(t, "checkpointEvery"),
		}
		g := workload.New(o)
		ops := g.Fill(nil, rapid.IntRange(1, 400).Draw(t, "ops"))
		batch := rapid.IntRange(2, 200).Draw(t, "batch")
		snapEvery := rapid.IntRange(10, 200).Draw(t, "snapshotEvery")
		sub, err := os.MkdirTemp(dir, "case")
		if err != nil {
			t.Fatal(err)
		}
		want := writeOps(t, sub, ops, 0, snapEvery)
		got := writeOps(t, sub, ops, batch, snapEvery)
		for k, v := range want {
			if g, ok := got[k]; !ok || !bytes.Equal(g, v) {
				t.Fatalf("%q: batched %x (present %v), one at a time %x", k, g, ok, v)
			}
		}
		for k := range got {
			if _, ok := want[k]; !ok {
				t.Fatalf("%q only in the batched file", k)
			}
		}
	})
}

// Write at the workload's own batch size leaves a file that verifies.
func TestWrite_Verifies(t *testing.T) {
	e := mustOpen(t)
	if err := flowrun.Write(context.Background(), e, workload.New(workload.Options{Projects: 2, Seed: 3}), 2500, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Verify(); err != nil {
		t.Fatal(err)
	}
}
