package snapshot

import (
	"crypto/sha256"
)

// Reading a state raw: the encodings of its entities, none decoded (a
// diff of two states decodes only the entities whose encodings differ).

// DecodeRaw checks b as Decode does (length, framing, CRC, the body hash)
// and returns the state of a full snapshot as a RawScope: each entity's
// encoding, a subslice of a body it owns (b is not kept). Only the body's
// framing is read (msgpack lengths): the entities are decoded by whoever
// needs them, and any that does not decode then is the caller's to
// report.
func DecodeRaw(b []byte) (Header, *RawScope, error) {
	h, body, err := checkedBody(b)
	if err != nil {
		return h, nil, err
	}
	if h.IsDelta() {
		return h, nil, ErrDelta
	}
	s, n, err := splitScope(body)
	if err == nil && n != len(body) {
		err = corruptf("body has %d bytes after the state", len(body)-n)
	}
	return h, s, err
}

// DecodeDeltaRaw is DecodeDelta with the changed entities as a RawScope
// (Project nil when the project did not change), read as DecodeRaw reads
// a state.
func DecodeDeltaRaw(b []byte) (Header, *RawScope, *Deleted, error) {
	h, body, err := checkedBody(b)
	if err != nil {
		return h, nil, nil, err
	}
	if !h.IsDelta() {
		return h, nil, nil, corruptf("a full snapshot where a delta was expected")
	}
	s, n, err := splitScope(body)
	if err != nil {
		return h, nil, nil, err
	}
	d, err := readDeleted(body[n:])
	if err != nil {
		return h, nil, nil, err
	}
	return h, s, d, nil
}

// readDeleted reads the ids a delta deletes, the end of its body after
// the state.
func readDeleted(rest []byte) (*Deleted, error) {
	d := new(Deleted)
	for _, l := range d.lists() {
		var err error
		if *l, rest, err = readIDs(rest); err != nil {
			return nil, err
		}
	}
	if len(rest) != 0 {
		return nil, corruptf("delta body has %d bytes after the deletions", len(rest))
	}
	return d, nil
}

// checkedBody frames b, unpacks its body (a copy, for an unpacked one)
// and checks the body hash.
func checkedBody(b []byte) (Header, []byte, error) {
	h, body, err := checkFrame(b)
	if err == nil {
		if !h.Packed() {
			body = append([]byte(nil), body...)
		}
		body, err = unpack(h, body)
	}
	if err != nil {
		return h, nil, err
	}
	if sha256.Sum256(body) != h.BodyHash {
		return h, nil, errBodyHash
	}
	return h, body, nil
}

// splitScope reads the msgpack map of a Scope at the start of b into a
// RawScope and returns how many bytes it took. A field it does not know
// is skipped.
func splitScope(b []byte) (*RawScope, int, error) {
	s := &RawScope{}
	n, at, ok := mapLen(b, 0)
	if !ok {
		return nil, 0, corruptf("body is not a state")
	}
	lists := s.Lists()
	for range n {
		key, next, ok := strBytes(b, at)
		if !ok {
			return nil, 0, corruptf("body is not a state")
		}
		at = next
		i := -1
		for j, k := range scopeKeys {
			if k == string(key) {
				i = j
			}
		}
		end, ok := skip(b, at, 0)
		if !ok {
			return nil, 0, corruptf("body does not decode")
		}
		switch {
		case i == 0:
			if b[at] != 0xc0 {
				s.Project = b[at:end:end]
			}
		case i > 0:
			if b[at] == 0xc0 {
				break
			}
			count, p, ok := arrayLen(b, at)
			if !ok {
				return nil, 0, corruptf("body does not decode")
			}
			l := make([][]byte, 0, count)
			for range count {
				e, ok := skip(b, p, 0)
				if !ok {
					return nil, 0, corruptf("body does not decode")
				}
				l = append(l, b[p:e:e])
				p = e
			}
			*lists[i-1] = l
		}
		at = end
	}
	return s, at, nil
}

// EntityID returns the id of an entity's encoding (its "id" field; a
// project's "name"); ok false when it has none.
func EntityID(e []byte, project bool) (string, bool) {
	want := "id"
	if project {
		want = "name"
	}
	n, at, ok := mapLen(e, 0)
	if !ok {
		return "", false
	}
	for range n {
		key, next, ok := strBytes(e, at)
		if !ok {
			return "", false
		}
		if string(key) == want {
			id, _, ok := str(e, next)
			return id, ok
		}
		if at, ok = skip(e, next, 0); !ok {
			return "", false
		}
	}
	return "", false
}

// maxDepth bounds the nesting skip follows.
const maxDepth = 64

func be(b []byte, at, n int) (uint64, bool) {
	if at+n > len(b) {
		return 0, false
	}
	var v uint64
	for _, c := range b[at : at+n] {
		v = v<<8 | uint64(c)
	}
	return v, true
}

// mapLen reads a map header at b[at:].
func mapLen(b []byte, at int) (n, next int, ok bool) {
	if at >= len(b) {
		return 0, 0, false
	}
	c := b[at]
	switch {
	case c&0xf0 == 0x80:
		return int(c & 0x0f), at + 1, true
	case c == 0xde:
		v, ok := be(b, at+1, 2)
		return int(v), at + 3, ok
	case c == 0xdf:
		v, ok := be(b, at+1, 4)
		return int(v), at + 5, ok && v <= uint64(len(b))
	}
	return 0, 0, false
}

// arrayLen reads an array header at b[at:].
func arrayLen(b []byte, at int) (n, next int, ok bool) {
	if at >= len(b) {
		return 0, 0, false
	}
	c := b[at]
	switch {
	case c&0xf0 == 0x90:
		return int(c & 0x0f), at + 1, true
	case c == 0xdc:
		v, ok := be(b, at+1, 2)
		return int(v), at + 3, ok
	case c == 0xdd:
		v, ok := be(b, at+1, 4)
		return int(v), at + 5, ok && v <= uint64(len(b))
	}
	return 0, 0, false
}

// str reads a string at b[at:].
func str(b []byte, at int) (s string, next int, ok bool) {
	v, next, ok := strBytes(b, at)
	return string(v), next, ok
}

// strBytes reads a string at b[at:] as its bytes in b (a key compared
// so is not copied).
func strBytes(b []byte, at int) (s []byte, next int, ok bool) {
	if at >= len(b) {
		return nil, 0, false
	}
	c, n, start := b[at], 0, 0
	switch {
	case c&0xe0 == 0xa0:
		n, start = int(c&0x1f), at+1
	case c == 0xd9 || c == 0xda || c == 0xdb:
		w := 1 << (c - 0xd9)
		v, ok := be(b, at+1, w)
		if !ok {
			return nil, 0, false
		}
		n, start = int(v), at+1+w
	default:
		return nil, 0, false
	}
	if n < 0 || start+n > len(b) {
		return nil, 0, false
	}
	return b[start : start+n], start + n, true
}

// skip returns the offset after the msgpack value at b[at:], a value
// nested at depth; one nested deeper than maxDepth does not read. It
// walks the value without recursion: a count of the values left at each
// open level, scalars read in place (splitting a snapshot's body into
// its entities is most of a raw read).
func skip(b []byte, at, depth int) (int, bool) {
	if depth > maxDepth {
		return 0, false
	}
	var left [maxDepth + 2]int // values still to read at each open level
	top := 0
	left[0] = 1
	for {
		for left[top] == 0 {
			if top == 0 {
				return at, true
			}
			top--
		}
		left[top]--
		if at >= len(b) {
			return 0, false
		}
		c := b[at]
		switch {
		case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
			at++
			continue
		case c&0xe0 == 0xa0:
			if at += 1 + int(c&0x1f); at > len(b) {
				return 0, false
			}
			continue
		}
		var n, next int
		var ok bool
		switch {
		case c&0xf0 == 0x80 || c == 0xde || c == 0xdf:
			n, next, ok = mapLen(b, at)
			n *= 2
		case c&0xf0 == 0x90 || c == 0xdc || c == 0xdd:
			n, next, ok = arrayLen(b, at)
		default:
			next, ok = skipScalar(b, at, c)
		}
		if !ok {
			return 0, false
		}
		if n > 0 {
			if depth+top+1 > maxDepth {
				return 0, false
			}
			top++
			left[top] = n
		}
		at = next
	}
}

// skipScalar returns the offset after the msgpack scalar (not a fixint,
// fixstr, nil or bool) whose first byte c is at b[at].
func skipScalar(b []byte, at int, c byte) (int, bool) {
	var size uint64 // bytes of data after the header
	hdr := 1
	switch {
	case c == 0xcc || c == 0xd0:
		size = 1
	case c == 0xcd || c == 0xd1:
		size = 2
	case c == 0xce || c == 0xd2 || c == 0xca:
		size = 4
	case c == 0xcf || c == 0xd3 || c == 0xcb:
		size = 8
	case c == 0xd9 || c == 0xc4:
		v, ok := be(b, at+1, 1)
		size, hdr = v, 2
		if !ok {
			return 0, false
		}
	case c == 0xda || c == 0xc5:
		v, ok := be(b, at+1, 2)
		size, hdr = v, 3
		if !ok {
			return 0, false
		}
	case c == 0xdb || c == 0xc6:
		v, ok := be(b, at+1, 4)
		size, hdr = v, 5
		if !ok {
			return 0, false
		}
	case c >= 0xd4 && c <= 0xd8: // fixext: a type byte and 1, 2, 4, 8 or 16 bytes
		size, hdr = 1<<(c-0xd4), 2
	case c == 0xc7 || c == 0xc8 || c == 0xc9: // ext 8, 16, 32: a length, a type byte
		w := 1 << (c - 0xc7)
		v, ok := be(b, at+1, w)
		size, hdr = v, 2+w
		if !ok {
			return 0, false
		}
	default:
		return 0, false
	}
	end := uint64(at) + uint64(hdr) + size
	if end > uint64(len(b)) {
		return 0, false
	}
	return int(end), true
}

// StringFields returns the values of an entity encoding's string fields
// keys ("" for one it does not have, or has as nil); ok false when the
// encoding is not a map or one of them is not a string. The encoding is
// read up to the last of keys it has, each key taken as an encoding has
// it, once: what comes after is not read (a body whose hash checked holds
// the encodings it was written with).
func StringFields(e []byte, keys ...string) ([]string, bool) {
	out := make([]string, len(keys))
	n, at, ok := mapLen(e, 0)
	if !ok {
		return nil, false
	}
	found := 0 // the keys met (an encoding has each key once): the rest is not read
	for range n {
		if found == len(keys) {
			return out, true
		}
		key, next, ok := strBytes(e, at)
		if !ok {
			return nil, false
		}
		for i, k := range keys {
			if k != string(key) {
				continue
			}
			found++
			if next < len(e) && e[next] != 0xc0 {
				if out[i], _, ok = str(e, next); !ok {
					return nil, false
				}
			}
		}
		if at, ok = skip(e, next, 0); !ok {
			return nil, false
		}
	}
	return out, true
}
