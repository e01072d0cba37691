package snapshot_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/snapshot"
)

// Offsets of a delta's header fields (doc.go).
const (
	offBaseSeq       = 86
	offBaseHash      = 94
	offBodyHash      = 126
	offDeltaScopeLen = 158
	offDeltaScope    = 160
)

// deltaStates returns a base state and a later one: tasks changed, added
// and removed, an exec record added, an approval removed.
func deltaStates(tb testing.TB) (base, cur *projection.Scope) {
	tb.Helper()
	base = bigState(tb, 12, 6)
	_, cur, err := snapshot.Decode(mustEncode(tb, testHeader("big"), base)) // a copy
	if err != nil {
		tb.Fatal(err)
	}
	more := bigState(tb, 14, 7)
	cur.Tasks[3].Title = "a changed title"
	cur.Tasks = append(append(cur.Tasks[:5], cur.Tasks[6:]...), more.Tasks[12:]...) // T-6 removed, T-13 and T-14 added
	cur.Execs = append(cur.Execs, more.Execs[6])
	cur.Project.Description = "changed too"
	return base, cur
}

func testDeltaHeader(tb testing.TB, base, cur *projection.Scope) snapshot.Header {
	tb.Helper()
	h := testHeader("big")
	h.Seq, h.BaseSeq = 20, 8
	h.StateHash, h.BaseHash = mustStateHash(tb, cur), mustStateHash(tb, base)
	return h
}

func mustEncodeDelta(tb testing.TB, h snapshot.Header, d *snapshot.Delta) []byte {
	tb.Helper()
	b, _, err := snapshot.EncodeDelta(h, d)
	if err != nil {
		tb.Fatalf("EncodeDelta: %v", err)
	}
	return b
}

// smallDelta is the delta snapshot of deltaStates.
func smallDelta(tb testing.TB) []byte {
	tb.Helper()
	base, cur := deltaStates(tb)
	return mustEncodeDelta(tb, testDeltaHeader(tb, base, cur), snapshot.Diff(base, cur))
}

// resolve applies d to a copy of base (decoded from its encoding).
func resolve(tb testing.TB, base *projection.Scope, d *snapshot.Delta) *projection.Scope {
	tb.Helper()
	_, s, err := snapshot.Decode(mustEncode(tb, testHeader(scopeName(base)), base))
	if err != nil {
		tb.Fatal(err)
	}
	d.Apply(s)
	return s
}

func scopeName(s *projection.Scope) string {
	if s.Project == nil {
		return "nobody"
	}
	return s.Project.Name
}

func TestDelta_RoundTrip(t *testing.T) {
	t.Parallel()
	base, cur := deltaStates(t)
	d := snapshot.Diff(base, cur)
	if d.Changed.Project == nil || len(d.Changed.Tasks) != 3 || len(d.Changed.Execs) != 1 || !reflect.DeepEqual(d.Deleted.Tasks, []string{"T-6"}) {
		t.Fatalf("Diff = project %v, tasks %d, execs %d, deleted %v; want the project, T-4, T-13, T-14, X-7 and T-6 deleted",
			d.Changed.Project != nil, len(d.Changed.Tasks), len(d.Changed.Execs), d.Deleted.Tasks)
	}
	wantH := testDeltaHeader(t, base, cur)
	b, gotH, err := snapshot.EncodeDelta(wantH, d)
	if err != nil {
		t.Fatal(err)
	}
	if gotH.Format != snapshot.DeltaVersion || !gotH.IsDelta() || gotH.BodyHash == gotH.StateHash || !snapshot.IsDelta(b) {
		t.Fatalf("EncodeDelta's header = %+v", gotH)
	}
	h, got, err := snapshot.DecodeDelta(b)
	if err != nil || h != gotH {
		t.Fatalf("DecodeDelta = %+v, %v; want %+v", h, err, gotH)
	}
	if s := resolve(t, base, got); !bytes.Equal(mustBody(t, s), mustBody(t, cur)) {
		t.Fatal("the decoded delta does not resolve to the state it was made of")
	}
	if _, _, err := snapshot.Decode(b); !errors.Is(err, snapshot.ErrDelta) || errors.Is(err, snapshot.ErrCorrupt) {
		t.Fatalf("Decode of a delta = %v, want ErrDelta", err)
	}
	if _, _, err := snapshot.DecodeDelta(smallSnapshot(t)); !errors.Is(err, snapshot.ErrCorrupt) {
		t.Fatalf("DecodeDelta of a full snapshot = %v, want ErrCorrupt", err)
	}
	if again := mustEncodeDelta(t, h, got); !bytes.Equal(again, b) {
		t.Fatal("a decoded delta re-encodes differently")
	}
	t.Logf("delta %d bytes, full %d", len(b), len(mustEncode(t, testHeader("big"), cur)))
}

func TestDelta_Empty(t *testing.T) {
	t.Parallel()
	s := bigState(t, 3, 2)
	d := snapshot.Diff(s, s)
	if !d.Empty() {
		t.Fatalf("the delta of a state to itself = %+v", d)
	}
	if got := resolve(t, s, d); !bytes.Equal(mustBody(t, got), mustBody(t, s)) {
		t.Fatal("an empty delta changed the state")
	}
}

// TestDelta_DiffApplyProperty: for random pairs of states (entities
// added, changed, removed, of every kind), applying Diff(a, b) to a gives
// b, and a chain of deltas gives the last state.
func TestDelta_DiffApplyProperty(t *testing.T) {
	t.Parallel()
	pool := bigState(t, 40, 30)
	pool.Plans = []*projection.Plan{{Project: "big", ID: "P-1", Title: "one"}, {Project: "big", ID: "P-2", Title: "two"}, {Project: "big", ID: "P-10", Title: "ten"}}
	pool.Checkpoints = []*projection.Checkpoint{{Project: "big", ID: "C-1", Label: "a"}, {Project: "big", ID: "C-2", Label: "b"}}
	for round := range 50 {
		rng := rand.New(rand.NewPCG(uint64(round), 11))
		states := make([]*projection.Scope, 2+rng.IntN(5))
		for i := range states {
			states[i] = randomState(t, rng, pool)
		}
		s := resolve(t, states[0], snapshot.Diff(states[0], states[0]))
		for i := 1; i < len(states); i++ {
			d := snapshot.Diff(states[i-1], states[i])
			_, d, err := snapshot.DecodeDelta(mustEncodeDelta(t, snapshot.Header{Scope: "big", Seq: uint64(i + 1), BaseSeq: uint64(i)}, d))
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
			d.Apply(s)
			if !bytes.Equal(mustBody(t, s), mustBody(t, states[i])) {
				t.Fatalf("round %d: the chain to state %d does not resolve to it", round, i)
			}
		}
	}
}

// randomState picks a random subset of pool's entities, some of them
// changed (copies: pool is not touched).
func randomState(tb testing.TB, rng *rand.Rand, pool *projection.Scope) *projection.Scope {
	tb.Helper()
	_, c, err := snapshot.Decode(mustEncode(tb, testHeader("big"), pool))
	if err != nil {
		tb.Fatal(err)
	}
	keep := func(n int) []int { // indexes to keep, in order
		var out []int
		for i := range n {
			if rng.IntN(3) != 0 {
				out = append(out, i)
			}
		}
		return out
	}
	s := &projection.Scope{Project: c.Project}
	s.Project.Events = uint64(rng.IntN(3))
	for _, i := range keep(len(c.Plans)) {
		s.Plans = append(s.Plans, c.Plans[i])
	}
	for _, i := range keep(len(c.Tasks)) {
		if t := c.Tasks[i]; rng.IntN(4) == 0 {
			t.Title = fmt.Sprint("title ", rng.IntN(3))
		}
		s.Tasks = append(s.Tasks, c.Tasks[i])
	}
	for _, i := range keep(len(c.Approvals)) {
		s.Approvals = append(s.Approvals, c.Approvals[i])
	}
	for _, i := range keep(len(c.Execs)) {
		if x := c.Execs[i]; rng.IntN(4) == 0 {
			x.ExitCode = rng.IntN(3)
		}
		s.Execs = append(s.Execs, c.Execs[i])
	}
	for _, i := range keep(len(c.Checkpoints)) {
		s.Checkpoints = append(s.Checkpoints, c.Checkpoints[i])
	}
	return normalize(s)
}

func normalize(s *projection.Scope) *projection.Scope {
	s.Plans, s.Tasks, s.Approvals = projection.NonNil(s.Plans), projection.NonNil(s.Tasks), projection.NonNil(s.Approvals)
	s.Execs, s.Checkpoints = projection.NonNil(s.Execs), projection.NonNil(s.Checkpoints)
	return s
}

func wantDeltaCorrupt(tb testing.TB, what string, b []byte) {
	tb.Helper()
	if _, d, err := snapshot.DecodeDelta(b); !errors.Is(err, snapshot.ErrCorrupt) || d != nil {
		tb.Fatalf("%s: DecodeDelta = %v, %v; want ErrCorrupt", what, d != nil, err)
	}
}

// TestDecodeDelta_EveryBitFlip flips every bit of a delta, one at a time:
// every one is detected.
func TestDecodeDelta_EveryBitFlip(t *testing.T) {
	t.Parallel()
	orig := smallDelta(t)
	b := bytes.Clone(orig)
	for i := range b {
		for bit := range 8 {
			b[i] ^= 1 << bit
			wantDeltaCorrupt(t, fmt.Sprintf("flipping bit %d of byte %d (of %d)", bit, i, len(b)), b)
			b[i] ^= 1 << bit
		}
	}
	if !bytes.Equal(b, orig) {
		t.Fatal("DecodeDelta changed its input")
	}
}

func TestDecodeDelta_EveryTruncation(t *testing.T) {
	t.Parallel()
	b := smallDelta(t)
	for n := range len(b) {
		wantDeltaCorrupt(t, fmt.Sprintf("the first %d of %d bytes", n, len(b)), b[:n:n])
	}
}

// rebody replaces a delta's body, resealing its lengths, body hash and
// CRC, so that a test reaches the body's checks.
func rebody(b, body []byte) []byte {
	n := int(binary.BigEndian.Uint16(b[offDeltaScopeLen:]))
	at := offDeltaScope + n
	out := append(bytes.Clone(b[:at]), binary.BigEndian.AppendUint64(nil, uint64(len(body)))...)
	out = append(append(out, body...), 0, 0, 0, 0)
	h := sha256.Sum256(body)
	copy(out[offBodyHash:], h[:])
	return reseal(out)
}

func TestDecodeDelta_Damaged(t *testing.T) {
	t.Parallel()
	orig := smallDelta(t)
	_, d, err := snapshot.DecodeDelta(orig)
	if err != nil {
		t.Fatal(err)
	}
	n := int(binary.BigEndian.Uint16(orig[offDeltaScopeLen:]))
	body := orig[offDeltaScope+n+8 : len(orig)-4]
	withDeleted := func(del snapshot.Deleted) []byte {
		d2 := *d
		d2.Deleted = del
		b := mustEncodeDelta(t, snapshot.Header{Scope: "big", Seq: 20, BaseSeq: 8}, &d2)
		m := int(binary.BigEndian.Uint16(b[offDeltaScopeLen:]))
		return rebody(orig, b[offDeltaScope+m+8:len(b)-4])
	}
	for _, tt := range []struct {
		name   string
		damage func(b []byte) []byte
	}{
		{"BaseAtItsSeq", func(b []byte) []byte { binary.BigEndian.PutUint64(b[offBaseSeq:], 20); return reseal(b) }},
		{"BaseAfterIt", func(b []byte) []byte { binary.BigEndian.PutUint64(b[offBaseSeq:], 1<<40); return reseal(b) }},
		{"BodyHashOfAnotherBody", func(b []byte) []byte { b[offBodyHash] ^= 1; return reseal(b) }},
		{"TrailingByteInTheBody", func(b []byte) []byte { return rebody(b, append(bytes.Clone(body), 0)) }},
		{"NoDeletions", func(b []byte) []byte { return rebody(b, mustBody(t, d.Changed)) }},
		{"DeletionCountPastTheEnd", func(b []byte) []byte {
			return rebody(b, append(mustBody(t, d.Changed), 0x7f, 0, 0, 0, 0))
		}},
		{"EmptyID", func(b []byte) []byte {
			return rebody(b, append(mustBody(t, d.Changed), 1, 0, 0, 0, 0, 0))
		}},
		{"IDLengthPastTheEnd", func(b []byte) []byte {
			return rebody(b, append(mustBody(t, d.Changed), 1, 9, 'T', 0, 0, 0, 0))
		}},
		{"TaskDeletedTwice", func([]byte) []byte { return withDeleted(snapshot.Deleted{Tasks: []string{"T-6", "T-6"}}) }},
		{"TaskChangedAndDeleted", func([]byte) []byte { return withDeleted(snapshot.Deleted{Tasks: []string{d.Changed.Tasks[0].ID}}) }},
		{"EntityOfAnotherProject", func(b []byte) []byte {
			c := *d.Changed
			x := *c.Execs[0]
			x.Project = "other"
			c.Execs = []*projection.Exec{&x}
			return rebody(b, append(mustBody(t, &c), 0, 0, 0, 0, 0))
		}},
		{"ProjectOfAnotherName", func(b []byte) []byte {
			c := *d.Changed
			p := *c.Project
			p.Name = "other"
			c.Project = &p
			return rebody(b, append(mustBody(t, &c), 0, 0, 0, 0, 0))
		}},
		{"NilTask", func(b []byte) []byte {
			c := *d.Changed
			c.Tasks = []*projection.Task{nil}
			return rebody(b, append(mustBody(t, &c), 0, 0, 0, 0, 0))
		}},
		{"NextFormatVersion", func(b []byte) []byte {
			binary.BigEndian.PutUint16(b[offFormat:], snapshot.FormatVersion+1)
			return reseal(b)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantDeltaCorrupt(t, tt.name, tt.damage(bytes.Clone(orig)))
		})
	}
}

// TestEncodeDelta_Refuses a base that is not before the delta.
func TestEncodeDelta_Refuses(t *testing.T) {
	t.Parallel()
	base, cur := deltaStates(t)
	h := testDeltaHeader(t, base, cur)
	h.BaseSeq = h.Seq
	if _, _, err := snapshot.EncodeDelta(h, snapshot.Diff(base, cur)); err == nil {
		t.Fatal("EncodeDelta took a base at its own seq")
	}
}

// FuzzDecodeDelta: DecodeDelta never panics, every refusal is a
// *CorruptError, and what it accepts re-encodes to the same bytes.
func FuzzDecodeDelta(f *testing.F) {
	d := smallDelta(f)
	f.Add(d)
	f.Add(smallSnapshot(f))
	f.Add(d[:len(d)-1])
	n := int(binary.BigEndian.Uint16(d[offDeltaScopeLen:]))
	named, _, err := snapshot.PackDeltaNames(snapshot.Header{Scope: "big", Seq: 20, BaseSeq: 8}, d[offDeltaScope+n+8:len(d)-4])
	if err != nil {
		f.Fatal(err)
	}
	f.Add(named)
	f.Add(named[:len(named)-1])
	f.Fuzz(func(t *testing.T, b []byte) {
		h, d, err := snapshot.DecodeDelta(b)
		if err != nil {
			var ce *snapshot.CorruptError
			if !errors.As(err, &ce) || d != nil {
				t.Fatalf("DecodeDelta = %T %v; want a *CorruptError and no delta", err, err)
			}
			return
		}
		if h.Format == snapshot.NamesDeltaVersion { // packed: the same body packs to the same bytes
			_, body, _ := snapshot.Check(b)
			if again, _, err := snapshot.PackDeltaNames(h, body); err != nil || !bytes.Equal(again, b) {
				t.Fatalf("an accepted delta with names packs differently: %v", err)
			}
			return
		}
		if again := mustEncodeDelta(t, h, d); !bytes.Equal(again, b) {
			t.Fatal("an accepted delta re-encodes differently")
		}
	})
}

// FuzzDecodeDeltaBody wraps arbitrary bytes as a delta's body with every
// length, hash and checksum right: DecodeDelta never panics.
func FuzzDecodeDeltaBody(f *testing.F) {
	d := smallDelta(f)
	n := int(binary.BigEndian.Uint16(d[offDeltaScopeLen:]))
	f.Add(d[offDeltaScope+n+8 : len(d)-4])
	f.Add([]byte{0x80, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, body []byte) {
		if _, _, err := snapshot.DecodeDelta(rebody(d, body)); err != nil && !errors.Is(err, snapshot.ErrCorrupt) {
			t.Fatalf("DecodeDelta = %v", err)
		}
	})
}
