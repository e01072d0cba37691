package snapshot_test

import (
	"bytes"
	"testing"

	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/snapshot"
)

// TestDecodeRaw_IsTheBodyEntityByEntity: the raw state of a snapshot
// writes back to its body byte for byte, each entity is the encoding of
// the entity Decode gives, with its id; a raw delta holds the delta's
// changed entities and deletions.
func TestDecodeRaw_IsTheBodyEntityByEntity(t *testing.T) {
	for _, s := range []*projection.Scope{smallState(t), bigState(t, 40, 30), workState(t, 60)} {
		b, h := mustEncode(t, testHeader(s.Project.Name), s), snapshot.Header{}
		packed, _, err := snapshot.PackFull(testHeader(s.Project.Name), mustBody(t, s))
		if err != nil {
			t.Fatal(err)
		}
		for _, blob := range [][]byte{b, packed} {
			_, raw, err := snapshot.DecodeRaw(blob)
			if err != nil {
				t.Fatalf("DecodeRaw: %v", err)
			}
			if !bytes.Equal(snapshot.AppendRawScope(nil, raw), mustBody(t, s)) {
				t.Fatal("the raw state does not write back to the body")
			}
			checkRawList(t, raw.Tasks, s.Tasks)
			checkRawList(t, raw.Execs, s.Execs)
			checkRawList(t, raw.Plans, s.Plans)
			if id, ok := snapshot.EntityID(raw.Project, true); !ok || id != s.Project.Name {
				t.Errorf("project id %q, %v", id, ok)
			}
		}
		_ = h
	}
	base, cur := deltaStates(t)
	b := mustEncodeDelta(t, testDeltaHeader(t, base, cur), snapshot.Diff(base, cur))
	_, d, err := snapshot.DecodeDelta(b)
	if err != nil {
		t.Fatal(err)
	}
	_, raw, del, err := snapshot.DecodeDeltaRaw(b)
	if err != nil {
		t.Fatalf("DecodeDeltaRaw: %v", err)
	}
	checkRawList(t, raw.Tasks, d.Changed.Tasks)
	checkRawList(t, raw.Execs, d.Changed.Execs)
	if len(del.Tasks) != 1 || del.Tasks[0] != d.Deleted.Tasks[0] {
		t.Errorf("deleted %v, want %v", del.Tasks, d.Deleted.Tasks)
	}
	if _, _, err := snapshot.DecodeRaw(b); err == nil {
		t.Error("DecodeRaw took a delta")
	}
	wantCorruptRaw(t, reseal(append([]byte(nil), b...)))
}

func checkRawList[V interface{ EntityID() string }](t *testing.T, raw [][]byte, want []V) {
	t.Helper()
	if len(raw) != len(want) {
		t.Fatalf("%d raw entities, want %d", len(raw), len(want))
	}
	for i, e := range raw {
		enc, _ := projection.AppendEntity(nil, want[i])
		id, ok := snapshot.EntityID(e, false)
		if f, fok := snapshot.StringFields(e, "id", "nosuch"); !fok || f[0] != id || f[1] != "" {
			t.Fatalf("StringFields = %q, %v", f, fok)
		}
		if !bytes.Equal(e, enc) || !ok || id != want[i].EntityID() {
			t.Fatalf("entity %d (%s): raw %q id %q, want %q", i, want[i].EntityID(), e, id, enc)
		}
	}
}

// wantCorruptRaw: every truncation of a snapshot is refused raw.
func wantCorruptRaw(t *testing.T, b []byte) {
	for n := range len(b) - 1 {
		if _, _, _, err := snapshot.DecodeDeltaRaw(b[:n]); err == nil {
			t.Fatalf("a delta cut to %d bytes decoded raw", n)
		}
	}
}
