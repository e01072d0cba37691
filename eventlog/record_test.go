package eventlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"strings"
	"testing"
	"time"
)

// sampleRecords returns records of several shapes, chained, with their
// hashes computed.
func sampleRecords() []*Record {
	rs := []*Record{
		{Seq: 1, Stream: "s", Version: 1, Event: Event{ID: testID(1), Type: "t", Time: time.Unix(0, 0)}},
		{Seq: 2, Stream: "task/01J9Z", Version: 7, Event: Event{
			ID: testID(2), Type: "task.created", Schema: 2, Time: testClock,
			Actor: "ann", Session: "sess-1", Project: "proj", Correlation: testID(20), Causation: testID(21),
			Data: []byte{0x82, 0xa2, 'i', 'd', 0x01, 0xa4, 'n', 'a', 'm', 'e', 0xa3, 'f', 'o', 'o'},
		}},
		{Seq: 300, Stream: strings.Repeat("長", 100), Version: 1 << 40, Event: Event{
			ID: testID(3), Type: "x", Schema: 1<<32 - 1, Time: time.Unix(0, -1),
			Data: bytes.Repeat([]byte{0xc1}, 70000),
		}},
		{Seq: 1<<64 - 1, Stream: "z", Version: 1<<64 - 1, Event: Event{
			ID: testID(4), Type: "max", Time: time.Unix(0, 1<<63-1), Data: []byte{},
		}},
	}
	var prev Hash
	for _, r := range rs {
		r.Prev = prev
		encodeRecord(r)
		prev = r.Hash
	}
	return rs
}

func TestRecord_RoundTrip(t *testing.T) {
	for _, want := range sampleRecords() {
		b := encodeRecord(want)
		got, err := decodeRecord(want.Seq, b)
		if err != nil {
			t.Fatalf("seq %d: decodeRecord: %v", want.Seq, err)
		}
		if diff := sameRecord(got, want); diff != "" {
			t.Errorf("seq %d: decoded record differs: %s", want.Seq, diff)
		}
		if got.Time.Location() != time.UTC {
			t.Errorf("seq %d: time location %v, want UTC", want.Seq, got.Time.Location())
		}
		if tail := b[len(b)-crcLen-hashFieldLen:]; tail[0] != 0xc4 || tail[1] != 0x20 || !bytes.Equal(tail[2:2+32], want.Hash[:]) {
			t.Errorf("seq %d: the hash is not the last 34 bytes of the envelope", want.Seq)
		}
	}
}

func TestDecodeRecord(t *testing.T) {
	r := sampleRecords()[1]
	b := encodeRecord(r)

	t.Run("ErrCorrupt/EveryBitFlip", func(t *testing.T) {
		for i := range len(b) * 8 {
			c := bytes.Clone(b)
			c[i/8] ^= 1 << (i % 8)
			got, err := decodeRecord(r.Seq, c)
			var ce *CorruptionError
			if got != nil || !errors.As(err, &ce) || ce.Seq != r.Seq {
				t.Fatalf("bit %d flipped: got %v, %v; want a *CorruptionError at seq %d", i, got, err, r.Seq)
			}
		}
	})

	t.Run("ErrCorrupt/EveryTruncation", func(t *testing.T) {
		for n := range len(b) {
			if got, err := decodeRecord(r.Seq, b[:n]); got != nil || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%d of %d bytes: got %v, %v; want ErrCorrupt", n, len(b), got, err)
			}
		}
	})

	t.Run("ErrCorrupt/TrailingBytes", func(t *testing.T) {
		env := append(bytes.Clone(b[:len(b)-crcLen]), 0x00)
		c := binary.BigEndian.AppendUint32(env, crc32.Checksum(env, castagnoli))
		if _, err := decodeRecord(r.Seq, c); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("err = %v, want ErrCorrupt", err)
		}
	})

	t.Run("ErrCorrupt/WrongSeq", func(t *testing.T) {
		_, err := decodeRecord(r.Seq+1, b)
		var ce *CorruptionError
		if !errors.As(err, &ce) || ce.Seq != r.Seq+1 {
			t.Fatalf("err = %v, want corruption at the seq it was stored under, %d", err, r.Seq+1)
		}
	})

	t.Run("ErrCorrupt/ForgedLength", func(t *testing.T) {
		// A str32 header claiming 4 GiB must fail on the length check, not
		// try to allocate it.
		env := []byte{0x9f, 0x01, 0xc4, 0x10}
		env = append(env, make([]byte, 16)...)
		env = append(env, 0xdb, 0xff, 0xff, 0xff, 0xff)
		env = append(env, make([]byte, 40)...)
		c := binary.BigEndian.AppendUint32(env, crc32.Checksum(env, castagnoli))
		if _, err := decodeRecord(1, c); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("err = %v, want ErrCorrupt", err)
		}
	})
}

func TestID(t *testing.T) {
	t.Run("OK/NewID", func(t *testing.T) {
		t0 := time.UnixMilli(1_700_000_000_000)
		a, b := NewID(t0), NewID(t0.Add(time.Millisecond))
		if a == b || a.IsZero() {
			t.Fatalf("NewID gave %s and %s", a, b)
		}
		if bytes.Compare(a[:], b[:]) >= 0 {
			t.Errorf("ids do not sort by time: %s >= %s", a, b)
		}
		if ms := binary.BigEndian.Uint64(a[:8]) >> 16; ms != uint64(t0.UnixMilli()) {
			t.Errorf("timestamp %d, want %d", ms, t0.UnixMilli())
		}
		if a[6]>>4 != 7 || a[8]>>6 != 2 {
			t.Errorf("%s is not a UUIDv7", a)
		}
	})

	t.Run("OK/Parse", func(t *testing.T) {
		id := NewID(testClock)
		s := id.String()
		if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
			t.Fatalf("String() = %q", s)
		}
		for _, in := range []string{s, strings.ReplaceAll(s, "-", ""), strings.ToUpper(s)} {
			got, err := ParseID(in)
			if err != nil || got != id {
				t.Errorf("ParseID(%q) = %s, %v; want %s", in, got, err, id)
			}
		}
	})

	t.Run("ErrInvalid", func(t *testing.T) {
		for _, in := range []string{
			"", "0123", "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5", "0190a1b2xc3d4-7e5f-8a9b-0c1d2e3f4a5b",
			"0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5g", "0190a1b2c3d47e5f8a9b0c1d2e3f4a5z", "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b0",
		} {
			if _, err := ParseID(in); !errors.Is(err, ErrInvalid) {
				t.Errorf("ParseID(%q): err = %v, want ErrInvalid", in, err)
			}
		}
	})
}
