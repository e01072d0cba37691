package flow

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow/internal/snapstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/snapshot"
)

// deltaHistory writes project p with 50 tasks that carry some context,
// then rounds small changes to T-1 and T-2 (context merges, a step, an
// exec record): with snapshots every few events, each is a small delta
// of a big state, so chains grow until their bytes end them.
func deltaHistory(t *testing.T, e *Engine, rounds int) {
	t.Helper()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(e.CreateProject(NewProject{Name: "p"}))
	for i := range 50 {
		task, err := e.AddTask(NewTask{Project: "p", Title: fmt.Sprintf("task %d with a title long enough to weigh", i), Tags: []string{"a", "b"}})
		must(task, err)
		must(e.MergeContext(ContextPatch{Project: "p", ID: task.ID, Patch: fmt.Sprintf(`{"branch":"feature/%d","notes":"%s"}`, i, strings.Repeat("n", 200))}))
	}
	for i := range rounds {
		id := []string{"T-1", "T-2"}[i%2]
		must(e.MergeContext(ContextPatch{Project: "p", ID: id, Patch: fmt.Sprintf(`{"round":%d}`, i)}))
		switch i % 9 {
		case 3:
			must(e.AddStep(NewStep{Project: "p", Task: id, Title: "step"}))
		case 6:
			must(e.RecordExec(NewExec{Project: "p", Task: id, Command: "make", Success: true}))
		case 8:
			must(e.CreateCheckpoint(NewCheckpoint{Project: "p", Label: fmt.Sprint("round ", i)}))
		}
	}
}

// deltaChains returns the stored snapshots of p, checking that each
// delta lists its base as the snapshot before it and a chain one longer.
func deltaChains(t *testing.T, e *Engine) []SnapshotInfo {
	t.Helper()
	infos, err := e.Snapshots("p")
	if err != nil {
		t.Fatal(err)
	}
	for i, in := range infos {
		if in.Kind == "full" {
			continue
		}
		if in.Kind != "delta" || i == 0 || in.Base != infos[i-1].Seq || in.Chain != infos[i-1].Chain+1 {
			t.Fatalf("snapshot %d = %+v after %+v: want a delta on the one before it", i, in, infos[max(i-1, 0)])
		}
	}
	return infos
}

// TestSnapshots_DeltaChain: deltas go on the newest snapshot, chain on
// chain, until their bytes would pass MaxChainBytes times the chain's
// full snapshot; then a full one starts the next chain. No chain passes
// the bound, and every state resolves to the one the log gives.
func TestSnapshots_DeltaChain(t *testing.T) {
	t.Parallel()
	e := snapsOpen(t, 3)
	deltaHistory(t, e.Engine, 90)
	infos := deltaChains(t, e.Engine)
	longest, fulls, after := 0, 0, false
	fullBytes, deltaBytes := 0, 0
	for i, in := range infos {
		if !in.OK {
			t.Errorf("bad snapshot on a healthy file: %+v", in)
		}
		longest = max(longest, in.Chain)
		if in.Kind == "full" {
			fulls++
			after = after || (i > 0 && infos[i-1].Chain > 0)
			fullBytes, deltaBytes = in.BodyBytes+snapshot.MinSize+len(in.Project), 0 // weighed unpacked
			continue
		}
		if deltaBytes += in.BodyBytes + snapshot.MinDeltaSize + len(in.Project); deltaBytes > snapstore.MaxChainBytes*fullBytes {
			t.Errorf("snapshot %+v: its chain's deltas weigh %d bytes, over %d times its full snapshot's %d", in, deltaBytes, snapstore.MaxChainBytes, fullBytes)
		}
	}
	if longest < 4 || longest >= MaxDeltaChain || !after || fulls < 2 {
		t.Fatalf("longest chain %d, %d full snapshots, a full one after a chain: %v; want chains of 4 or more ended by their bytes", longest, fulls, after)
	}
	if _, err := e.VerifySnapshots("p"); err != nil {
		t.Fatalf("VerifySnapshots: %v", err)
	}
	deltaSameStates(t, e.Engine)
	if w := e.warned(); len(w) != 0 {
		t.Fatalf("warnings on a healthy file: %q", w)
	}
	t.Logf("%d snapshots, %d full, longest chain %d", len(infos), fulls, longest)
}

// deltaInChain returns the index in infos of the pos-th delta (from 1)
// of the last chain that has one.
func deltaInChain(t *testing.T, infos []SnapshotInfo, pos int) int {
	t.Helper()
	for i := len(infos) - 1; i >= 0; i-- {
		if infos[i].Chain == pos {
			return i
		}
	}
	t.Fatalf("no chain has %d deltas", pos)
	return 0
}

// TestSnapshots_CorruptDeltaInTheMiddleOfAChain: a damaged delta fails
// itself and every delta above it; reads fall back to the delta under
// it and stay right; ls and verify name them; the next snapshot written
// is a full one.
func TestSnapshots_CorruptDeltaInTheMiddleOfAChain(t *testing.T) {
	t.Parallel()
	for name, damage := range map[string]func([]byte) []byte{
		"BitFlipped": func(v []byte) []byte { v = bytes.Clone(v); v[len(v)/2] ^= 0x20; return v },
		"Truncated":  func(v []byte) []byte { return v[:len(v)-1] },
		"Removed":    nil,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := snapsOpen(t, 3)
			deltaHistory(t, e.Engine, 60)
			infos := deltaChains(t, e.Engine)
			for n := 0; infos[len(infos)-1].Chain < 4 || infos[len(infos)-1].Chain >= MaxDeltaChain; n++ {
				if n == 200 {
					t.Fatalf("the last chain is %d deltas long; the test needs one between 4 and %d", infos[len(infos)-1].Chain, MaxDeltaChain-1)
				}
				deltaMore(t, e.Engine, 1)
				infos = deltaChains(t, e.Engine)
			}
			i := deltaInChain(t, infos, 3)
			key := snapstore.Key("p", infos[i].Seq)
			keys, values := snapsStored(t, e.Engine)
			for j, k := range keys {
				if bytes.Equal(k, key) {
					if damage == nil {
						snapsDelete(t, e.Engine, k)
					} else {
						snapsPut(t, e.Engine, k, damage(values[j]))
					}
				}
			}
			deltaSameStates(t, e.Engine)
			bad := snapsName("p", infos[i].Seq)
			if warned := strings.Join(e.warned(), "\n"); !strings.Contains(warned, bad) {
				t.Errorf("no warning names %s:\n%s", bad, warned)
			}
			listed, err := e.Snapshots("p")
			if err != nil {
				t.Fatal(err)
			}
			verified, verr := e.VerifySnapshots("p")
			if !errors.Is(verr, snapshot.ErrCorrupt) {
				t.Fatalf("VerifySnapshots = %v, want a snapshot corruption", verr)
			}
			for _, got := range [][]SnapshotInfo{listed, verified} {
				for _, in := range got {
					if wantBad := in.Seq >= infos[i].Seq; in.OK == wantBad {
						t.Errorf("%+v: want bad %v (the damaged delta is at seq %d)", in, wantBad, infos[i].Seq)
					}
				}
			}
			// The writer does not build on a damaged chain.
			deltaMore(t, e.Engine, 3)
			after, _ := e.Snapshots("p")
			if last := after[len(after)-1]; last.Seq <= infos[len(infos)-1].Seq || last.Kind != "full" || !last.OK {
				t.Fatalf("the snapshot after the damage = %+v, want a good full one", last)
			}
			deltaSameStates(t, e.Engine)
		})
	}
}

// deltaMore merges n changes into T-3's context.
func deltaMore(t *testing.T, e *Engine, n int) {
	t.Helper()
	for range n {
		if _, err := e.MergeContext(ContextPatch{Project: "p", ID: "T-3", Patch: fmt.Sprintf(`{"more":%d}`, snapsHead(t, e))}); err != nil {
			t.Fatal(err)
		}
	}
}

func snapsDelete(t *testing.T, e *Engine, key []byte) {
	t.Helper()
	if err := e.log.Update(func(tx store.Tx) error { return tx.Delete(snapstore.Bucket, key) }); err != nil {
		t.Fatal(err)
	}
}

// TestSnapshots_EveryDamageOfAStoredDeltaIsDetected flips every bit and
// cuts every length of a stored delta: resolving it always fails as
// corrupt, never with a wrong state.
func TestSnapshots_EveryDamageOfAStoredDeltaIsDetected(t *testing.T) {
	t.Parallel()
	e := snapsOpen(t, 3)
	deltaHistory(t, e.Engine, 20)
	infos := deltaChains(t, e.Engine)
	i := deltaInChain(t, infos, 2)
	seq := infos[i].Seq
	err := e.view(func(tx store.Tx) error {
		orig, err := tx.Get(snapstore.Bucket, snapstore.Key("p", seq))
		if err != nil {
			return err
		}
		orig = bytes.Clone(orig)
		if _, _, err := snapstore.ResolveChecked(tx, "p", seq, orig); err != nil {
			t.Fatalf("the undamaged delta: %v", err)
		}
		if _, _, err := snapstore.LoadResolved(tx, "p", seq, orig); err != nil {
			t.Fatalf("the undamaged delta: %v", err)
		}
		// As verify resolves it (the resolved state hashed too) and as a
		// read does.
		check := func(what string, v []byte) {
			if _, _, err := snapstore.ResolveChecked(tx, "p", seq, v); !errors.Is(err, snapshot.ErrCorrupt) {
				t.Fatalf("%s of the delta at %d (%d bytes): resolve = %v, want corrupt", what, seq, len(orig), err)
			}
			if _, _, err := snapstore.LoadResolved(tx, "p", seq, v); !errors.Is(err, snapshot.ErrCorrupt) {
				t.Fatalf("%s of the delta at %d (%d bytes): load = %v, want corrupt", what, seq, len(orig), err)
			}
		}
		b := bytes.Clone(orig)
		for j := range b {
			for bit := range 8 {
				b[j] ^= 1 << bit
				check(fmt.Sprintf("bit %d of byte %d", bit, j), b)
				b[j] ^= 1 << bit
			}
		}
		for n := range len(orig) {
			check(fmt.Sprintf("the first %d bytes", n), orig[:n:n])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSnapshots_ExportOfADeltaImports: exporting at a delta's seq writes
// a whole snapshot, which imports (replacing the delta, whose chain
// still resolves on it) and verifies; a delta itself is refused.
func TestSnapshots_ExportOfADeltaImports(t *testing.T) {
	t.Parallel()
	e := snapsOpen(t, 3)
	deltaHistory(t, e.Engine, 30)
	infos := deltaChains(t, e.Engine)
	i := deltaInChain(t, infos, 2)
	if i+1 == len(infos) {
		t.Fatal("the test needs a snapshot after the delta it exports")
	}
	var buf bytes.Buffer
	info, err := e.ExportSnapshot(&buf, "p", Point{Seq: infos[i].Seq})
	_, st, derr := snapshot.Decode(buf.Bytes())
	var sum [32]byte // the state hash of the stored delta's format (6)
	if derr == nil {
		sum = snapshot.SumOf(st)
	}
	if err != nil || derr != nil || info.Kind != "full" || hex.EncodeToString(sum[:]) != infos[i].StateHash || snapshot.IsDelta(buf.Bytes()) {
		t.Fatalf("ExportSnapshot = %+v, %v; want a full snapshot of the delta's state %s", info, err, infos[i].StateHash)
	}
	if _, _, err := snapshot.Decode(buf.Bytes()); err != nil {
		t.Fatalf("the export does not decode alone: %v", err)
	}
	keys, values := snapsStored(t, e.Engine)
	for j, k := range keys {
		if bytes.Equal(k, snapstore.Key("p", infos[i].Seq)) {
			if _, err := e.ImportSnapshot(values[j]); ErrorCode(err) != CodeInvalid {
				t.Fatalf("ImportSnapshot of a stored delta = %v, want invalid", err)
			}
		}
	}
	if _, err := e.ImportSnapshot(buf.Bytes()); err != nil {
		t.Fatalf("ImportSnapshot: %v", err)
	}
	verified, err := e.VerifySnapshots("p")
	if err != nil {
		t.Fatalf("VerifySnapshots after the import: %v", err)
	}
	for _, in := range verified {
		if in.Seq == infos[i].Seq && in.Kind != "full" {
			t.Fatalf("%+v: want the imported full snapshot stored", in)
		}
		if in.Seq == infos[i+1].Seq && infos[i+1].Kind == "delta" && in.Chain != 1 {
			t.Fatalf("%+v: want the delta above the import to resolve on it", in)
		}
	}
	deltaSameStates(t, e.Engine)
	if w := e.warned(); len(w) != 0 {
		t.Fatalf("warnings: %q", w)
	}
}

// deltaSameStates checks that p's whole state read at every seq (through
// snapshots) is the state a replay of the log alone gives there.
func deltaSameStates(t *testing.T, e *Engine) {
	t.Helper()
	head := snapsHead(t, e)
	seqs := make([]uint64, head+1)
	for i := range seqs {
		seqs[i] = uint64(i)
	}
	err := e.view(func(tx store.Tx) error {
		return snapstore.ReplayProject(tx, "p", seqs, func(i int, want *projection.Memory) error {
			got, err := e.stateAt(tx, "p", seqs[i])
			if err != nil {
				return err
			}
			a, _ := snapshot.EncodeState(got.Scope("p"))
			b, _ := snapshot.EncodeState(want.Scope("p"))
			if !bytes.Equal(a, b) {
				t.Fatalf("the state of p at seq %d differs from a replay of the log", seqs[i])
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestResolvesTo: the proof a delta must pass before it is stored holds
// for the delta of a state and fails for a state hash it does not give.
func TestResolvesTo(t *testing.T) {
	t.Parallel()
	e := snapsOpen(t, 3)
	deltaHistory(t, e.Engine, 12)
	infos := deltaChains(t, e.Engine)
	i := deltaInChain(t, infos, 1)
	err := e.view(func(tx store.Tx) error {
		load := func(seq uint64) snapstore.Resolved {
			v, err := tx.Get(snapstore.Bucket, snapstore.Key("p", seq))
			if err != nil {
				t.Fatal(err)
			}
			r, _, err := snapstore.ResolveChecked(tx, "p", seq, v)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		cur := load(infos[i].Seq).State
		h := snapshot.Header{Scope: "p", Seq: infos[i].Seq, BaseSeq: infos[i-1].Seq}
		b, _, err := snapshot.EncodeDelta(h, snapshot.Diff(load(infos[i-1].Seq).State, cur))
		if err != nil {
			return err
		}
		want, _ := snapshot.StateHash(cur)
		if !snapstore.ResolvesTo(load(infos[i-1].Seq), b, want) {
			t.Error("a delta does not resolve to the state it was made of")
		}
		if snapstore.ResolvesTo(load(infos[i-1].Seq), b, [32]byte{1}) {
			t.Error("a delta resolves to a state hash it does not give")
		}
		if snapstore.ResolvesTo(load(infos[i-1].Seq), b[:len(b)-1], want) {
			t.Error("a damaged delta resolves")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
