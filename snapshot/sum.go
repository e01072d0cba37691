package snapshot

import (
	"crypto/sha256"
	"encoding/binary"
	"math/bits"

	"github.com/flowctl/flowctl/projection"
)

// A state's sum: the state hash of formats 5 and 6. Each entity has a
// digest, the SHA-256 of its kind's number and its encoding
// (EntityDigest); the sum adds the digests up as 256-bit numbers (modulo
// 2^256) and counts each kind's entities, and the state hash is the
// SHA-256 of a tag, the total and the counts (StateSum.Hash). It does not
// depend on the entities' order, so a writer keeps it up to date as
// entities change, adding the digests of the new versions and taking away
// those of the old, at a cost that is what changed, not the state's size.
// A reader of a whole state sums it in one pass (SumOf, RawSum).

// Kinds of entity in a sum, in a RawScope's order: the project, then
// its lists (plans, tasks, approvals, execs, checkpoints).
const (
	KindProject = 0
	// KindList is the kind of the i-th list of a RawScope: KindList+i.
	KindList = 1
	kinds    = 6
)

// sumTag opens the bytes a sum's hash is taken over.
const sumTag = "FLOWSTATESUM1"

// EntityDigest is the digest of an entity of kind (KindProject, or
// KindList+i) whose encoding (projection.AppendEntity's bytes) is enc.
func EntityDigest(kind int, enc []byte) [32]byte {
	h := sha256.New()
	h.Write([]byte{byte(kind)})
	h.Write(enc)
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// StateSum is a state's sum being built: the zero value is the empty
// state's.
type StateSum struct {
	total [4]uint64 // little-endian words
	count [kinds]uint64
}

// Add counts an entity of kind whose digest is d.
func (s *StateSum) Add(kind int, d [32]byte) {
	var c uint64
	for i := range 4 {
		s.total[i], c = bits.Add64(s.total[i], binary.LittleEndian.Uint64(d[8*i:]), c)
	}
	s.count[kind]++
}

// Sub takes away an entity of kind whose digest is d, which Add counted.
func (s *StateSum) Sub(kind int, d [32]byte) {
	var b uint64
	for i := range 4 {
		s.total[i], b = bits.Sub64(s.total[i], binary.LittleEndian.Uint64(d[8*i:]), b)
	}
	s.count[kind]--
}

// Hash is the state hash of the state summed.
func (s *StateSum) Hash() [32]byte {
	b := make([]byte, 0, len(sumTag)+32+8*kinds)
	b = append(b, sumTag...)
	for _, w := range s.total {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	for _, n := range s.count {
		b = binary.BigEndian.AppendUint64(b, n)
	}
	return sha256.Sum256(b)
}

// RawSum is the sum (the state hash of formats 5 and 6) of the state s
// holds.
func RawSum(s *RawScope) [32]byte {
	var sum StateSum
	if s.Project != nil {
		sum.Add(KindProject, EntityDigest(KindProject, s.Project))
	}
	for i, l := range s.Lists() {
		for _, e := range *l {
			sum.Add(KindList+i, EntityDigest(KindList+i, e))
		}
	}
	return sum.Hash()
}

// SumOf is the sum of state st: RawSum of its entities' encodings.
func SumOf(st *projection.Scope) [32]byte {
	var sum StateSum
	var buf []byte
	add := func(kind int, v any) {
		buf, _ = projection.AppendEntity(buf[:0], v)
		sum.Add(kind, EntityDigest(kind, buf))
	}
	if st.Project != nil {
		add(KindProject, st.Project)
	}
	for _, v := range st.Plans {
		add(KindList, v)
	}
	for _, v := range st.Tasks {
		add(KindList+1, v)
	}
	for _, v := range st.Approvals {
		add(KindList+2, v)
	}
	for _, v := range st.Execs {
		add(KindList+3, v)
	}
	for _, v := range st.Checkpoints {
		add(KindList+4, v)
	}
	return sum.Hash()
}

// RawLenOf is the length of the body (AppendRawScope's) of a state whose
// project's encoding is project bytes long (-1: none) and whose i-th list
// holds counts[i] entities of bytes[i] bytes in all: RawLen without the
// entities.
func RawLenOf(project int, counts, bytes [5]int) int {
	n := 1 // a map of six fields
	for _, k := range scopeKeys {
		n += 1 + len(k)
	}
	if project < 0 {
		n++
	} else {
		n += project
	}
	for i := range counts {
		n += len(appendArrayLen(nil, counts[i])) + bytes[i]
	}
	return n
}
