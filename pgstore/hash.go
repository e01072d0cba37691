package pgstore

import (
	"crypto/sha256"
	"encoding/binary"
	"math"

	"github.com/flowctl/flowctl/flow/store"
)

// The chain hash is the one package eventlog computes (its doc.go,
// "Record"): SHA-256 over the previous record's hash and the record's
// format-1 msgpack envelope up to, not including, the hash element. The
// envelope is written here again, byte for byte, rather than imported, so
// that this backend does not link bbolt; the conformance suite pins the
// hashes of six events, so the two encoders cannot drift apart unseen.

// msgpack format codes of the envelope.
const (
	mpFixArray = 0x90
	mpFixStr   = 0xa0
	mpNil      = 0xc0
	mpBin8     = 0xc4
	mpBin16    = 0xc5
	mpBin32    = 0xc6
	mpUint8    = 0xcc
	mpUint16   = 0xcd
	mpUint32   = 0xce
	mpUint64   = 0xcf
	mpInt8     = 0xd0
	mpInt16    = 0xd1
	mpInt32    = 0xd2
	mpInt64    = 0xd3
	mpStr8     = 0xd9
	mpStr16    = 0xda
	mpStr32    = 0xdb
)

// envelopeFields is the number of elements of the format-1 envelope.
const envelopeFields = 15

// chainHash returns the hash of r from its fields and r.Prev.
func chainHash(r *store.Record) store.Hash {
	var stack [1024]byte
	b := stack[:0]
	if n := 256 + len(r.Stream) + len(r.Type) + len(r.Actor) + len(r.Session) + len(r.Project) + len(r.Data); n > len(stack) {
		b = make([]byte, 0, n)
	}
	b = append(b, r.Prev[:]...)
	b = appendUint(append(b, mpFixArray|envelopeFields), r.Seq)
	b = appendBin(b, r.ID[:])
	b = appendStr(b, r.Stream)
	b = appendUint(b, r.Version)
	b = appendStr(b, r.Type)
	b = appendUint(b, uint64(r.Schema))
	b = appendInt(b, r.Time.UnixNano())
	b = appendStr(b, r.Actor)
	b = appendStr(b, r.Session)
	b = appendStr(b, r.Project)
	b = appendBin(b, optionalID(r.Correlation))
	b = appendBin(b, optionalID(r.Causation))
	b = appendBin(b, r.Data)
	b = appendBin(b, r.Prev[:])
	return sha256.Sum256(b)
}

func optionalID(id store.ID) []byte {
	if id.IsZero() {
		return nil
	}
	return id[:]
}

func appendUint(b []byte, v uint64) []byte {
	switch {
	case v <= math.MaxInt8:
		return append(b, byte(v))
	case v <= math.MaxUint8:
		return append(b, mpUint8, byte(v))
	case v <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, mpUint16), uint16(v))
	case v <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, mpUint32), uint32(v))
	}
	return binary.BigEndian.AppendUint64(append(b, mpUint64), v)
}

func appendInt(b []byte, v int64) []byte {
	switch {
	case v >= 0:
		return appendUint(b, uint64(v))
	case v >= -32:
		return append(b, byte(v)) // negative fixint
	case v >= math.MinInt8:
		return append(b, mpInt8, byte(v))
	case v >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(b, mpInt16), uint16(v))
	case v >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(b, mpInt32), uint32(v))
	}
	return binary.BigEndian.AppendUint64(append(b, mpInt64), uint64(v))
}

func appendStr(b []byte, s string) []byte {
	n := len(s)
	switch {
	case n < 32:
		b = append(b, mpFixStr|byte(n))
	case n <= math.MaxUint8:
		b = append(b, mpStr8, byte(n))
	case n <= math.MaxUint16:
		b = binary.BigEndian.AppendUint16(append(b, mpStr16), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, mpStr32), uint32(n))
	}
	return append(b, s...)
}

// appendBin writes v as bin8/16/32, or nil when v is nil.
func appendBin(b, v []byte) []byte {
	n := len(v)
	switch {
	case v == nil:
		return append(b, mpNil)
	case n <= math.MaxUint8:
		b = append(b, mpBin8, byte(n))
	case n <= math.MaxUint16:
		b = binary.BigEndian.AppendUint16(append(b, mpBin16), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, mpBin32), uint32(n))
	}
	return append(b, v...)
}
