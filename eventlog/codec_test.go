package eventlog

import (
	"bytes"
	"hash/crc32"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/vmihailenco/msgpack/v5"
)

// The hand-written codec is checked against github.com/vmihailenco/msgpack
// as the reference: the encoder writes the bytes the reference encoder
// writes, and the parser accepts an envelope exactly when the reference
// decoder reads it and re-encodes it to the same bytes (its one byte form).

// refBody is appendBody written with the reference encoder.
func refBody(r *Record) []byte {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	_ = enc.EncodeArrayLen(envelopeFields)
	_ = enc.EncodeUint(r.Seq)
	_ = enc.EncodeBytes(r.ID[:])
	_ = enc.EncodeString(r.Stream)
	_ = enc.EncodeUint(r.Version)
	_ = enc.EncodeString(r.Type)
	_ = enc.EncodeUint(uint64(r.Schema))
	_ = enc.EncodeInt(r.Time.UnixNano())
	_ = enc.EncodeString(r.Actor)
	_ = enc.EncodeString(r.Session)
	_ = enc.EncodeString(r.Project)
	_ = enc.EncodeBytes(store.OptionalID(r.Correlation))
	_ = enc.EncodeBytes(store.OptionalID(r.Causation))
	_ = enc.EncodeBytes(r.Data)
	_ = enc.EncodeBytes(r.Prev[:])
	return buf.Bytes()
}

// refDecode reads an envelope with the reference decoder, leniently: any
// msgpack form of each value. ok is false if it does not read.
func refDecode(env []byte) (r *Record, ok bool) {
	d := msgpack.NewDecoder(bytes.NewReader(env))
	if n, err := d.DecodeArrayLen(); err != nil || n != envelopeFields {
		return nil, false
	}
	r = &Record{}
	var err error
	u := func() uint64 {
		if err != nil {
			return 0
		}
		var v uint64
		v, err = d.DecodeUint64()
		return v
	}
	raw := func(str bool) []byte {
		if err != nil {
			return nil
		}
		var c byte
		if c, err = d.PeekCode(); err != nil {
			return nil
		}
		isStr := c>>5 == 5 || c == 0xd9 || c == 0xda || c == 0xdb
		isBin := c == 0xc0 || c == 0xc4 || c == 0xc5 || c == 0xc6
		if (str && !isStr) || (!str && !isBin) {
			err = errorf("type")
			return nil
		}
		var b []byte
		b, err = d.DecodeBytes()
		return b
	}
	fixed := func(dst []byte, optional bool) {
		b := raw(false)
		if err == nil && len(b) != len(dst) && !(optional && b == nil) {
			err = errorf("size")
		}
		copy(dst, b)
	}
	r.Seq = u()
	fixed(r.ID[:], false)
	r.Stream = string(raw(true))
	r.Version = u()
	r.Type = string(raw(true))
	schema := u()
	var nanos int64
	if err == nil {
		nanos, err = d.DecodeInt64()
	}
	r.Actor, r.Session, r.Project = string(raw(true)), string(raw(true)), string(raw(true))
	fixed(r.Correlation[:], true)
	fixed(r.Causation[:], true)
	r.Data = raw(false)
	fixed(r.Prev[:], false)
	fixed(r.Hash[:], false)
	if err != nil || schema > math.MaxUint32 || d.Buffered().(*bytes.Reader).Len() != 0 {
		return nil, false
	}
	r.Schema, r.Time = uint32(schema), time.Unix(0, nanos).UTC()
	return r, true
}

// canonical reports whether env is the one byte form of the record the
// reference decoder reads from it: what the hand parser must accept.
func canonical(env []byte) bool {
	r, ok := refDecode(env)
	if !ok {
		return false
	}
	return bytes.Equal(append(refBody(r), append([]byte{mpBin8, 32}, r.Hash[:]...)...), env)
}

// checkCodec checks the parser against the reference on env.
func checkCodec(t *testing.T, env []byte) {
	t.Helper()
	r, err := decodeEnvelope(env)
	want := canonical(env)
	switch {
	case err != nil && want:
		t.Fatalf("decodeEnvelope refused the canonical envelope % x: %v", env, err)
	case err == nil && !want:
		t.Fatalf("decodeEnvelope accepted % x, which is not in its one byte form", env)
	case err == nil:
		ref, _ := refDecode(env)
		if diff := sameRecord(r, ref); diff != "" || (r.Data == nil) != (ref.Data == nil) {
			t.Fatalf("decodeEnvelope and the reference disagree on % x: %s", env, diff)
		}
		if body := appendBody(nil, r); !bytes.Equal(body, env[:len(env)-hashFieldLen]) {
			t.Fatalf("accepted envelope re-encodes to other bytes")
		}
	}
}

func TestCodec_MatchesReference(t *testing.T) {
	uints := []uint64{0, 1, 127, 128, 255, 256, 65535, 65536, math.MaxUint32, math.MaxUint32 + 1, math.MaxUint64}
	ints := []int64{0, 1, 127, 128, -1, -32, -33, -128, -129, -32768, -32769, math.MinInt32, math.MinInt32 - 1, math.MinInt64, math.MaxInt64}
	lens := []int{0, 1, 31, 32, 255, 256, 65535, 65536}
	for _, u := range uints {
		r := &Record{Seq: u, Version: u, Event: Event{Schema: uint32(u)}}
		if got, want := appendBody(nil, r), refBody(r); !bytes.Equal(got, want) {
			t.Errorf("uint %d: % x, reference % x", u, got[:12], want[:12])
		}
	}
	for _, n := range ints {
		r := &Record{Event: Event{Time: time.Unix(0, n)}}
		if got, want := appendBody(nil, r), refBody(r); !bytes.Equal(got, want) {
			t.Errorf("int %d: differs from the reference", n)
		}
	}
	for _, n := range lens {
		s := strings.Repeat("x", n)
		for _, data := range [][]byte{nil, []byte(s)} {
			r := &Record{Stream: s, Event: Event{Type: s, Actor: s, Data: data, Correlation: testID(1)}}
			if got, want := appendBody(nil, r), refBody(r); !bytes.Equal(got, want) {
				t.Errorf("length %d (data nil: %v): differs from the reference", n, data == nil)
			}
		}
	}
	for _, r := range sampleRecords() {
		b := encodeRecord(r)
		if !bytes.Equal(b[:len(b)-crcLen-hashFieldLen], refBody(r)) {
			t.Errorf("seq %d: differs from the reference", r.Seq)
		}
	}
}

func TestCodec_Canonical(t *testing.T) {
	r := sampleRecords()[1]
	b := encodeRecord(r)
	env := b[:len(b)-crcLen]
	checkCodec(t, env)
	// Each of these rewrites one value of env in a longer form that the
	// reference reads as the same value: the parser must refuse it.
	longer := []struct {
		name     string
		old, new []byte
	}{
		{"uint8 seq", []byte{0x9f, 0x02}, []byte{0x9f, 0xcc, 0x02}},
		{"uint64 seq", []byte{0x9f, 0x02}, []byte{0x9f, 0xcf, 0, 0, 0, 0, 0, 0, 0, 0x02}},
		{"str8 stream", []byte{0xaa, 't', 'a', 's', 'k'}, []byte{0xd9, 0x0a, 't', 'a', 's', 'k'}},
		{"bin16 id", []byte{0xc4, 0x10, 't', 'e', 's', 't', '-', 'i', 'd', '-', '0', '0', '0', '0', '0', '0', '0', '2'},
			[]byte{0xc5, 0x00, 0x10, 't', 'e', 's', 't', '-', 'i', 'd', '-', '0', '0', '0', '0', '0', '0', '0', '2'}},
		{"str as bin", []byte{0xa3, 'a', 'n', 'n'}, []byte{0xc4, 0x03, 'a', 'n', 'n'}},
	}
	for _, tt := range longer {
		t.Run("Refused/"+tt.name, func(t *testing.T) {
			if !bytes.Contains(env, tt.old) {
				t.Fatalf("fixture lacks % x", tt.old)
			}
			bad := bytes.Replace(env, tt.old, tt.new, 1)
			if _, err := decodeEnvelope(bad); err == nil {
				t.Fatal("accepted")
			}
			checkCodec(t, bad)
		})
	}
	t.Run("Refused/ZeroIDAsBin", func(t *testing.T) {
		z := &Record{Seq: 1, Stream: "s", Event: Event{ID: testID(1), Type: "t"}}
		b := encodeRecord(z)
		zenv := b[:len(b)-crcLen]
		bad := bytes.Replace(zenv, []byte{0xc0, 0xc0}, append(append([]byte{0xc4, 0x10}, make([]byte, 16)...), 0xc0), 1)
		if _, err := decodeEnvelope(bad); err == nil {
			t.Fatal("accepted a zero correlation id written as bin")
		}
	})
}

func TestCRCSeq(t *testing.T) {
	seqs := []uint64{0, 1, 255, 256, 1 << 40, 1<<64 - 1}
	for i := range 64 { // every bit alone, and a spread of values (slicing tables: one per byte)
		seqs = append(seqs, 1<<i, uint64(i+1)*0x9e3779b97f4a7c15)
	}
	for _, seq := range seqs {
		if got, want := crcSeq(seq), crc32.Checksum(seqKey(seq), castagnoli); got != want {
			t.Errorf("crcSeq(%d) = %08x, want %08x", seq, got, want)
		}
	}
}
