package projection

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The msgpack primitives of the codecs of the hot types (the payloads
// the fold decodes and the entities a snapshot holds), which gencodec
// generates from the types (codec_*_gen.go). Together they write exactly
// the bytes, and read exactly what, vmihailenco/msgpack/v5's reflection
// codec writes and reads for these types (the codec the stored bytes
// were made with, and still the reference in the tests):
//
//   - a struct is a map of its fields in declaration order (embedded
//     structs inlined), omitempty fields left out when empty; on reading,
//     fields come in any order, unknown ones are skipped, a nil is the
//     zero struct, and an array of exactly as many values as the struct
//     has fields is read field by field (an empty array is the zero
//     struct);
//   - int is written in its shortest form, int64 (Time among them) as
//     int64 and uint64 as uint64, both in 9 bytes, float64 as a double;
//     on reading any integer code fits any integer field, a double field
//     also takes a float or an integer, and nil is zero;
//   - a string is str (bin is read too, nil is ""); a nil slice or
//     pointer is nil.
//
// Values are read into the destination in place, as reflection does, so
// that even a repeated key ends with the same value.

var errShort = errors.New("msgpack: unexpected end of data")

// mpReader reads msgpack values from b.
type mpReader struct {
	b []byte
	i int
	// seen, when set, keeps short strings already read, so that a
	// string that repeats (a project name, an actor, a command) is one
	// copy rather than one per entity.
	seen *stringCache
	// maxDepth, when set, bounds the nesting of a skipped value.
	maxDepth int
}

func (r *mpReader) code() (byte, error) {
	if r.i >= len(r.b) {
		return 0, errShort
	}
	c := r.b[r.i]
	r.i++
	return c, nil
}

// be reads a big-endian unsigned integer of width 1, 2, 4 or 8 bytes.
func (r *mpReader) be(width int) (uint64, error) {
	if len(r.b)-r.i < width {
		r.i = len(r.b)
		return 0, errShort
	}
	b := r.b[r.i : r.i+width]
	r.i += width
	switch width {
	case 1:
		return uint64(b[0]), nil
	case 2:
		return uint64(binary.BigEndian.Uint16(b)), nil
	case 4:
		return uint64(binary.BigEndian.Uint32(b)), nil
	}
	return binary.BigEndian.Uint64(b), nil
}

// take returns the next n bytes.
func (r *mpReader) take(n uint64) (start, end int, err error) {
	if n > uint64(len(r.b)-r.i) {
		r.i = len(r.b)
		return 0, 0, errShort
	}
	start = r.i
	r.i += int(n)
	return start, r.i, nil
}

func isFixNum(c byte) bool { return c <= 0x7f || c >= 0xe0 }

// int reads any integer (or nil) as an int64, as DecodeInt64 does.
func (r *mpReader) int() (int64, error) {
	c, err := r.code()
	if err != nil {
		return 0, err
	}
	if isFixNum(c) {
		return int64(int8(c)), nil
	}
	return r.intCode(c)
}

func (r *mpReader) intCode(c byte) (int64, error) {
	var v uint64
	var err error
	switch c {
	case 0xc0:
		return 0, nil
	case 0xcc:
		v, err = r.be(1)
	case 0xd0:
		v, err = r.be(1)
		v = uint64(int8(v))
	case 0xcd:
		v, err = r.be(2)
	case 0xd1:
		v, err = r.be(2)
		v = uint64(int16(v))
	case 0xce:
		v, err = r.be(4)
	case 0xd2:
		v, err = r.be(4)
		v = uint64(int32(v))
	case 0xcf, 0xd3:
		v, err = r.be(8)
	default:
		return 0, fmt.Errorf("msgpack: invalid code=%x decoding int64", c)
	}
	return int64(v), err
}

// uint reads any integer (or nil) as a uint64, as DecodeUint64 does:
// negative numbers wrap.
func (r *mpReader) uint() (uint64, error) {
	n, err := r.int()
	return uint64(n), err
}

func (r *mpReader) float64() (float64, error) {
	c, err := r.code()
	if err != nil {
		return 0, err
	}
	switch c {
	case 0xca:
		v, err := r.be(4)
		return float64(math.Float32frombits(uint32(v))), err
	case 0xcb:
		v, err := r.be(8)
		return math.Float64frombits(v), err
	}
	if isFixNum(c) {
		return float64(int8(c)), nil
	}
	n, err := r.intCode(c)
	return float64(n), err
}

func (r *mpReader) bool() (bool, error) {
	c, err := r.code()
	switch {
	case err != nil:
		return false, err
	case c == 0xc0, c == 0xc2:
		return false, nil
	case c == 0xc3:
		return true, nil
	}
	return false, fmt.Errorf("msgpack: invalid code=%x decoding bool", c)
}

// bytesLen reads the header of a str or bin: its length, -1 for nil.
func (r *mpReader) bytesLen() (int64, error) {
	c, err := r.code()
	if err != nil {
		return 0, err
	}
	if c >= 0xa0 && c <= 0xbf {
		return int64(c & 0x1f), nil
	}
	var n uint64
	switch c {
	case 0xc0:
		return -1, nil
	case 0xd9, 0xc4:
		n, err = r.be(1)
	case 0xda, 0xc5:
		n, err = r.be(2)
	case 0xdb, 0xc6:
		n, err = r.be(4)
	default:
		return 0, fmt.Errorf("msgpack: invalid code=%x decoding string/bytes length", c)
	}
	return int64(n), err
}

// rawStr reads a str or bin (nil: empty) and returns where its bytes are.
func (r *mpReader) rawStr() (start, end int, err error) {
	n, err := r.bytesLen()
	if err != nil || n <= 0 {
		return r.i, r.i, err
	}
	return r.take(uint64(n))
}

// str reads a string into *dst.
func (r *mpReader) str(dst *string) error {
	if r.i < len(r.b) { // a fixstr
		if c := r.b[r.i]; c >= 0xa0 && c <= 0xbf && int(c&0x1f) < len(r.b)-r.i {
			start := r.i + 1
			r.i = start + int(c&0x1f)
			*dst = r.string(start, r.i)
			return nil
		}
	}
	start, end, err := r.rawStr()
	if err != nil {
		return err
	}
	*dst = r.string(start, end)
	return nil
}

// string returns b[start:end] as a string: a known constant, a copy
// read before, or a new one.
func (r *mpReader) string(start, end int) string {
	b := r.b[start:end]
	if len(b) == 0 {
		return ""
	}
	if s, ok := knownString(b); ok {
		return s
	}
	if r.seen != nil {
		if len(b) <= maxSeen {
			return r.seen.get(b)
		}
		return r.seen.copy(b)
	}
	return string(b)
}

// maxSeen is the longest string a stringCache keeps.
const maxSeen = 128

// stringCache is a direct-mapped cache of strings by a hash of their
// bytes: cheaper than a map, and a miss only costs the copy it saves on
// a hit. A Memory's cache copies into the Memory's arena.
//
// A slot keeps the arena chunk its string was carved from, and a slot
// that no other string maps to keeps its string for good: over a long
// fold that drops its entities as it goes (verify's), the slots would
// keep hundreds of chunks of strings no entity holds any more. So the
// slots are emptied whenever the arena has begun clearChunks chunks
// since they last were: the cache keeps only the chunks of the last
// clearChunks*arenaChunk bytes of strings, and a string it would have
// kept is copied once more.
type stringCache struct {
	slots   [512]string
	arena   *foldArena // nil: each string a new allocation
	cleared uint32     // arena.chunks when the slots were last emptied
}

// clearChunks is how many new arena chunks a cache's slots outlive.
const clearChunks = 32

func (c *stringCache) get(b []byte) string {
	// A hash of the length and three bytes: strings that differ only
	// elsewhere share a slot, which only costs hits.
	n := len(b)
	h := uint32(n)*0x9e3779b1 ^ uint32(b[0])<<16 ^ uint32(b[n/2])<<8 ^ uint32(b[n-1])
	h ^= h >> 15
	slot := &c.slots[(h*0x85ebca6b)>>23]
	if *slot == string(b) {
		return *slot
	}
	s := c.copy(b)
	if a := c.arena; a != nil && a.chunks-c.cleared >= clearChunks {
		c.slots, c.cleared = [512]string{}, a.chunks
	}
	*slot = s
	return s
}

// copy returns a new copy of b, from c's arena when it has one.
func (c *stringCache) copy(b []byte) string {
	if c.arena != nil {
		return c.arena.string(b)
	}
	return string(b)
}

// knownString returns the constant of the catalog b spells, so that the
// many statuses and kinds of a state share one string. (A switch on
// constants: the compiler compares b with them without a string made.)
func knownString(b []byte) (string, bool) {
	if len(b) > len(StepInProgress) { // the longest
		return "", false
	}
	switch string(b) {
	case string(EmptyContext):
		return string(EmptyContext), true
	case StatusTodo:
		return StatusTodo, true
	case StatusDone:
		return StatusDone, true
	case "open":
		return "open", true
	case "note":
		return "note", true
	case StatusDoing:
		return StatusDoing, true
	case StepFailed:
		return StepFailed, true
	case "closed":
		return "closed", true
	case ApprovalDenied:
		return ApprovalDenied, true
	case "memory":
		return "memory", true
	case StatusBlocked:
		return StatusBlocked, true
	case StepPending: // == ApprovalPending
		return StepPending, true
	case StepSkipped:
		return StepSkipped, true
	case ApprovalGranted:
		return ApprovalGranted, true
	case StatusCancelled:
		return StatusCancelled, true
	case StepCompleted:
		return StepCompleted, true
	case StepInProgress:
		return StepInProgress, true
	}
	return "", false
}

// strings reads a []string as reflection does: nil leaves *dst as it
// is, an array replaces its elements (an empty one gives a non-nil empty
// slice).
func (r *mpReader) strings(dst *[]string) error {
	n, err := r.arrayLen()
	if err != nil || n < 0 {
		return err
	}
	ss := (*dst)[:0]
	switch {
	case ss != nil:
	case r.seen != nil && r.seen.arena != nil:
		ss = carveN(&r.seen.arena.strs, min(n, r.left()))
	default:
		ss = make([]string, 0, min(n, r.left()))
	}
	for range n {
		var s string
		if err := r.str(&s); err != nil {
			return err
		}
		ss = append(ss, s)
	}
	*dst = ss
	return nil
}

// left is an upper bound on the values that can still follow: each
// takes at least one byte.
func (r *mpReader) left() int { return len(r.b) - r.i }

// arrayLen reads an array header: its length, -1 for nil.
func (r *mpReader) arrayLen() (int, error) {
	c, err := r.code()
	if err != nil {
		return 0, err
	}
	if c >= 0x90 && c <= 0x9f {
		return int(c & 0x0f), nil
	}
	var n uint64
	switch c {
	case 0xc0:
		return -1, nil
	case 0xdc:
		n, err = r.be(2)
	case 0xdd:
		n, err = r.be(4)
	default:
		return 0, fmt.Errorf("msgpack: invalid code=%x decoding array length", c)
	}
	return int(n), err
}

// skip reads past one value of any kind, nested at most r.maxDepth deep
// when that is set.
func (r *mpReader) skip() error {
	if r.maxDepth > 0 {
		return r.skipNested()
	}
	for n := uint64(1); n > 0; n-- {
		inner, err := r.skipHeader()
		if err != nil {
			return err
		}
		n += inner
	}
	return nil
}

// skipNested is skip with a bound on nesting.
func (r *mpReader) skipNested() error {
	pending := make([]uint64, 1, 16) // values still to read at each open level
	pending[0] = 1
	for len(pending) > 0 {
		if pending[len(pending)-1] == 0 {
			pending = pending[:len(pending)-1]
			continue
		}
		pending[len(pending)-1]--
		inner, err := r.skipHeader()
		if err != nil {
			return err
		}
		if inner == 0 {
			continue
		}
		if len(pending) >= r.maxDepth {
			return fmt.Errorf("msgpack: a value nested deeper than %d", r.maxDepth)
		}
		pending = append(pending, inner)
	}
	return nil
}

// skipHeader reads past the header of one value and the data of a
// scalar; it returns how many values a map or array holds (a map's keys
// and values both count).
func (r *mpReader) skipHeader() (inner uint64, err error) {
	c, err := r.code()
	if err != nil {
		return 0, err
	}
	switch {
	case isFixNum(c), c == 0xc0, c == 0xc2, c == 0xc3:
		return 0, nil
	case c <= 0x8f:
		return 2 * uint64(c&0x0f), nil
	case c <= 0x9f:
		return uint64(c & 0x0f), nil
	case c <= 0xbf:
		_, _, err = r.take(uint64(c & 0x1f))
		return 0, err
	}
	var skip, size uint64
	switch c {
	case 0xcc, 0xd0:
		skip = 1
	case 0xcd, 0xd1:
		skip = 2
	case 0xca, 0xce, 0xd2:
		skip = 4
	case 0xcb, 0xcf, 0xd3:
		skip = 8
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1, 2, 4, 8, 16 and a type byte
		skip = 1 + 1<<(c-0xd4)
	case 0xc4, 0xd9:
		skip, err = r.be(1)
	case 0xc5, 0xda:
		skip, err = r.be(2)
	case 0xc6, 0xdb:
		skip, err = r.be(4)
	case 0xc7:
		size, err = r.be(1)
		skip = size + 1
	case 0xc8:
		size, err = r.be(2)
		skip = size + 1
	case 0xc9:
		size, err = r.be(4)
		skip = size + 1
	case 0xdc:
		inner, err = r.be(2)
	case 0xdd:
		inner, err = r.be(4)
	case 0xde:
		inner, err = r.be(2)
		inner *= 2
	case 0xdf:
		inner, err = r.be(4)
		inner *= 2
	default:
		return 0, fmt.Errorf("msgpack: unknown code %x", c)
	}
	if err != nil {
		return 0, err
	}
	_, _, err = r.take(skip)
	return inner, err
}

var errArrayStruct = errors.New("msgpack: number of fields in array-encoded struct has changed")

// mpStruct is a pointer to a struct with a generated decoder.
type mpStruct[T any] interface {
	*T
	decodeMsgpack(r *mpReader) error
}

// fields are the msgpack fields of a struct in declaration order.
type fields struct {
	names []string
	keys  []string // each name as it is written: a fixstr
}

func fieldsOf(names ...string) *fields {
	f := &fields{names: names}
	for _, n := range names {
		f.keys = append(f.keys, string(appendStr(nil, n)))
	}
	return f
}

// decodeStruct reads a struct into *v in place, as reflection does: fs
// are its fields, and field(i) reads field i.
func decodeStruct[T any](r *mpReader, v *T, fs *fields, field func(i int) error) error {
	names := fs.names
	c, err := r.code()
	if err != nil {
		return err
	}
	var n uint64
	byName := true
	switch {
	case c == 0xc0:
		*v = *new(T)
		return nil
	case c >= 0x80 && c <= 0x8f:
		n = uint64(c & 0x0f)
	case c == 0xde:
		n, err = r.be(2)
	case c == 0xdf:
		n, err = r.be(4)
	case c >= 0x90 && c <= 0x9f:
		n, byName = uint64(c&0x0f), false
	case c == 0xdc:
		n, err = r.be(2)
		byName = false
	case c == 0xdd:
		n, err = r.be(4)
		byName = false
	default:
		return fmt.Errorf("msgpack: invalid code=%x decoding map length", c)
	}
	if err != nil {
		return err
	}
	if !byName {
		if n == 0 {
			*v = *new(T)
			return nil
		}
		if n != uint64(len(names)) {
			return errArrayStruct
		}
		for i := range names {
			if err := field(i); err != nil {
				return err
			}
		}
		return nil
	}
	next := 0 // fields usually come in declaration order
	for range n {
		var f int
		if next < len(fs.keys) && r.skipBytes(fs.keys[next]) {
			f = next // the next field, as it is written
			next++
		} else if f, err = r.fieldIndex(fs, &next); err != nil {
			return err
		}
		if f < 0 {
			err = r.skip()
		} else {
			err = field(f)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// skipBytes reads past b if it is next.
func (r *mpReader) skipBytes(b string) bool {
	if len(r.b)-r.i >= len(b) && string(r.b[r.i:r.i+len(b)]) == b {
		r.i += len(b)
		return true
	}
	return false
}

// fieldIndex reads a key and returns the index of its field in fs, or
// -1; next becomes the field after it.
func (r *mpReader) fieldIndex(fs *fields, next *int) (int, error) {
	start, end, err := r.rawStr()
	if err != nil {
		return 0, err
	}
	key := r.b[start:end]
	for i, name := range fs.names {
		if name == string(key) {
			*next = i + 1
			return i, nil
		}
	}
	return -1, nil
}

// structPtr reads a pointer to a struct in place: nil sets it to nil,
// anything else decodes into the struct it points to (a new one when it
// was nil).
func structPtr[T any, P mpStruct[T]](r *mpReader, dst **T) error {
	if r.i < len(r.b) && r.b[r.i] == 0xc0 {
		r.i++
		*dst = nil
		return nil
	}
	if *dst == nil {
		*dst = new(T)
	}
	return P(*dst).decodeMsgpack(r)
}

// structs reads a []T as reflection does: nil gives nil, an array
// decodes into the elements already there and appends zero ones as it
// needs them.
func structs[T any, P mpStruct[T]](r *mpReader, dst *[]T) error {
	return slice(r, dst, func(v *T) error { return P(v).decodeMsgpack(r) })
}

// structPtrs reads a []*T as reflection does.
func structPtrs[T any, P mpStruct[T]](r *mpReader, dst *[]*T) error {
	return slice(r, dst, func(v **T) error { return structPtr[T, P](r, v) })
}

// sliceAllocLimit is how many elements reflection adds to a slice at a
// time: a forged length allocates no more than that before the data
// runs out.
const sliceAllocLimit = 1e4

func slice[T any](r *mpReader, dst *[]T, elem func(*T) error) error {
	n, err := r.arrayLen()
	if err != nil {
		return err
	}
	v := *dst
	switch {
	case n < 0:
		*dst = nil
		return nil
	case v == nil:
		v = make([]T, min(n, sliceAllocLimit)) // what appending to nil makes
	case cap(v) >= n:
		v = v[:n]
	case len(v) < cap(v):
		v = v[:cap(v)]
	}
	for i := range n {
		if i >= len(v) {
			v = append(v, make([]T, min(n-len(v), sliceAllocLimit))...)
		}
		if err := elem(&v[i]); err != nil {
			*dst = v
			return err
		}
	}
	*dst = v[:n]
	return nil
}

// intField reads an int field.
func (r *mpReader) intField(dst *int) error {
	n, err := r.int()
	*dst = int(n)
	return err
}

func (r *mpReader) int64Field(dst *int64) error {
	n, err := r.int()
	*dst = n
	return err
}

func (r *mpReader) uintField(dst *uint64) error {
	n, err := r.uint()
	*dst = n
	return err
}

func (r *mpReader) boolField(dst *bool) error {
	v, err := r.bool()
	*dst = v
	return err
}

func (r *mpReader) float64Field(dst *float64) error {
	v, err := r.float64()
	*dst = v
	return err
}

// isNil reads a nil if one is next.
func (r *mpReader) isNil() bool {
	if r.i < len(r.b) && r.b[r.i] == 0xc0 {
		r.i++
		return true
	}
	return false
}

// ptrField reads a pointer to a scalar: nil sets it to nil, anything
// else decodes into the value it points to (a new one when it was nil).
func ptrField[T any](r *mpReader, dst **T, read func(*T) error) error {
	if r.isNil() {
		*dst = nil
		return nil
	}
	if *dst == nil {
		*dst = new(T)
	}
	return read(*dst)
}

// Writing.

func appendMapLen(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x80|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xde), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, 0xdf), uint32(n))
}

func appendArrayLen(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x90|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xdc), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, 0xdd), uint32(n))
}

func appendStr(b []byte, s string) []byte {
	switch n := len(s); {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n < 256:
		b = append(b, 0xd9, byte(n))
	case n <= math.MaxUint16:
		b = binary.BigEndian.AppendUint16(append(b, 0xda), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, 0xdb), uint32(n))
	}
	return append(b, s...)
}

// appendKey writes a field name.
func appendKey(b []byte, name string) []byte { return appendStr(b, name) }

func appendNil(b []byte) []byte { return append(b, 0xc0) }

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 0xc3)
	}
	return append(b, 0xc2)
}

// appendInt writes an int in its shortest form (EncodeInt).
func appendInt(b []byte, n int64) []byte {
	switch {
	case n >= 0:
		return appendUint(b, uint64(n))
	case n >= -32:
		return append(b, byte(n))
	case n >= math.MinInt8:
		return append(b, 0xd0, byte(n))
	case n >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(b, 0xd1), uint16(n))
	case n >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(b, 0xd2), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(n))
}

// appendUint writes a uint in its shortest form (EncodeUint).
func appendUint(b []byte, n uint64) []byte {
	switch {
	case n <= math.MaxInt8:
		return append(b, byte(n))
	case n <= math.MaxUint8:
		return append(b, 0xcc, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xcd), uint16(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, 0xce), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xcf), n)
}

// appendInt64 writes an int64 field: always 9 bytes.
func appendInt64(b []byte, n int64) []byte {
	return binary.BigEndian.AppendUint64(append(b, 0xd3), uint64(n))
}

// appendUint64 writes a uint64 field: always 9 bytes.
func appendUint64(b []byte, n uint64) []byte {
	return binary.BigEndian.AppendUint64(append(b, 0xcf), n)
}

func appendFloat64(b []byte, f float64) []byte {
	return binary.BigEndian.AppendUint64(append(b, 0xcb), math.Float64bits(f))
}

// appendStrings writes a []string: nil as nil.
func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return appendNil(b)
	}
	b = appendArrayLen(b, len(ss))
	for _, s := range ss {
		b = appendStr(b, s)
	}
	return b
}

// count returns how many of the conditions hold: the number of
// omitempty fields a struct writes.
func count(present ...bool) int {
	n := 0
	for _, p := range present {
		if p {
			n++
		}
	}
	return n
}
