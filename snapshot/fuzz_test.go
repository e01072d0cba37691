package snapshot_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/snapshot"
)

// seedSnapshots returns real snapshots: a small one, an empty state, a
// bigger one, and damaged variants of the small one.
func seedSnapshots(tb testing.TB) [][]byte {
	tb.Helper()
	small := smallSnapshot(tb)
	seeds := [][]byte{
		small,
		mustEncode(tb, snapshot.Header{Scope: "nobody"}, projection.NewMemory().Scope("nobody")),
		mustEncode(tb, testHeader("big"), bigState(tb, 5, 3)),
		{},
		[]byte(snapshot.Magic),
		small[:snapshot.MinSize],
		small[:len(small)-1],
		append(bytes.Clone(small), 0),
	}
	flipped := bytes.Clone(small)
	flipped[len(flipped)/2] ^= 0x10
	seeds = append(seeds, flipped)
	forged := bytes.Clone(small)
	binary.BigEndian.PutUint64(forged[offScope+1:], 1<<63)
	seeds = append(seeds, reseal(forged))
	scope := bytes.Clone(small)
	binary.BigEndian.PutUint16(scope[offScopeLen:], 0xffff)
	return append(seeds, reseal(scope))
}

// FuzzDecode: Decode never panics on any input, every refusal is a
// *CorruptError, and whatever it accepts re-encodes to the same bytes.
func FuzzDecode(f *testing.F) {
	for _, s := range seedSnapshots(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, s, err := snapshot.Decode(b)
		if err != nil {
			var ce *snapshot.CorruptError
			if !errors.As(err, &ce) || s != nil {
				t.Fatalf("Decode = %T %v with state %v; want a *CorruptError and no state", err, err, s != nil)
			}
			return
		}
		again, h2, err := snapshot.Encode(h, s)
		if err != nil {
			t.Fatalf("an accepted snapshot does not re-encode: %v", err)
		}
		if h2 != h || !bytes.Equal(again, b) {
			t.Fatalf("an accepted snapshot re-encodes differently: header %+v -> %+v, %d -> %d bytes", h, h2, len(b), len(again))
		}
	})
}

// FuzzDecodeBody wraps arbitrary bytes in a valid envelope (lengths,
// state hash and CRC right), so that the fuzzer reaches the body decoder
// the checksums keep it from in FuzzDecode: it never panics, and a body
// it accepts decodes to a state whose encoding is a fixed point.
func FuzzDecodeBody(f *testing.F) {
	for _, s := range []*projection.Scope{smallState(f), projection.NewMemory().Scope("p"), bigState(f, 3, 2)} {
		f.Add(mustBody(f, s))
	}
	f.Add([]byte{0x80})                         // an empty map
	f.Add([]byte{0xdd, 0xff, 0xff, 0xff, 0xff}) // an array claiming 2^32-1 elements
	f.Add([]byte{0xc0})                         // nil
	f.Fuzz(func(t *testing.T, body []byte) {
		b := envelope("p", body)
		_, s, err := snapshot.Decode(b)
		if err != nil {
			if !errors.Is(err, snapshot.ErrCorrupt) {
				t.Fatalf("Decode = %v, want ErrCorrupt", err)
			}
			return
		}
		once := mustBody(t, s)
		_, s2, err := snapshot.Decode(envelope("p", once))
		if err != nil {
			t.Fatalf("the re-encoded state does not decode: %v", err)
		}
		if twice := mustBody(t, s2); !bytes.Equal(once, twice) {
			t.Fatal("encode(decode(x)) is not a fixed point")
		}
	})
}

// envelope frames body as a snapshot of scope with correct lengths, state
// hash and CRC.
func envelope(scope string, body []byte) []byte {
	b := []byte(snapshot.Magic)
	b = binary.BigEndian.AppendUint16(b, snapshot.FullVersion)
	b = binary.BigEndian.AppendUint32(b, projection.Version)
	b = binary.BigEndian.AppendUint64(b, 1)
	b = append(b, make([]byte, 32)...)
	h := sha256.Sum256(body)
	b = append(b, h[:]...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(scope)))
	b = append(b, scope...)
	b = binary.BigEndian.AppendUint64(b, uint64(len(body)))
	b = append(b, body...)
	return reseal(append(b, 0, 0, 0, 0))
}

func TestEnvelope_MatchesEncode(t *testing.T) {
	t.Parallel()
	s := smallState(t)
	h := snapshot.Header{ProjectionVersion: projection.Version, Scope: "p", Seq: 1}
	if got, want := envelope("p", mustBody(t, s)), mustEncode(t, h, s); !bytes.Equal(got, want) {
		t.Fatal("the fuzz test's envelope is not the format Encode writes")
	}
}
