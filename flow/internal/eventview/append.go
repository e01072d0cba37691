package eventview

import (
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/flowctl/flowctl/flow/internal/check"
	"github.com/flowctl/flowctl/projection"
)

// AppendJSON appends JSON(typ, schema, data) to dst, the same bytes, for
// export's millions of events: it turns the msgpack into JSON in one pass,
// without decoding it into Go values and encoding those by reflection.
// What that pass does not handle (binary and extension values, keys that
// are not strings or repeat, trailing bytes, NaN, a payload that does not
// decode) goes the way of JSON. append_test.go compares the two.
func AppendJSON(dst []byte, typ string, schema uint32, data []byte) []byte {
	var a Appender
	return a.AppendJSON(dst, typ, schema, data)
}

// Appender is AppendJSON for many payloads in turn: it keeps the memory
// the pass needs (the keys of the maps being written) from one payload to
// the next. One Appender serves one goroutine.
type Appender struct {
	keys []mapEntry
}

// AppendJSON is the package's AppendJSON.
func (a *Appender) AppendJSON(dst []byte, typ string, schema uint32, data []byte) []byte {
	if len(data) == 0 {
		return append(dst, "null"...)
	}
	t := transcoder{src: data, keys: a.keys[:0]}
	out, ok := t.value(dst, viewRulesOf(typ, schema))
	a.keys = t.keys[:0]
	if ok && t.off == len(data) {
		return out
	}
	return append(dst, JSON(typ, schema, data)...)
}

// transcoder reads msgpack from src at off and writes JSON as JSON's
// encoder would write the decoded value: maps with their keys sorted.
type transcoder struct {
	src  []byte
	off  int
	keys []mapEntry // the entries of the maps being written, innermost last
}

// mapEntry is a map's key (its bytes in src) and where its value starts.
type mapEntry struct {
	key []byte
	val int
}

// value writes the value at off with rules for the fields of its maps
// (the rules pass through lists, as viewRules.walk does).
func (t *transcoder) value(dst []byte, rules viewRules) ([]byte, bool) {
	c, ok := t.byte()
	if !ok {
		return dst, false
	}
	switch {
	case c <= 0x7f:
		return strconv.AppendInt(dst, int64(c), 10), true
	case c >= 0xe0:
		return strconv.AppendInt(dst, int64(int8(c)), 10), true
	case c >= 0xa0 && c <= 0xbf:
		s, ok := t.bytes(int(c & 0x1f))
		return projection.AppendJSONString(dst, s), ok
	case c >= 0x90 && c <= 0x9f:
		return t.array(dst, int(c&0x0f), rules)
	case c >= 0x80 && c <= 0x8f:
		return t.object(dst, int(c&0x0f), rules)
	}
	switch c {
	case 0xc0:
		return append(dst, "null"...), true
	case 0xc2:
		return append(dst, "false"...), true
	case 0xc3:
		return append(dst, "true"...), true
	case 0xd9, 0xda, 0xdb:
		n, ok := t.length(c - 0xd9)
		s, ok2 := t.bytes(n)
		return projection.AppendJSONString(dst, s), ok && ok2
	case 0xdc, 0xdd:
		n, ok := t.length(c - 0xdc + 1)
		if !ok {
			return dst, false
		}
		return t.array(dst, n, rules)
	case 0xde, 0xdf:
		n, ok := t.length(c - 0xde + 1)
		if !ok {
			return dst, false
		}
		return t.object(dst, n, rules)
	case 0xca:
		b, ok := t.bytes(4)
		if !ok {
			return dst, false
		}
		return appendFloat(dst, float64(math.Float32frombits(binary.BigEndian.Uint32(b))), 32)
	case 0xcb:
		b, ok := t.bytes(8)
		if !ok {
			return dst, false
		}
		return appendFloat(dst, math.Float64frombits(binary.BigEndian.Uint64(b)), 64)
	}
	if n, isInt, ok := t.integer(c); isInt {
		return strconv.AppendInt(dst, n, 10), ok
	}
	if n, isUint, ok := t.unsigned(c); isUint {
		return strconv.AppendUint(dst, n, 10), ok
	}
	return dst, false // binary, extension, or no msgpack at all
}

// integer reads the signed integer that code c starts.
func (t *transcoder) integer(c byte) (n int64, isInt, ok bool) {
	if c < 0xd0 || c > 0xd3 {
		return 0, false, false
	}
	size := 1 << (c - 0xd0)
	b, ok := t.bytes(size)
	if !ok {
		return 0, true, false
	}
	switch size {
	case 1:
		return int64(int8(b[0])), true, true
	case 2:
		return int64(int16(binary.BigEndian.Uint16(b))), true, true
	case 4:
		return int64(int32(binary.BigEndian.Uint32(b))), true, true
	}
	return int64(binary.BigEndian.Uint64(b)), true, true
}

// unsigned reads the unsigned integer that code c starts.
func (t *transcoder) unsigned(c byte) (n uint64, isUint, ok bool) {
	if c < 0xcc || c > 0xcf {
		return 0, false, false
	}
	b, ok := t.bytes(1 << (c - 0xcc))
	if !ok {
		return 0, true, false
	}
	var v uint64
	for _, x := range b {
		v = v<<8 | uint64(x)
	}
	return v, true, true
}

// length reads a big-endian length of 1, 2 or 4 bytes (size 0, 1, 2).
func (t *transcoder) length(size byte) (int, bool) {
	b, ok := t.bytes(1 << size)
	if !ok {
		return 0, false
	}
	n := 0
	for _, x := range b {
		n = n<<8 | int(x)
	}
	return n, n <= len(t.src) // a length past the payload: let JSON refuse it
}

func (t *transcoder) byte() (byte, bool) {
	if t.off >= len(t.src) {
		return 0, false
	}
	t.off++
	return t.src[t.off-1], true
}

func (t *transcoder) bytes(n int) ([]byte, bool) {
	if n < 0 || len(t.src)-t.off < n {
		return nil, false
	}
	t.off += n
	return t.src[t.off-n : t.off], true
}

func (t *transcoder) array(dst []byte, n int, rules viewRules) ([]byte, bool) {
	dst = append(dst, '[')
	for i := range n {
		if i > 0 {
			dst = append(dst, ',')
		}
		var ok bool
		if dst, ok = t.value(dst, rules); !ok {
			return dst, false
		}
	}
	return append(dst, ']'), true
}

// object writes a map of n entries, keys sorted, applying rules to its
// fields as toView does.
func (t *transcoder) object(dst []byte, n int, rules viewRules) ([]byte, bool) {
	base := len(t.keys)
	defer func() { t.keys = t.keys[:base] }()
	for range n {
		key, ok := t.key()
		if !ok {
			return dst, false
		}
		t.keys = append(t.keys, mapEntry{key: key, val: t.off})
		if !t.skip() {
			return dst, false
		}
	}
	end := t.off
	entries := t.keys[base:]
	slices.SortFunc(entries, func(a, b mapEntry) int { return compareBytes(a.key, b.key) })
	dst = append(dst, '{')
	for i := range n {
		e := t.keys[base+i]
		if i > 0 {
			if string(t.keys[base+i-1].key) == string(e.key) {
				return dst, false // a repeated key: the decoder keeps the last
			}
			dst = append(dst, ',')
		}
		dst = append(projection.AppendJSONString(dst, e.key), ':')
		t.off = e.val
		var ok bool
		if dst, ok = t.field(dst, rules, e.key); !ok {
			return dst, false
		}
	}
	t.off = end
	return append(dst, '}'), true
}

func compareBytes(a, b []byte) int {
	switch {
	case string(a) < string(b):
		return -1
	case string(a) > string(b):
		return 1
	}
	return 0
}

// field writes the value of the field key with its rule (toView's).
func (t *transcoder) field(dst []byte, rules viewRules, key []byte) ([]byte, bool) {
	r, ok := rules[string(key)]
	if !ok {
		return t.value(dst, nil)
	}
	switch r.kind {
	case nested:
		return t.value(dst, r.fields)
	case jsonText:
		start := t.off
		if s, ok := t.str(); ok && check.JSON(s) == nil {
			return appendCompact(dst, s), true
		}
		t.off = start
	case unixNanos:
		start := t.off
		if n, ok := t.int64(); ok {
			if n == 0 {
				return append(dst, "null"...), true
			}
			dst = append(dst, '"')
			dst = time.Unix(0, n).UTC().AppendFormat(dst, time.RFC3339Nano)
			return append(dst, '"'), true
		}
		t.off = start
	}
	return t.value(dst, nil)
}

// key reads a map key: a string, or false for any other kind.
func (t *transcoder) key() ([]byte, bool) {
	return t.str()
}

// str reads a string value, or says false (off undefined) for another
// kind.
func (t *transcoder) str() ([]byte, bool) {
	c, ok := t.byte()
	switch {
	case !ok:
		return nil, false
	case c >= 0xa0 && c <= 0xbf:
		return t.bytes(int(c & 0x1f))
	case c >= 0xd9 && c <= 0xdb:
		n, ok := t.length(c - 0xd9)
		if !ok {
			return nil, false
		}
		return t.bytes(n)
	}
	return nil, false
}

// int64 reads an integer that an int64 holds (asInt64's), or says false
// (off undefined) for another kind.
func (t *transcoder) int64() (int64, bool) {
	c, ok := t.byte()
	switch {
	case !ok:
		return 0, false
	case c <= 0x7f:
		return int64(c), true
	case c >= 0xe0:
		return int64(int8(c)), true
	}
	if n, isInt, ok := t.integer(c); isInt {
		return n, ok
	}
	if n, isUint, ok := t.unsigned(c); isUint {
		return int64(n), ok && n <= math.MaxInt64
	}
	return 0, false
}

// skip passes over one value; false when it is not one this transcoder
// writes.
func (t *transcoder) skip() bool {
	c, ok := t.byte()
	if !ok {
		return false
	}
	switch {
	case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
		return true
	case c >= 0xa0 && c <= 0xbf:
		_, ok := t.bytes(int(c & 0x1f))
		return ok
	case c >= 0x90 && c <= 0x9f:
		return t.skipN(int(c & 0x0f))
	case c >= 0x80 && c <= 0x8f:
		return t.skipN(2 * int(c&0x0f))
	}
	switch c {
	case 0xd9, 0xda, 0xdb:
		n, ok := t.length(c - 0xd9)
		_, ok2 := t.bytes(n)
		return ok && ok2
	case 0xdc, 0xdd:
		n, ok := t.length(c - 0xdc + 1)
		return ok && t.skipN(n)
	case 0xde, 0xdf:
		n, ok := t.length(c - 0xde + 1)
		return ok && t.skipN(2*n)
	case 0xca:
		_, ok := t.bytes(4)
		return ok
	case 0xcb:
		_, ok := t.bytes(8)
		return ok
	}
	if _, isInt, ok := t.integer(c); isInt {
		return ok
	}
	_, isUint, ok := t.unsigned(c)
	return isUint && ok
}

func (t *transcoder) skipN(n int) bool {
	for range n {
		if !t.skip() {
			return false
		}
	}
	return true
}

// appendFloat writes f as encoding/json does (its floatEncoder); NaN and
// infinities, which it refuses, are false.
func appendFloat(dst []byte, f float64, bits int) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, false
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21)) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, bits)
	if format == 'e' {
		// e-09 to e-9, as encoding/json writes it
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, true
}

// appendCompact writes valid JSON text without the white space between
// its tokens, as encoding/json compacts a RawMessage with HTML escaping
// off.
func appendCompact(dst, s []byte) []byte {
	inString, escaped := false, false
	start := 0
	for i, c := range s {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			dst = append(dst, s[start:i]...)
			start = i + 1
		}
	}
	return append(dst, s[start:]...)
}

// AppendString writes s as a JSON string as encoding/json does with HTML
// escaping off.
func AppendString(dst []byte, s string) []byte {
	return projection.AppendJSONString(dst, s)
}
