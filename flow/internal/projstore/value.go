package projstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/klauspost/compress/s2"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// The body of an entity's value (Format 4; doc.go) is one kind byte and
// what the kind says:
//
//	valuePacked   the entity's msgpack, packed (below)
//	valueS2       the packed msgpack, compressed as an S2 block
//	valueExecRef  an exec record: uvarint Meta.Seq, uvarint Meta.Version,
//	              its task id (the rest of the body; a list by task tests
//	              it undecoded, see Each); the rest of the exec is the
//	              event at that seq (projection.ExecAt), which the log
//	              holds anyway
//
// Packing rewrites some msgpack tokens as two or more bytes starting with
// 0xc1, the one type byte msgpack never uses, and leaves every other byte
// alone, so that unpacking gives back the msgpack byte for byte:
//
//	0xc1 k (k < 0x80)   the fixstr packWords[k]
//	0xc1 0x80 uvarint   a uint64 (0xcf) below 2^49
//	0xc1 0x81 32 bytes  a str8 of 64 lower-case hex digits (a SHA-256)
//
// packWords are the entities' field names and the statuses: append only.
// A body that starts with a msgpack map header instead (Format 3 and
// earlier) is the plain msgpack.
const (
	valuePacked  = 0x01
	valueS2      = 0x02
	valueExecRef = 0x03

	packMark = 0xc1
	packUint = 0x80
	packHex  = 0x81
)

var packWords = [...]string{
	// Meta, Project, Counters
	"version", "seq", "created_at", "created_by", "updated_at", "name", "description", "archived",
	"counters", "events", "plans", "tasks", "approvals", "execs", "checkpoints",
	// Plan, Task, Claim, Step
	"project", "id", "title", "status", "plan", "owner", "tags", "priority", "deps", "ref",
	"claim", "actor", "session", "lease_until", "claimed_at", "steps", "progress", "note",
	"result", "error", "context", "context_version", "pending_approvals", "notes", "forced",
	// Approval, Exec, Output, Checkpoint
	"task", "step", "message", "code", "action", "action_hash", "expires", "requested_by",
	"decided_by", "comment", "decided_at", "command", "cwd", "exit_code", "success",
	"elapsed_ms", "stdout", "stderr", "head", "tail", "bytes", "sha256", "added_vars",
	"added_imports", "git_head", "occurred_at", "label", "at_seq",
	// statuses
	"open", "closed", "todo", "doing", "done", "blocked", "cancelled", "pending",
	"in_progress", "completed", "failed", "skipped", "granted", "denied",
}

var packIndex = func() map[string]byte {
	m := make(map[string]byte, len(packWords))
	for i, w := range packWords {
		m[w] = byte(i)
	}
	return m
}()

// errPacked is a body that does not unpack: damage, since every body
// written was checked by its seal.
var errPacked = errors.New("bad packed msgpack")

// bufPool holds the buffers an encode or decode works in.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// appendBody appends the stored body of the entity v.
func appendBody(b []byte, v any) ([]byte, error) {
	mp := bufPool.Get().(*[]byte)
	defer bufPool.Put(mp)
	b, m, err := appendBodyMsgpack(b, (*mp)[:0], v)
	if cap(m) > cap(*mp) {
		*mp = m[:0]
	}
	return b, err
}

// appendBodyMsgpack is appendBody that also returns the entity's msgpack
// (projection.AppendEntity), appended to m; m is nil for an exec, stored
// by reference, whose msgpack it does not encode.
func appendBodyMsgpack(b, m []byte, v any) (body, msgpack []byte, err error) {
	if x, ok := v.(*projection.Exec); ok {
		b = binary.AppendUvarint(append(b, valueExecRef), x.Seq)
		return append(binary.AppendUvarint(b, x.Version), x.Task...), nil, nil
	}
	m, ok := projection.AppendEntity(m, v)
	if !ok {
		return nil, nil, fmt.Errorf("flow: %T is not a projected entity", v)
	}
	if b, err = appendPacked(b, m); err != nil {
		return nil, nil, fmt.Errorf("flow: %T: %w", v, err)
	}
	return b, m, nil
}

// appendPacked appends the stored body of the entity whose msgpack is m:
// packed, compressed when that is shorter.
func appendPacked(b, m []byte) ([]byte, error) {
	pp := bufPool.Get().(*[]byte)
	defer bufPool.Put(pp)
	p, err := pack((*pp)[:0], m)
	*pp = p
	if err != nil {
		return nil, err
	}
	zp := bufPool.Get().(*[]byte)
	defer bufPool.Put(zp)
	z := s2.Encode((*zp)[:0], p)
	*zp = z
	if len(z) < len(p) {
		return append(append(b, valueS2), z...), nil
	}
	return append(append(b, valuePacked), p...), nil
}

// pack appends the packed form of the msgpack m to dst.
func pack(dst, m []byte) ([]byte, error) {
	for i := 0; i < len(m); {
		h, n, err := token(m, i)
		if err != nil {
			return dst, err
		}
		switch c := m[i]; {
		case c >= 0xa0 && c <= 0xbf:
			if k, ok := packIndex[string(m[i+h:i+h+n])]; ok {
				dst = append(dst, packMark, k)
				i += h + n
				continue
			}
		case c == 0xcf:
			if v := binary.BigEndian.Uint64(m[i+1:]); v < 1<<49 {
				dst = binary.AppendUvarint(append(dst, packMark, packUint), v)
				i += h + n
				continue
			}
		case c == 0xd9 && n == 64:
			if out, ok := appendHex(append(dst, packMark, packHex), m[i+h:i+h+n]); ok {
				dst = out
				i += h + n
				continue
			}
		}
		dst = append(dst, m[i:i+h+n]...)
		i += h + n
	}
	return dst, nil
}

// appendHex appends the 32 bytes the 64 lower-case hex digits s spell;
// false when s is not that.
func appendHex(dst, s []byte) ([]byte, bool) {
	for i := 0; i < len(s); i += 2 {
		hi, ok1 := hexDigit(s[i])
		lo, ok2 := hexDigit(s[i+1])
		if !ok1 || !ok2 {
			return dst, false
		}
		dst = append(dst, hi<<4|lo)
	}
	return dst, true
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

const hexDigits = "0123456789abcdef"

// unpack appends the msgpack the packed p stands for to dst.
func unpack(dst, p []byte) ([]byte, error) {
	for i := 0; i < len(p); {
		if p[i] != packMark {
			h, n, err := token(p, i)
			if err != nil {
				return dst, err
			}
			dst = append(dst, p[i:i+h+n]...)
			i += h + n
			continue
		}
		if i+1 >= len(p) {
			return dst, errPacked
		}
		switch k := p[i+1]; {
		case int(k) < len(packWords):
			w := packWords[k]
			dst = append(append(dst, 0xa0|byte(len(w))), w...)
			i += 2
		case k == packUint:
			v, n := binary.Uvarint(p[i+2:])
			if n <= 0 {
				return dst, errPacked
			}
			dst = binary.BigEndian.AppendUint64(append(dst, 0xcf), v)
			i += 2 + n
		case k == packHex:
			if i+2+32 > len(p) {
				return dst, errPacked
			}
			dst = append(dst, 0xd9, 64)
			for _, c := range p[i+2 : i+2+32] {
				dst = append(dst, hexDigits[c>>4], hexDigits[c&0xf])
			}
			i += 2 + 32
		default:
			return dst, errPacked
		}
	}
	return dst, nil
}

// token is the length of the header and of the payload of the msgpack
// token at m[i], which must lie within m. A map or an array is its header
// alone: its elements are the tokens that follow.
func token(m []byte, i int) (h, n int, err error) {
	c := m[i]
	switch {
	case c <= 0x7f, c >= 0xe0, c >= 0x80 && c <= 0x9f, c == 0xc0, c == 0xc2, c == 0xc3:
		h, n = 1, 0
	case c >= 0xa0 && c <= 0xbf:
		h, n = 1, int(c&0x1f)
	default:
		h, n = tokenLong(m, i)
	}
	if h == 0 || n < 0 || i+h+n > len(m) || i+h+n < i {
		return 0, 0, errPacked
	}
	return h, n, nil
}

// tokenLong is token for the type bytes 0xc4 to 0xdf; 0, 0 for 0xc1 or a
// header cut short.
func tokenLong(m []byte, i int) (h, n int) {
	size := func(h, w int) (int, int) { // a header of h bytes, the length in the w after the type byte
		if i+h > len(m) {
			return 0, 0
		}
		switch w {
		case 1:
			return h, int(m[i+1])
		case 2:
			return h, int(binary.BigEndian.Uint16(m[i+1:]))
		}
		return h, int(binary.BigEndian.Uint32(m[i+1:]))
	}
	switch m[i] {
	case 0xc4, 0xd9:
		return size(2, 1)
	case 0xc5, 0xda:
		return size(3, 2)
	case 0xc6, 0xdb:
		return size(5, 4)
	case 0xc7:
		return size(3, 1) // ext: the length, then the ext type
	case 0xc8:
		return size(4, 2)
	case 0xc9:
		return size(6, 4)
	case 0xcc, 0xd0:
		return 1, 1
	case 0xcd, 0xd1:
		return 1, 2
	case 0xca, 0xce, 0xd2:
		return 1, 4
	case 0xcb, 0xcf, 0xd3:
		return 1, 8
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8:
		return 2, 1 << (m[i] - 0xd4)
	case 0xdc, 0xde:
		return 3, 0
	case 0xdd, 0xdf:
		return 5, 0
	}
	return 0, 0
}

// unpackBody returns the msgpack of the entity body (not an exec
// reference), in dst's array when it must be unpacked.
func unpackBody(dst, body []byte) ([]byte, error) {
	if len(body) == 0 {
		return nil, errPacked
	}
	switch body[0] {
	case valuePacked:
		return unpack(dst, body[1:])
	case valueS2:
		n, err := s2.DecodedLen(body[1:])
		if err != nil || n > 1<<24 {
			return nil, errPacked
		}
		zp := bufPool.Get().(*[]byte)
		defer bufPool.Put(zp)
		z := *zp
		if cap(z) < n {
			z = make([]byte, n)
		}
		z, err = s2.Decode(z[:cap(z)], body[1:])
		*zp = z
		if err != nil {
			return nil, errPacked
		}
		return unpack(dst, z)
	}
	if c := body[0]; c >= 0x80 && c <= 0x8f || c == 0xde || c == 0xdf {
		return body, nil // plain msgpack, as Format 3 stored it
	}
	return nil, errPacked
}

// decodeExecRef decodes an exec stored by reference under key, reading
// its event through log.
func decodeExecRef(log store.Tx, bucket string, key, body []byte) (*projection.Exec, error) {
	seq, n := binary.Uvarint(body[1:])
	version, m := binary.Uvarint(body[1+max(n, 0):])
	if n <= 0 || m <= 0 {
		return nil, Damaged(bucket, key, "does not decode: a bad exec reference")
	}
	project, id := splitKey(string(key))
	r, err := log.Record(seq)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, Damaged(bucket, key, fmt.Sprintf("refers to seq %d, which the log does not hold", seq))
	}
	x, err := projection.ExecAt(r, id, version)
	switch task := string(body[1+n+m:]); {
	case err != nil:
	case x.Project != project:
		err = fmt.Errorf("the event at seq %d is of project %q", seq, x.Project)
	case x.Task != task:
		err = fmt.Errorf("the event at seq %d is of task %q, not %q", seq, x.Task, task)
	}
	if err != nil {
		return nil, Damaged(bucket, key, fmt.Sprintf("does not decode: %v", err))
	}
	return x, nil
}

// sameValue reports whether want and got, sealed values under key in
// bucket, hold the same entity: the same bytes, or bodies whose msgpack is
// the same (the S2 encoder of another version of its library may compress
// the same bytes otherwise).
func sameValue(bucket string, key, want, got []byte) bool {
	if string(want) == string(got) {
		return true
	}
	if !slices.Contains(EntityBuckets, bucket) {
		return false
	}
	a, err1 := Unseal(bucket, key, want)
	b, err2 := Unseal(bucket, key, got)
	if err1 != nil || err2 != nil || len(a) == 0 || len(b) == 0 || a[0] == valueExecRef || b[0] == valueExecRef {
		return false
	}
	ma, err1 := unpackBody(nil, a)
	mb, err2 := unpackBody(nil, b)
	return err1 == nil && err2 == nil && string(ma) == string(mb)
}

// EntityMsgpack returns the msgpack encoding (projection.AppendEntity) of
// the entity whose sealed value v is stored under key in bucket: what a
// snapshot body holds of it. An exec stored by reference is read back
// through log and encoded again. The bytes may be v's, valid for log.
func EntityMsgpack(log store.Tx, bucket string, key, v []byte) ([]byte, error) {
	body, err := Unseal(bucket, key, v)
	if err != nil {
		return nil, err
	}
	if len(body) > 0 && body[0] == valueExecRef {
		x, err := decodeExecRef(log, bucket, key, body)
		if err != nil {
			return nil, err
		}
		b, _ := projection.AppendEntity(nil, x)
		return b, nil
	}
	m, err := unpackBody(nil, body)
	if err != nil {
		return nil, Damaged(bucket, key, fmt.Sprintf("does not decode: %v", err))
	}
	return m, nil
}
