package snapshot_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"

	"github.com/flowctl/flowctl/internal/workload"
	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/snapshot"
)

// rawOf is the RawScope of s: its entities' encodings.
func rawOf(s *projection.Scope) *snapshot.RawScope {
	r := &snapshot.RawScope{}
	if s.Project != nil {
		r.Project, _ = projection.AppendEntity(nil, s.Project)
	}
	add := func(l *[][]byte, v any) {
		b, _ := projection.AppendEntity(nil, v)
		*l = append(*l, b)
	}
	r.Plans, r.Tasks, r.Approvals, r.Execs, r.Checkpoints = [][]byte{}, [][]byte{}, [][]byte{}, [][]byte{}, [][]byte{}
	for _, v := range s.Plans {
		add(&r.Plans, v)
	}
	for _, v := range s.Tasks {
		add(&r.Tasks, v)
	}
	for _, v := range s.Approvals {
		add(&r.Approvals, v)
	}
	for _, v := range s.Execs {
		add(&r.Execs, v)
	}
	for _, v := range s.Checkpoints {
		add(&r.Checkpoints, v)
	}
	return r
}

func TestRawScope_MatchesAppendScope(t *testing.T) {
	t.Parallel()
	for name, s := range map[string]*projection.Scope{
		"small": smallState(t), "big": bigState(t, 40, 70), "empty": normalize(&projection.Scope{}),
	} {
		t.Run(name, func(t *testing.T) {
			r := rawOf(s)
			body := mustBody(t, normalize(s))
			if got := snapshot.AppendRawScope(nil, r); !bytes.Equal(got, body) {
				t.Fatalf("AppendRawScope differs from AppendScope (%d bytes, want %d)", len(got), len(body))
			}
			if got, want := snapshot.RawStateHash(r), mustStateHash(t, normalize(s)); got != want {
				t.Fatal("RawStateHash is not StateHash")
			}
			if got := r.RawLen(); got != len(body) {
				t.Fatalf("RawLen = %d, want %d", got, len(body))
			}
		})
	}
}

func TestPackFull_RoundTrip(t *testing.T) {
	t.Parallel()
	s := bigState(t, 40, 70)
	b, h, err := snapshot.PackFull(testHeader("big"), mustBody(t, s))
	if err != nil {
		t.Fatal(err)
	}
	plain := mustEncode(t, testHeader("big"), s)
	if h.Format != snapshot.PackedFullVersion || h.IsDelta() || snapshot.IsDelta(b) || h.StateHash != mustStateHash(t, s) || len(b) >= len(plain)/2 {
		t.Fatalf("PackFull = %d bytes (plain %d), header %+v", len(b), len(plain), h)
	}
	got, st, err := snapshot.Decode(b)
	if err != nil || got != h {
		t.Fatalf("Decode = %+v, %v; want %+v", got, err, h)
	}
	if !bytes.Equal(mustBody(t, st), mustBody(t, s)) {
		t.Fatal("the packed snapshot decodes to another state")
	}
	if ch, body, err := snapshot.Check(b); err != nil || ch != h || !bytes.Equal(body, mustBody(t, s)) {
		t.Fatalf("Check = %v", err)
	}
	if fh, err := snapshot.Frame(b); err != nil || fh != h {
		t.Fatalf("Frame = %+v, %v", fh, err)
	}
	t.Logf("packed %d bytes, plain %d", len(b), len(plain))
}

func TestPackDelta_RoundTrip(t *testing.T) {
	t.Parallel()
	base, cur := deltaStates(t)
	d := snapshot.Diff(base, cur)
	changed := rawOf(d.Changed)
	if d.Changed.Project == nil {
		changed.Project = nil
	}
	body := snapshot.AppendDeltaBody(nil, changed, &d.Deleted)
	plain, ph, err := snapshot.EncodeDelta(testDeltaHeader(t, base, cur), d)
	if err != nil {
		t.Fatal(err)
	}
	b, h, err := snapshot.PackDelta(testDeltaHeader(t, base, cur), body)
	if err != nil {
		t.Fatal(err)
	}
	if h.Format != snapshot.PackedDeltaVersion || !h.IsDelta() || !snapshot.IsDelta(b) || h.BodyHash != ph.BodyHash {
		t.Fatalf("PackDelta's header = %+v; EncodeDelta's body hash %x (the bodies must be the same)", h, ph.BodyHash)
	}
	got, gd, err := snapshot.DecodeDelta(b)
	if err != nil || got != h {
		t.Fatalf("DecodeDelta = %+v, %v; want %+v", got, err, h)
	}
	if s := resolve(t, base, gd); !bytes.Equal(mustBody(t, s), mustBody(t, cur)) {
		t.Fatal("the packed delta does not resolve to the state it was made of")
	}
	if !reflect.DeepEqual(gd.Deleted, d.Deleted) {
		t.Fatalf("deleted = %v, want %v", gd.Deleted, d.Deleted)
	}
	if _, _, err := snapshot.Decode(b); !errors.Is(err, snapshot.ErrDelta) {
		t.Fatalf("Decode of a packed delta = %v, want ErrDelta", err)
	}
	if _, _, err := snapshot.PackDelta(snapshot.Header{Scope: "big", Seq: 3, BaseSeq: 3}, body); err == nil {
		t.Fatal("PackDelta took a base that is not before it")
	}
	t.Logf("packed delta %d bytes, plain %d", len(b), len(plain))
}

// packedSmall is a packed full snapshot of the small state.
func packedSmall(tb testing.TB) []byte {
	tb.Helper()
	b, _, err := snapshot.PackFull(testHeader("p"), mustBody(tb, smallState(tb)))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// TestPacked_EveryBitFlip flips every bit of a packed full snapshot and
// of a packed delta, one at a time: every one is detected.
func TestPacked_EveryBitFlip(t *testing.T) {
	t.Parallel()
	base, cur := deltaStates(t)
	d := snapshot.Diff(base, cur)
	delta, _, err := snapshot.PackDelta(testDeltaHeader(t, base, cur), snapshot.AppendDeltaBody(nil, rawOf(d.Changed), &d.Deleted))
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		b      []byte
		decode func([]byte) error
	}{
		"full":  {packedSmall(t), func(b []byte) error { _, _, err := snapshot.Decode(b); return err }},
		"delta": {delta, func(b []byte) error { _, _, err := snapshot.DecodeDelta(b); return err }},
	} {
		b := bytes.Clone(c.b)
		for i := range b {
			for bit := range 8 {
				b[i] ^= 1 << bit
				if err := c.decode(b); !errors.Is(err, snapshot.ErrCorrupt) {
					t.Fatalf("%s: flipping bit %d of byte %d (of %d) = %v, want ErrCorrupt", name, bit, i, len(b), err)
				}
				b[i] ^= 1 << bit
			}
		}
		if err := c.decode(b); err != nil {
			t.Fatalf("%s: the unflipped snapshot: %v", name, err)
		}
		for n := range len(b) {
			if err := c.decode(b[:n]); !errors.Is(err, snapshot.ErrCorrupt) {
				t.Fatalf("%s cut to %d bytes = %v, want ErrCorrupt", name, n, err)
			}
		}
	}
}

// TestPacked_LyingLengths: a packed body whose declared length
// (decompressed) is not what it decompresses to, or is over MaxBody, is
// corrupt, and the declared length allocates nothing.
func TestPacked_LyingLengths(t *testing.T) {
	t.Parallel()
	orig := packedSmall(t)
	at := offScope + len("p") // the decompressed length
	n := binary.BigEndian.Uint64(orig[at:])
	for _, lie := range []uint64{0, n - 1, n + 1, snapshot.MaxBody + 1, 1 << 62} {
		b := bytes.Clone(orig)
		binary.BigEndian.PutUint64(b[at:], lie)
		if _, _, err := snapshot.Decode(reseal(b)); !errors.Is(err, snapshot.ErrCorrupt) {
			t.Fatalf("declared %d (true %d): Decode = %v, want ErrCorrupt", lie, n, err)
		}
	}
}

// TestPacked_OldFormatsStillDecode: the unpacked layouts (versions 1
// and 2) read as before, beside the packed ones.
func TestPacked_OldFormatsStillDecode(t *testing.T) {
	t.Parallel()
	s := smallState(t)
	h, st, err := snapshot.Decode(mustEncode(t, testHeader("p"), s))
	if err != nil || h.Format != snapshot.FullVersion || h.BodyLen != uint64(len(mustBody(t, s))) || !bytes.Equal(mustBody(t, st), mustBody(t, s)) {
		t.Fatalf("version 1: %+v, %v", h, err)
	}
	dh, _, err := snapshot.DecodeDelta(smallDelta(t))
	if err != nil || dh.Format != snapshot.DeltaVersion {
		t.Fatalf("version 2: %+v, %v", dh, err)
	}
}

// BenchmarkDecodePackedWork is BenchmarkDecodeWork on the same state
// packed: what decompression adds to a read (bytes: the body's).
func BenchmarkDecodePackedWork(b *testing.B) {
	s := workState(b, 2000)
	blob, _, err := snapshot.PackFull(testHeader(workload.ProjectName(0)), mustBody(b, s))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(mustBody(b, s))))
	b.ReportMetric(float64(len(blob)), "stored-bytes")
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := snapshot.Decode(blob); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPackFullWork is what packing a state's body costs.
func BenchmarkPackFullWork(b *testing.B) {
	body := mustBody(b, workState(b, 2000))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := snapshot.PackFull(testHeader(workload.ProjectName(0)), body); err != nil {
			b.Fatal(err)
		}
	}
}
