// Package msgp writes the msgpack values of the event envelope in their
// shortest forms, the forms of github.com/vmihailenco/msgpack/v5's
// EncodeUint, EncodeInt, EncodeString and EncodeBytes, by hand: no
// reflection, no allocation. Every backend hashes the same envelope bytes
// (flow/store's ChainHash), so there is one encoder.
package msgp

import (
	"encoding/binary"
	"math"
)

// msgpack format codes of the envelope.
const (
	FixArray = 0x90
	FixStr   = 0xa0
	Nil      = 0xc0
	Bin8     = 0xc4
	Bin16    = 0xc5
	Bin32    = 0xc6
	Uint8    = 0xcc
	Uint16   = 0xcd
	Uint32   = 0xce
	Uint64   = 0xcf
	Int8     = 0xd0
	Int16    = 0xd1
	Int32    = 0xd2
	Int64    = 0xd3
	Str8     = 0xd9
	Str16    = 0xda
	Str32    = 0xdb
)

// AppendUint appends v as a positive fixint or uint8/16/32/64.
func AppendUint(b []byte, v uint64) []byte {
	switch {
	case v <= math.MaxInt8:
		return append(b, byte(v))
	case v <= math.MaxUint8:
		return append(b, Uint8, byte(v))
	case v <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, Uint16), uint16(v))
	case v <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, Uint32), uint32(v))
	}
	return binary.BigEndian.AppendUint64(append(b, Uint64), v)
}

// AppendInt appends v as AppendUint does when it is not negative, else
// as a negative fixint or int8/16/32/64.
func AppendInt(b []byte, v int64) []byte {
	switch {
	case v >= 0:
		return AppendUint(b, uint64(v))
	case v >= -32:
		return append(b, byte(v)) // negative fixint
	case v >= math.MinInt8:
		return append(b, Int8, byte(v))
	case v >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(b, Int16), uint16(v))
	case v >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(b, Int32), uint32(v))
	}
	return binary.BigEndian.AppendUint64(append(b, Int64), uint64(v))
}

// AppendStr appends s as fixstr or str8/16/32.
func AppendStr(b []byte, s string) []byte {
	n := len(s)
	switch {
	case n < 32:
		b = append(b, FixStr|byte(n))
	case n <= math.MaxUint8:
		b = append(b, Str8, byte(n))
	case n <= math.MaxUint16:
		b = binary.BigEndian.AppendUint16(append(b, Str16), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, Str32), uint32(n))
	}
	return append(b, s...)
}

// AppendBin appends v as bin8/16/32, or nil when v is nil.
func AppendBin(b, v []byte) []byte {
	n := len(v)
	switch {
	case v == nil:
		return append(b, Nil)
	case n <= math.MaxUint8:
		b = append(b, Bin8, byte(n))
	case n <= math.MaxUint16:
		b = binary.BigEndian.AppendUint16(append(b, Bin16), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, Bin32), uint32(n))
	}
	return append(b, v...)
}
