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

// FuzzDecodeRecord feeds arbitrary bytes to decodeRecord and
// decodeEnvelope. They must never panic, must report every failure as a
// *CorruptionError at the given seq, and a record they accept must
// re-encode to a record that decodes to itself. decodeEnvelope must accept
// exactly the envelopes in their one byte form (checkCodec).
//
// The input is also decoded a second time with a correct CRC appended, so
// that mutations of the envelope get past the CRC check.
func FuzzDecodeRecord(f *testing.F) {
	for _, r := range smallSampleRecords() {
		b := encodeRecord(r)
		f.Add(r.Seq, b)
		f.Add(r.Seq, b[:len(b)-crcLen]) // the envelope alone: the CRC fix-up makes it valid
		f.Add(r.Seq+1, b)
		f.Add(r.Seq, b[:len(b)/2])
	}
	f.Add(uint64(0), []byte{})
	f.Add(uint64(1), []byte{0x9f, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0})
	f.Add(uint64(1), []byte{0x9f, 0x01, 0xc4, 0x10, 0xdb, 0xff, 0xff, 0xff, 0xff})

	f.Fuzz(func(t *testing.T, seq uint64, b []byte) {
		checkDecode(t, seq, b)
		checkPeek(t, formatV1, seq, b, Hash{})
		env := bytes.Clone(b)
		checkDecode(t, seq, binary.BigEndian.AppendUint32(env, crc32.Checksum(env, castagnoli)))
		if r, err := decodeEnvelope(b); err == nil && r == nil {
			t.Fatal("decodeEnvelope returned neither a record nor an error")
		}
		checkCodec(t, b)
	})
}

func checkDecode(t *testing.T, seq uint64, b []byte) {
	r, err := decodeRecord(seq, b)
	if err != nil {
		var ce *CorruptionError
		if r != nil || !errors.As(err, &ce) || ce.Seq != seq {
			t.Fatalf("decodeRecord(%d) = %v, %v; want nil and a *CorruptionError at seq %d", seq, r, err, seq)
		}
		return
	}
	if r.Seq != seq {
		t.Fatalf("accepted a record saying seq %d stored under %d", r.Seq, seq)
	}
	again := *r
	b2 := encodeRecord(&again)
	if again.Hash == r.Hash && !bytes.Equal(b2, b) {
		t.Fatalf("an accepted record re-encodes to other bytes with the same hash")
	}
	got, err := decodeRecord(seq, b2)
	if err != nil {
		t.Fatalf("re-encoded record does not decode: %v", err)
	}
	if diff := sameRecord(got, &again); diff != "" {
		t.Fatalf("re-encoded record decodes differently: %s", diff)
	}
}

// FuzzRecordRoundTrip checks that encodeRecord then decodeRecord gives
// back every field of any record.
func FuzzRecordRoundTrip(f *testing.F) {
	for _, r := range smallSampleRecords() {
		f.Add(r.Seq, r.ID[:], r.Stream, r.Version, r.Type, r.Schema, r.Time.UnixNano(),
			r.Actor, r.Session, r.Project, r.Correlation[:], r.Causation[:], r.Data, r.Prev[:])
	}
	f.Add(uint64(0), []byte(nil), "", uint64(0), "", uint32(0), int64(-1<<63), "\xff", "", "", []byte(nil), []byte(nil), []byte(nil), []byte(nil))
	f.Fuzz(func(t *testing.T, seq uint64, id []byte, stream string, version uint64, typ string, schema uint32,
		nanos int64, actor, session, project string, corr, caus, data, prev []byte) {
		want := &Record{Seq: seq, Stream: stream, Version: version, Event: Event{
			Type: typ, Schema: schema, Time: time.Unix(0, nanos), Actor: actor, Session: session,
			Project: project, Data: data,
		}}
		copy(want.ID[:], id)
		copy(want.Correlation[:], corr)
		copy(want.Causation[:], caus)
		copy(want.Prev[:], prev)
		b := encodeRecord(want)
		if !bytes.Equal(b[:len(b)-crcLen-hashFieldLen], refBody(want)) {
			t.Fatal("encodeRecord differs from the reference msgpack encoder")
		}
		got, err := decodeRecord(seq, b)
		if err != nil {
			t.Fatalf("decodeRecord: %v", err)
		}
		if diff := sameRecord(got, want); diff != "" {
			t.Fatalf("round trip: %s", diff)
		}
		if want.Hash != chainHash(want.Prev, b[:len(b)-crcLen-hashFieldLen]) {
			t.Fatal("hash is not SHA-256(prev || envelope without the hash)")
		}
	})
}

// FuzzParseID checks that ParseID never panics and that what it accepts
// formats back to the same id.
func FuzzParseID(f *testing.F) {
	id := NewID(testClock)
	f.Add(id.String())
	f.Add(strings.ReplaceAll(id.String(), "-", ""))
	f.Add("0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5g")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseID(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("ParseID(%q): err = %v, want ErrInvalid", s, err)
			}
			return
		}
		again, err := ParseID(id.String())
		if err != nil || again != id {
			t.Fatalf("ParseID(%q) = %s, which parses back as %s, %v", s, id, again, err)
		}
	})
}

// smallSampleRecords are the sample records without the 70 KB one, which
// would slow every mutation of the fuzzer down.
func smallSampleRecords() []*Record {
	var out []*Record
	for _, r := range sampleRecords() {
		if len(r.Data) <= 4096 {
			out = append(out, r)
		}
	}
	return out
}

// FuzzDecodeRecordV2 is FuzzDecodeRecord for format 2: decode (hash
// checked, with the prev hash the record before would give) and
// decodeInto with lend (framing only) must never panic, must report every
// failure as a *CorruptionError at the given seq, and a record they
// accept must re-encode to the same bytes: all of them when the hash was
// checked, all but the hash and the CRC when it was not.
func FuzzDecodeRecordV2(f *testing.F) {
	for _, r := range smallSampleRecords() {
		c := *r
		b := formatV2.encode(&c)
		f.Add(r.Seq, r.Prev[:], b)
		f.Add(r.Seq, r.Prev[:], b[:len(b)-crcLen])
		f.Add(r.Seq+1, r.Prev[:], b)
		f.Add(r.Seq, make([]byte, 32), b)
		f.Add(r.Seq, r.Prev[:], b[:len(b)/2])
	}
	f.Add(uint64(1), make([]byte, 32), []byte{0x9d, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0, 0xc0})
	f.Fuzz(func(t *testing.T, seq uint64, prevb, b []byte) {
		var prev Hash
		copy(prev[:], prevb)
		checkDecodeV2(t, seq, prev, b)
		checkPeek(t, formatV2, seq, b, prev)
		env := bytes.Clone(b)
		checkDecodeV2(t, seq, prev, binary.BigEndian.AppendUint32(env, formatV2.checksum(seq, env)))
	})
}

func checkDecodeV2(t *testing.T, seq uint64, prev Hash, b []byte) {
	wantCorrupt := func(err error) {
		var ce *CorruptionError
		if !errors.As(err, &ce) || ce.Seq != seq {
			t.Fatalf("decode(%d) = %v; want a *CorruptionError at seq %d", seq, err, seq)
		}
	}
	if r, err := formatV2.decode(seq, b, prev); err != nil {
		wantCorrupt(err)
	} else if b2 := formatV2.encode(r); !bytes.Equal(b2, b) {
		t.Fatalf("an accepted record re-encodes to other bytes")
	}
	var r Record
	if err := formatV2.decodeInto(&r, seq, b, prev, true); err != nil {
		wantCorrupt(err)
		return
	}
	if r.Seq != seq || r.Prev != prev {
		t.Fatalf("lent record says seq %d prev %x, want %d %x", r.Seq, r.Prev, seq, prev)
	}
	r.Data = bytes.Clone(r.Data)
	b2 := formatV2.encode(&r)
	if n := len(b) - crcLen - hashFieldLen; len(b2) != len(b) || !bytes.Equal(b2[:n], b[:n]) {
		t.Fatalf("a record accepted without its hash re-encodes to another body")
	}
}
