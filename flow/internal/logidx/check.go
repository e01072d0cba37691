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
	// last is the list each of Add's four calls of add met last: a
	// record's type, project, actor and session often repeat the record
	// before's (and a walk that interns its strings hands on the same
	// string), which then costs neither a key nor a lookup in open.
	last [4]lastList
}

// lastList is a list add met, by its term and type.
type lastList struct {
	term, typ string
	o         *openChunk
}

// openChunk is a list's chunk being filled: its first seq, the last one,
// how many, and the uvarint differences after the first (the value);
// and the list's seqs past the last multiple of PendingSpan before the
// last one added (at), which a chunk holds only if the log's head is past
// the next multiple, else the list's pending entry.
type openChunk struct {
	prefix      string // the list's key prefix
	first, last uint64
	n           int
	value       []byte
	recent      []uint64
	at          uint64
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
	c.add(&c.last[0], kindType, ev.Type, "", seq)
	if ev.Project != "" {
		c.add(&c.last[1], kindProjectType, ev.Project, ev.Type, seq)
	}
	if ev.Actor != "" {
		c.add(&c.last[2], kindActor, ev.Actor, "", seq)
	}
	if ev.Session != "" {
		c.add(&c.last[3], kindSession, ev.Session, "", seq)
	}
}

// add adds seq to the list of kind and term (a project's list: the
// project, and the type in typ); last is the list this call of Add's met
// last.
func (c *Checker) add(last *lastList, kind byte, term, typ string, seq uint64) {
	o := last.o
	if o == nil || last.term != term || last.typ != typ {
		o = c.list(kind, term, typ)
		*last = lastList{term: term, typ: typ, o: o}
	}
	if cut := pendingCut(seq); cut > o.at {
		c.settle(o, cut)
	}
	o.recent = append(o.recent, seq)
}

// list is the open chunk of the list of kind and term (and typ), made
// when new.
func (c *Checker) list(kind byte, term, typ string) *openChunk {
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
	if o := c.open[string(b)]; o != nil {
		return o
	}
	o := &openChunk{prefix: string(b)}
	c.open[o.prefix] = o
	if kind == kindType {
		c.entry(inChunks, append([]byte{kindTypeName}, term...), nil)
	}
	return o
}

// settle moves the seqs of o's list up to cut, the last multiple of
// PendingSpan before a seq of the log, into its chunks: the index lists
// them there whatever the head.
func (c *Checker) settle(o *openChunk, cut uint64) {
	n := 0
	for _, seq := range o.recent {
		if seq > cut {
			break
		}
		n++
		if o.n == 0 {
			o.first = seq
		} else {
			o.value = binary.AppendUvarint(o.value, seq-o.last)
		}
		o.last = seq
		if o.n++; o.n == ChunkSize {
			c.close(o)
		}
	}
	o.recent = o.recent[:copy(o.recent, o.recent[n:])]
	o.at = cut
}

// close counts o's chunk as an entry and empties o.
func (c *Checker) close(o *openChunk) {
	c.buf = binary.BigEndian.AppendUint64(append(c.buf[:0], o.prefix...), o.first)
	c.entry(inChunks, c.buf, o.value)
	o.n, o.value = 0, o.value[:0]
}

// The buckets of an entry, for its hash.
const (
	inChunks  byte = 0 // Bucket
	inPending byte = 1 // PendingBucket
)

// entry adds the entry k, v of bucket (inChunks, inPending) to the sum.
func (c *Checker) entry(bucket byte, k, v []byte) { c.want.add(c.hash(bucket, k, v)) }

func (s *entrySum) add(h uint64) { s.n, s.h = s.n+1, s.h+h }

// hash is the hash of an entry: its bucket, k's length, k and v.
func (c *Checker) hash(bucket byte, k, v []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	var n [5]byte
	n[0] = bucket
	binary.BigEndian.PutUint32(n[1:], uint32(len(k)))
	_, _ = h.Write(n[:])
	_, _ = h.Write(k)
	_, _ = h.Write(v)
	return h.Sum64()
}

// finish counts the entries of the lists' seqs not yet counted, as an
// index of a log whose head is head holds them: in chunks up to the last
// multiple of PendingSpan, past it in each list's pending entry.
func (c *Checker) finish(head uint64) {
	cut := pendingCut(head)
	for _, o := range c.open {
		c.settle(o, cut)
		if o.n > 0 {
			c.close(o)
		}
		if len(o.recent) > 0 {
			c.entry(inPending, []byte(o.prefix), encodePending(o.recent))
		}
	}
}

// Check compares the index in tx with the log Add was given, which is
// all of tx's log. The first difference is a *store.CorruptionError
// naming the key (Compare's).
func (c *Checker) Check(tx store.Tx) error {
	head, _ := tx.Head()
	c.finish(head)
	c.entry(inChunks, keyVersion, stamp)
	c.entry(inChunks, keyThrough, binary.BigEndian.AppendUint64(nil, head))
	var got entrySum
	for _, b := range []struct {
		name string
		tag  byte
	}{{Bucket, inChunks}, {PendingBucket, inPending}} {
		err := store.ScanShared(tx, b.name, nil, func(k, v []byte) error {
			got.add(c.hash(b.tag, k, v))
			return nil
		})
		if err != nil {
			return err
		}
	}
	if got == c.want {
		return nil
	}
	if err := Compare(tx); err != nil {
		return err
	}
	return differs(nil, "differs from the log's (by a sum of its entries)")
}
