package snapshot

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"math"
)

// RawScope is a state held as the encodings of its entities: Project is
// the project's (projection.AppendEntity's bytes; nil when there is
// none), and each list holds the encodings of one kind's entities in id
// order. Its body (AppendRawScope) is byte for byte what
// projection.AppendScope writes for the state with empty, not nil,
// lists: so a state can be hashed, compared and stored entity by entity,
// without decoding an entity it did not change.
type RawScope struct {
	Project                                     []byte
	Plans, Tasks, Approvals, Execs, Checkpoints [][]byte
}

// Lists returns the kinds' lists in their order in the body (plans,
// tasks, approvals, execs, checkpoints: Deleted's order too).
func (s *RawScope) Lists() []*[][]byte {
	return []*[][]byte{&s.Plans, &s.Tasks, &s.Approvals, &s.Execs, &s.Checkpoints}
}

// scopeKeys are the names of a Scope's fields, in the body's order.
var scopeKeys = [6]string{"project", "plans", "tasks", "approvals", "execs", "checkpoints"}

// writeRaw writes the body of s to w, as AppendScope writes it.
func (s *RawScope) writeRaw(w func([]byte)) {
	var buf [8]byte
	w(append(buf[:0], 0x80|6)) // a map of the six fields
	w(appendFixStr(buf[:0], scopeKeys[0]))
	if s.Project == nil {
		w(append(buf[:0], 0xc0))
	} else {
		w(s.Project)
	}
	for i, l := range s.Lists() {
		w(appendFixStr(buf[:0], scopeKeys[i+1]))
		w(appendArrayLen(buf[:0], len(*l)))
		for _, e := range *l {
			w(e)
		}
	}
}

// fixStr is the encoding of a short string (under 32 bytes).
func appendFixStr(b []byte, s string) []byte {
	b = append(b, 0xa0|byte(len(s)))
	return append(b, s...)
}

// appendArrayLen writes an array's length as msgpack does.
func appendArrayLen(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x90|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, 0xdc), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, 0xdd), uint32(n))
}

// AppendRawScope appends the body of s: the full layout's body of the
// state it holds.
func AppendRawScope(b []byte, s *RawScope) []byte {
	s.writeRaw(func(p []byte) { b = append(b, p...) })
	return b
}

// RawLen is the length of s's body.
func (s *RawScope) RawLen() int {
	n := 0
	s.writeRaw(func(p []byte) { n += len(p) })
	return n
}

// RawStateHash is the state hash of s: the SHA-256 of its body, computed
// without writing the body out.
func RawStateHash(s *RawScope) [32]byte {
	var h hash.Hash = sha256.New()
	s.writeRaw(func(p []byte) { h.Write(p) })
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// AppendDeltaBody appends the body of a delta whose changed entities are
// changed (a RawScope of them alone: Project nil when the project did
// not change) and whose deleted ids are deleted: what EncodeDelta writes
// for the Delta they encode.
func AppendDeltaBody(b []byte, changed *RawScope, deleted *Deleted) []byte {
	return appendDeletions(AppendRawScope(b, changed), deleted)
}
