package logidx

import (
	"encoding/binary"
	"hash/maphash"
	"math"

	"github.com/flowctl/flowctl/flow/store"
)

// Checker is Compare fed the log by its caller, for one that walks the
// log anyway (flow.Engine.Verify): it holds each list's open chunk only,
// not every seq. Add takes the log's records in seq order; each chunk it
// closes, and each type it meets first, is an entry the index must hold,
// which it adds to a sum of their hashes (order-free, so the entries may
// come in seq order while the bucket is read in key order). Check sums the
// stored bucket likewise; when the two differ it runs Compare, which
// names the first key that differs.
type Checker struct {
	seed maphash.Seed
	open map[string]*openChunk
	want entrySum
	buf  []byte
}

// openChunk is a list's chunk being filled: its first seq, the last one,
// how many, and the uvarint differences after the first (the value).
type openChunk struct {
	first, last uint64
	n           int
	value       []byte
}

// entrySum is a count of entries and the sum of their hashes.
type entrySum struct {
	n int
	h uint64
}

// NewChecker returns an empty Checker.
func NewChecker() *Checker {
	return &Checker{seed: maphash.MakeSeed(), open: map[string]*openChunk{}}
}

// Add lists the event at seq, the log's next one.
func (c *Checker) Add(seq uint64, ev *store.Event) {
	c.add(kindType, ev.Type, "", seq)
	if ev.Project != "" {
		c.add(kindProjectType, ev.Project, ev.Type, seq)
	}
	if ev.Actor != "" {
		c.add(kindActor, ev.Actor, "", seq)
	}
	if ev.Session != "" {
		c.add(kindSession, ev.Session, "", seq)
	}
}

// add adds seq to the list of kind and term (a project's list: the
// project, and the type in typ), closing its chunk when full.
func (c *Checker) add(kind byte, term, typ string, seq uint64) {
	b := append(c.buf[:0], kind)
	if kind == kindProjectType {
		b = binary.BigEndian.AppendUint16(b, uint16(min(2+len(term)+len(typ), math.MaxUint16)))
		b = binary.BigEndian.AppendUint16(b, uint16(min(len(term), math.MaxUint16)))
		b = append(append(b, term...), typ...)
	} else {
		b = binary.BigEndian.AppendUint16(b, uint16(min(len(term), math.MaxUint16)))
		b = append(b, term...)
	}
	c.buf = b
	o := c.open[string(b)]
	if o == nil {
		o = &openChunk{}
		c.open[string(b)] = o
		if kind == kindType {
			c.entry(append([]byte{kindTypeName}, term...), nil)
		}
	}
	if o.n == 0 {
		o.first = seq
	} else {
		o.value = binary.AppendUvarint(o.value, seq-o.last)
	}
	o.last = seq
	if o.n++; o.n == ChunkSize {
		c.close(b, o)
	}
}

// close counts o's chunk of the list prefix as an entry and empties o.
func (c *Checker) close(prefix []byte, o *openChunk) {
	c.entry(binary.BigEndian.AppendUint64(prefix, o.first), o.value)
	o.n, o.value = 0, o.value[:0]
}

// entry adds the entry k, v to the sum.
func (c *Checker) entry(k, v []byte) { c.want.add(c.hash(k, v)) }

func (s *entrySum) add(h uint64) { s.n, s.h = s.n+1, s.h+h }

// hash is the hash of an entry: k's length, k and v.
func (c *Checker) hash(k, v []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(k)))
	_, _ = h.Write(n[:])
	_, _ = h.Write(k)
	_, _ = h.Write(v)
	return h.Sum64()
}

// Check compares the index in tx with the log Add was given, which is
// all of tx's log. The first difference is a *store.CorruptionError
// naming the key (Compare's).
func (c *Checker) Check(tx store.Tx) error {
	for p, o := range c.open {
		if o.n > 0 {
			c.close([]byte(p), o)
		}
	}
	head, _ := tx.Head()
	c.entry(keyVersion, stamp)
	c.entry(keyThrough, binary.BigEndian.AppendUint64(nil, head))
	var got entrySum
	err := tx.Scan(Bucket, nil, func(k, v []byte) error {
		got.add(c.hash(k, v))
		return nil
	})
	if err != nil || got == c.want {
		return err
	}
	if err := Compare(tx); err != nil {
		return err
	}
	return differs(nil, "differs from the log's (by a sum of its entries)")
}
