package searchidx

import (
	"encoding/binary"
	"errors"
)

// This file reads the few string fields of a payload the index wants
// without decoding the rest: the payloads are msgpack maps (see
// projection/msgpack.go), and reflection costs a rebuild of a million
// events seconds.

var errMsgpack = errors.New("searchidx: payload is not a msgpack map of the expected shape")

// stringFields calls fn with each key of the msgpack map b whose value is
// a string (str or bin), and skips the other values. A key given twice
// is given twice, the later last, as a decoder would keep it. Key and
// value are b's bytes: fn copies what it keeps.
func stringFields(b []byte, fn func(key, value []byte)) error {
	r := mpr{b: b}
	n, ok := r.mapLen()
	if !ok {
		return errMsgpack
	}
	for range n {
		key, ok := r.str()
		if !ok {
			return errMsgpack
		}
		if r.isStr() {
			v, ok := r.str()
			if !ok {
				return errMsgpack
			}
			fn(key, v)
		} else if !r.skip(0) {
			return errMsgpack
		}
	}
	return nil
}

type mpr struct {
	b []byte
	i int
}

func (r *mpr) n(width int) (uint64, bool) {
	if len(r.b)-r.i < width {
		return 0, false
	}
	b := r.b[r.i : r.i+width]
	r.i += width
	switch width {
	case 1:
		return uint64(b[0]), true
	case 2:
		return uint64(binary.BigEndian.Uint16(b)), true
	case 4:
		return uint64(binary.BigEndian.Uint32(b)), true
	}
	return binary.BigEndian.Uint64(b), true
}

func (r *mpr) code() (byte, bool) {
	if r.i >= len(r.b) {
		return 0, false
	}
	r.i++
	return r.b[r.i-1], true
}

func (r *mpr) mapLen() (uint64, bool) {
	c, ok := r.code()
	switch {
	case !ok:
		return 0, false
	case c >= 0x80 && c <= 0x8f:
		return uint64(c & 0x0f), true
	case c == 0xde:
		return r.n(2)
	case c == 0xdf:
		return r.n(4)
	}
	return 0, false
}

func (r *mpr) isStr() bool {
	if r.i >= len(r.b) {
		return false
	}
	c := r.b[r.i]
	return c >= 0xa0 && c <= 0xbf || c >= 0xd9 && c <= 0xdb || c >= 0xc4 && c <= 0xc6
}

// str reads a str or bin: its bytes, in r.b.
func (r *mpr) str() ([]byte, bool) {
	c, ok := r.code()
	if !ok {
		return nil, false
	}
	var n uint64
	switch {
	case c >= 0xa0 && c <= 0xbf:
		n = uint64(c & 0x1f)
	case c == 0xd9 || c == 0xc4:
		n, ok = r.n(1)
	case c == 0xda || c == 0xc5:
		n, ok = r.n(2)
	case c == 0xdb || c == 0xc6:
		n, ok = r.n(4)
	default:
		return nil, false
	}
	if !ok || n > uint64(len(r.b)-r.i) {
		return nil, false
	}
	s := r.b[r.i : r.i+int(n) : r.i+int(n)]
	r.i += int(n)
	return s, true
}

// skip passes over one value of any type, at most 64 levels deep.
func (r *mpr) skip(depth int) bool {
	if depth > 64 {
		return false
	}
	c, ok := r.code()
	if !ok {
		return false
	}
	var items, n uint64
	switch {
	case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
		return true
	case c >= 0x80 && c <= 0x8f:
		items = 2 * uint64(c&0x0f)
	case c >= 0x90 && c <= 0x9f:
		items = uint64(c & 0x0f)
	case c >= 0xa0 && c <= 0xbf:
		n = uint64(c & 0x1f)
	case c == 0xcc || c == 0xd0:
		n = 1
	case c == 0xcd || c == 0xd1:
		n = 2
	case c == 0xce || c == 0xd2 || c == 0xca:
		n = 4
	case c == 0xcf || c == 0xd3 || c == 0xcb:
		n = 8
	case c == 0xd9 || c == 0xc4:
		n, ok = r.n(1)
	case c == 0xda || c == 0xc5:
		n, ok = r.n(2)
	case c == 0xdb || c == 0xc6:
		n, ok = r.n(4)
	case c == 0xdc:
		items, ok = r.n(2)
	case c == 0xdd:
		items, ok = r.n(4)
	case c == 0xde:
		items, ok = r.n(2)
		items *= 2
	case c == 0xdf:
		items, ok = r.n(4)
		items *= 2
	case c >= 0xd4 && c <= 0xd8: // fixext: a type byte and 1 to 16 bytes
		n = 1 + 1<<(c-0xd4)
	case c >= 0xc7 && c <= 0xc9: // ext 8/16/32: a length, a type byte
		n, ok = r.n(1 << (c - 0xc7))
		n++
	default:
		return false
	}
	if !ok || n > uint64(len(r.b)-r.i) || items > uint64(len(r.b)-r.i) {
		return false
	}
	r.i += int(n)
	for range items {
		if !r.skip(depth + 1) {
			return false
		}
	}
	return true
}
