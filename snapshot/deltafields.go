package snapshot

import "crypto/sha256"

// Reading a delta's changed entities a few fields at a time: a far diff
// needs of each only its id and the fields it is named by, and reads
// every delta between two points.

// DeltaReader reads the changed entities of delta snapshots
// (EachEntity), each delta's body decompressed into one buffer it keeps.
// The zero DeltaReader is ready.
type DeltaReader struct {
	body []byte
}

// DeltaFields are the string fields EachEntity reads of each kind of
// entity, by kind (plans, tasks, approvals, exec records: RawScope.Lists'
// order), at most MaxDeltaFields of them.
type DeltaFields [4][]string

// MaxDeltaFields is how many fields EachEntity reads of an entity.
const MaxDeltaFields = 8

// Check checks b as DecodeDeltaRaw does (framing, CRC, the body hash)
// and returns its body: b's for a delta stored as it is, else
// decompressed into the reader's buffer, valid until the reader's next
// Check.
func (r *DeltaReader) Check(b []byte) ([]byte, error) {
	h, body, err := checkFrame(b)
	if err != nil {
		return nil, err
	}
	if !h.IsDelta() {
		return nil, corruptf("a full snapshot where a delta was expected")
	}
	if h.Packed() {
		if body, err = r.unpack(h, body); err != nil {
			return nil, err
		}
	}
	if sha256.Sum256(body) != h.BodyHash {
		return nil, errBodyHash
	}
	return body, nil
}

// EachEntity is Check and EachDeltaEntity of the body.
func (r *DeltaReader) EachEntity(b []byte, keys *DeltaFields, each func(kind int, fields [][]byte, bad uint) error) (project bool, deleted *Deleted, err error) {
	body, err := r.Check(b)
	if err != nil {
		return false, nil, err
	}
	return EachDeltaEntity(body, keys, each)
}

// EachDeltaEntity calls each with every plan, task, approval and exec
// record a delta's body (Check's) changes (kind: RawScope.Lists' index),
// in the body's order, with the values of the entity's string fields
// keys[kind] in fields, in keys' order: nil for one it does not have or
// has as nil, or whose value is not a string (bad has that field's bit,
// 1<<i, set); an entity that is not a map has every bit set. The fields
// are subslices of body. Each entity is read once, its other fields
// skipped; checkpoints are not read. It returns whether the delta
// changes the project and the ids it deletes, or each's error, or
// ErrCorrupt for a body that does not read as a delta's (DecodeDeltaRaw
// refuses the same).
func EachDeltaEntity(body []byte, keys *DeltaFields, each func(kind int, fields [][]byte, bad uint) error) (project bool, deleted *Deleted, err error) {
	project, at, err := eachDeltaEntity(body, keys, each)
	if err != nil {
		return false, nil, err
	}
	d, err := readDeleted(body[at:])
	if err != nil {
		return false, nil, err
	}
	return project, d, nil
}

// eachDeltaEntity is EachDeltaEntity up to the deletions: it returns
// their offset in body, unread.
func eachDeltaEntity(body []byte, keys *DeltaFields, each func(kind int, fields [][]byte, bad uint) error) (project bool, deletedAt int, err error) {
	n, at, ok := mapLen(body, 0)
	if !ok {
		return false, 0, corruptf("body is not a state")
	}
	var fields [MaxDeltaFields][]byte
	for range n {
		key, next, ok := strBytes(body, at)
		if !ok {
			return false, 0, corruptf("body is not a state")
		}
		at = next
		kind := -1
		for j, k := range scopeKeys[1:5] {
			if k == string(key) {
				kind = j
			}
		}
		if string(key) == scopeKeys[0] && at < len(body) && body[at] != 0xc0 {
			project = true
		}
		if kind < 0 || (at < len(body) && body[at] == 0xc0) {
			if at, ok = skip(body, at, 0); !ok {
				return false, 0, corruptf("body does not decode")
			}
			continue
		}
		count, p, ok := arrayLen(body, at)
		if !ok {
			return false, 0, corruptf("body does not decode")
		}
		want := keys[kind]
		if len(want) > MaxDeltaFields {
			want = want[:MaxDeltaFields]
		}
		for range count {
			var bad uint
			if p, bad, ok = readFields(body, p, want, fields[:len(want)]); !ok {
				return false, 0, corruptf("body does not decode")
			}
			if err := each(kind, fields[:len(want)], bad); err != nil {
				return false, 0, err
			}
		}
		at = p
	}
	return project, at, nil
}

// unpack is the package's unpack into the reader's buffer.
func (r *DeltaReader) unpack(h Header, body []byte) ([]byte, error) {
	n, err := decodedLen(h, body)
	if err != nil {
		return nil, err
	}
	if cap(r.body) < n {
		r.body = make([]byte, n)
	}
	return decodeBlock(r.body[:n], body)
}

// readFields reads the entity encoded at b[at:] (a msgpack value),
// setting fields[i] to the value of its string field keys[i] (nil when
// it has none, or nil, or one that is not a string: bad's bit i), and
// returns the offset after it; ok false when it does not read (as skip
// reads it). A value that is not a map sets every bit of bad; a key
// that is not a string is skipped with its value.
func readFields(b []byte, at int, keys []string, fields [][]byte) (end int, bad uint, ok bool) {
	clear(fields)
	n, p, isMap := mapLen(b, at)
	if !isMap {
		end, ok = skip(b, at, 0)
		return end, 1<<len(keys) - 1, ok
	}
	for range n {
		key, next, isStr := strBytes(b, p)
		if !isStr { // not a field of an entity's: skipped
			if next, ok = skip(b, p, 1); !ok {
				return 0, 0, false
			}
		}
		for i, k := range keys {
			if k != string(key) {
				continue
			}
			switch v, _, isStr := strBytes(b, next); {
			case isStr:
				fields[i] = v
			case next < len(b) && b[next] == 0xc0:
			default:
				bad |= 1 << i
			}
		}
		if p, ok = skipValue(b, next); !ok {
			return 0, 0, false
		}
	}
	return p, bad, true
}

// skipValue is skip for a field's value: a scalar read in place (most
// of an entity's fields), an empty array or map too, only a container
// walked by skip.
func skipValue(b []byte, at int) (int, bool) {
	if at >= len(b) {
		return 0, false
	}
	switch c := b[at]; {
	case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3 || c == 0x80 || c == 0x90:
		return at + 1, true
	case c&0xe0 == 0xa0:
		end := at + 1 + int(c&0x1f)
		return end, end <= len(b)
	case c&0xf0 == 0x80 || c&0xf0 == 0x90 || c == 0xdc || c == 0xdd || c == 0xde || c == 0xdf:
		return skip(b, at, 1)
	default:
		return skipScalar(b, at, c)
	}
}
