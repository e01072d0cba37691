package flow

import (
	"bytes"
	"errors"
	"testing"

	"github.com/flowctl/flowctl/flow/internal/snapstore"
	"github.com/flowctl/flowctl/snapshot"
)

// TestSnapshots_CacheChangesNoByte: an engine that keeps the
// fingerprints of the snapshots it stored (the Cache) stores the
// snapshots that one resolving every base from the file does, byte for
// byte but for the chain hash.
func TestSnapshots_CacheChangesNoByte(t *testing.T) {
	t.Parallel()
	cached, uncached := snapsOpen(t, 3), snapsOpen(t, 3)
	uncached.snaps = nil // a nil Cache keeps nothing: every Put resolves its base
	deltaHistory(t, cached.Engine, 60)
	deltaHistory(t, uncached.Engine, 60)
	ka, va := snapsStored(t, cached.Engine)
	kb, vb := snapsStored(t, uncached.Engine)
	if len(ka) != len(kb) || len(ka) < 10 {
		t.Fatalf("%d and %d snapshots stored", len(ka), len(kb))
	}
	deltas := 0
	for i := range ka {
		// The logs differ in their events' ids, so in their chain hashes:
		// all else is the same.
		ha, ba, errA := snapshot.Check(va[i])
		hb, bb, errB := snapshot.Check(vb[i])
		ha.ChainHash, hb.ChainHash = [32]byte{}, [32]byte{}
		if errA != nil || errB != nil || !bytes.Equal(ka[i], kb[i]) || ha != hb || !bytes.Equal(ba, bb) || len(va[i]) != len(vb[i]) {
			t.Fatalf("snapshot %d differs: %x %+v and %x %+v", i, ka[i], ha, kb[i], hb)
		}
		if h, err := snapshot.Frame(va[i]); err != nil || !h.Packed() {
			t.Fatalf("snapshot %d is not packed: %+v, %v", i, h, err)
		} else if h.IsDelta() {
			deltas++
		}
	}
	if deltas == 0 {
		t.Fatal("no delta stored")
	}
	if _, err := cached.VerifySnapshots(""); err != nil {
		t.Fatal(err)
	}
	deltaSameStates(t, cached.Engine)
}

// TestSnapshots_PackedChainsOnOldFormats: a file whose snapshots are of
// the unpacked formats (1 and 2, as an older flowctl wrote them) gets
// packed deltas on their chains; every snapshot verifies and every read
// at a point is the replay's.
func TestSnapshots_PackedChainsOnOldFormats(t *testing.T) {
	t.Parallel()
	e := snapsOpen(t, 3)
	deltaHistory(t, e.Engine, 30)
	keys, values := snapsStored(t, e.Engine)
	// The state hashes of the old formats (the SHA-256 of the state's
	// body), which an export names.
	oldHash := map[uint64][32]byte{}
	for _, k := range keys {
		scope, seq, _ := snapstore.ParseKey(k)
		var buf bytes.Buffer
		if _, err := e.ExportSnapshot(&buf, scope, Point{Seq: seq}); err != nil {
			t.Fatal(err)
		}
		h, err := snapshot.Frame(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		oldHash[seq] = h.StateHash
	}
	for i, v := range values {
		var old []byte
		var err error
		if snapshot.IsDelta(v) {
			h, d, derr := snapshot.DecodeDelta(v)
			if derr != nil {
				t.Fatal(derr)
			}
			h.StateHash, h.BaseHash = oldHash[h.Seq], oldHash[h.BaseSeq]
			old, _, err = snapshot.EncodeDelta(h, d)
		} else {
			h, s, derr := snapshot.Decode(v)
			if derr != nil {
				t.Fatal(derr)
			}
			old, _, err = snapshot.Encode(h, s)
		}
		if err != nil {
			t.Fatal(err)
		}
		snapsPut(t, e.Engine, keys[i], old)
	}
	e.snaps = &snapstore.Cache{} // as a new process: bases resolved from the file
	oldTop := keys[len(keys)-1]
	deltaMore(t, e.Engine, 12)
	infos := mustSnapshots(t, e.Engine, "p")
	_, topSeq, _ := snapstore.ParseKey(oldTop)
	onOld := false
	for _, in := range infos {
		if in.Seq > topSeq && in.Kind == "delta" && in.Base == topSeq {
			onOld = true
		}
	}
	if !onOld {
		t.Fatalf("no new delta on the old-format snapshot at %d: %+v", topSeq, infos)
	}
	if _, err := e.VerifySnapshots(""); err != nil {
		t.Fatal(err)
	}
	deltaSameStates(t, e.Engine)
}

// TestSnapshots_RolledBackSnapshotIsNotABase: a batch that stored a
// snapshot and then failed leaves the Cache describing a snapshot the
// file does not hold; the next snapshot is built on what the file holds.
func TestSnapshots_RolledBackSnapshotIsNotABase(t *testing.T) {
	t.Parallel()
	e := snapsOpen(t, 3)
	deltaHistory(t, e.Engine, 20)
	boom := errors.New("boom")
	err := e.Batch(func(b *Engine) error {
		if _, err := b.MergeContext(ContextPatch{Project: "p", ID: "T-3", Patch: `{"lost":true}`}); err != nil {
			return err
		}
		if _, err := b.CreateCheckpoint(NewCheckpoint{Project: "p", Label: "lost"}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Batch = %v", err)
	}
	deltaMore(t, e.Engine, 9)
	if _, err := e.VerifySnapshots(""); err != nil {
		t.Fatal(err)
	}
	deltaSameStates(t, e.Engine)
}
