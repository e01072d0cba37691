package eventlog

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/flowctl/flowctl/internal/msgp"
)

// The record envelope is a fixed msgpack array written and parsed by hand:
// no reflection, no reader, no allocation per field. The encoder
// (internal/msgp, flow/store's AppendEnvelope) writes each value in its
// shortest msgpack form (the forms of github.com/vmihailenco/msgpack/v5's
// EncodeUint, EncodeInt, EncodeString and EncodeBytes), and the parser
// accepts only those forms, so that a
// record has exactly one byte form: whatever parses re-encodes to the same
// bytes (TestCodec_Canonical, FuzzDecodeRecord).

// msgpack format codes used by the envelope.
const (
	mpFixArray = msgp.FixArray
	mpFixStr   = msgp.FixStr
	mpNil      = msgp.Nil
	mpBin8     = msgp.Bin8
	mpBin16    = msgp.Bin16
	mpBin32    = msgp.Bin32
	mpUint8    = msgp.Uint8
	mpUint16   = msgp.Uint16
	mpUint32   = msgp.Uint32
	mpUint64   = msgp.Uint64
	mpInt8     = msgp.Int8
	mpInt16    = msgp.Int16
	mpInt32    = msgp.Int32
	mpInt64    = msgp.Int64
	mpStr8     = msgp.Str8
	mpStr16    = msgp.Str16
	mpStr32    = msgp.Str32
)

// parser reads the envelope's values from a byte slice. Every length is
// checked against the bytes left, so a forged length can never make it
// read or allocate past the record, and every value must be in its
// shortest form. The first failure is kept in err and moves off to the
// end, so that every later read fails too: callers check err once, after
// the last read. The common forms are read by small methods the compiler
// inlines; the rest goes through the *Slow ones.
type parser struct {
	b   []byte
	off int
	err error
}

// fail records the first failure and makes every later read fail.
//
//go:noinline
func (p *parser) fail(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("at byte %d: %s", p.off, fmt.Sprintf(format, args...))
	}
	p.off = len(p.b)
}

// take returns the next n bytes, or nil (and fails) if fewer are left.
func (p *parser) take(n int) []byte {
	end := p.off + n
	if n < 0 || end > len(p.b) {
		return p.overrun(n)
	}
	v := p.b[p.off:end:end]
	p.off = end
	return v
}

//go:noinline
func (p *parser) overrun(n int) []byte {
	p.fail("value of %d bytes runs past the end of the record", n)
	return nil
}

// peek returns the next format code without consuming it; 0 (and a
// failure) at the end of the record.
func (p *parser) peek() byte {
	if p.off < len(p.b) {
		return p.b[p.off]
	}
	p.fail("record ends before its last field")
	return 0
}

// code consumes and returns the next format code.
func (p *parser) code() byte {
	c := p.peek()
	p.off = min(p.off+1, len(p.b))
	return c
}

// sized reads size (1, 2, 4 or 8) bytes as a big-endian number.
func (p *parser) sized(size int) uint64 {
	b := p.take(size)
	switch len(b) {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.BigEndian.Uint16(b))
	case 4:
		return uint64(binary.BigEndian.Uint32(b))
	case 8:
		return binary.BigEndian.Uint64(b)
	}
	return 0
}

// uint reads an unsigned integer in its shortest form.
func (p *parser) uint() uint64 {
	if i := p.off; i < len(p.b) && p.b[i] <= math.MaxInt8 {
		p.off = i + 1
		return uint64(p.b[i])
	}
	return p.uintSlow()
}

func (p *parser) uintSlow() uint64 {
	c := p.code()
	var v, least uint64
	switch c {
	case mpUint8:
		v, least = p.sized(1), math.MaxInt8+1
	case mpUint16:
		v, least = p.sized(2), math.MaxUint8+1
	case mpUint32:
		v, least = p.sized(4), math.MaxUint16+1
	case mpUint64:
		v, least = p.sized(8), math.MaxUint32+1
	default:
		p.fail("format 0x%02x is not an unsigned integer", c)
		return 0
	}
	if v < least && p.err == nil {
		p.fail("integer %d is not in its shortest form", v)
	}
	return v
}

// int reads a signed integer in its shortest form: a non-negative value
// as an unsigned integer, a negative one in the smallest signed form.
func (p *parser) int() int64 {
	c := p.peek()
	if c <= math.MaxInt8 || (c >= mpUint8 && c <= mpUint64) {
		v := p.uint()
		if v > math.MaxInt64 {
			p.fail("integer %d overflows int64", v)
		}
		return int64(v)
	}
	p.off++
	var v, least int64
	switch {
	case c >= 0xe0: // negative fixint
		return int64(int8(c))
	case c == mpInt8:
		v, least = int64(int8(p.sized(1))), -32
	case c == mpInt16:
		v, least = int64(int16(p.sized(2))), math.MinInt8
	case c == mpInt32:
		v, least = int64(int32(p.sized(4))), math.MinInt16
	case c == mpInt64:
		v, least = int64(p.sized(8)), math.MinInt32
	default:
		p.fail("format 0x%02x is not an integer", c)
		return 0
	}
	if v >= least && p.err == nil {
		p.fail("integer %d is not in its shortest form", v)
	}
	return v
}

// header reads the length of a str or bin whose header has size bytes,
// and checks that the length needed it: a one-byte length holds from
// least1 on (32 for str8, below which fixstr is shorter; 0 for bin8).
func (p *parser) header(size, least1 int) int {
	n := int(p.sized(size))
	least := least1
	switch size {
	case 2:
		least = math.MaxUint8 + 1
	case 4:
		least = math.MaxUint16 + 1
	}
	if n < least && p.err == nil {
		p.fail("length %d is not in its shortest form", n)
	}
	return n
}

// str returns the next str value's bytes (aliasing the input).
func (p *parser) str() []byte {
	if i := p.off; i < len(p.b) && p.b[i]&0xe0 == mpFixStr {
		if end := i + 1 + int(p.b[i]&0x1f); end <= len(p.b) {
			p.off = end
			return p.b[i+1 : end : end]
		}
	}
	return p.strSlow()
}

func (p *parser) strSlow() []byte {
	var n int
	switch c := p.code(); {
	case c&0xe0 == mpFixStr:
		n = int(c & 0x1f)
	case c == mpStr8:
		n = p.header(1, 32)
	case c == mpStr16:
		n = p.header(2, 0)
	case c == mpStr32:
		n = p.header(4, 0)
	default:
		p.fail("format 0x%02x is not a string", c)
		return nil
	}
	return p.take(n)
}

// bin returns the next bin value's bytes (aliasing the input), or nil
// for msgpack nil.
func (p *parser) bin() []byte {
	if i := p.off; i+1 < len(p.b) && p.b[i] == mpBin8 {
		if end := i + 2 + int(p.b[i+1]); end <= len(p.b) {
			p.off = end
			return p.b[i+2 : end : end]
		}
	}
	return p.binSlow()
}

func (p *parser) binSlow() []byte {
	var n int
	switch c := p.code(); c {
	case mpNil:
		return nil
	case mpBin8:
		n = p.header(1, 0)
	case mpBin16:
		n = p.header(2, 0)
	case mpBin32:
		n = p.header(4, 0)
	default:
		p.fail("format 0x%02x is not binary", c)
		return nil
	}
	return p.take(n)
}

// fixed reads a bin value of exactly len(dst) bytes into dst.
func (p *parser) fixed(dst []byte) {
	v := p.bin()
	if len(v) != len(dst) {
		p.fail("field is %d bytes, want a bin of %d", len(v), len(dst))
		return
	}
	copy(dst, v)
}

// optional reads an id that is nil (the zero id) or a bin of 16 non-zero
// bytes into dst.
func (p *parser) optional(dst *ID) {
	if p.off < len(p.b) && p.b[p.off] == mpNil {
		p.off++
		return
	}
	p.fixed(dst[:])
	if dst.IsZero() {
		p.fail("the zero id is written as bin instead of nil")
	}
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }
