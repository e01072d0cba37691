package eventlog

import (
	"bytes"
	"time"
)

// A write transaction keeps the records it appended (the newest ones,
// within freshMaxRecords and freshMaxBytes of payload), so that reading
// them back in the same transaction — the engine reads each record it
// appends to fold it, and its indexes read the project's newest records
// — costs a copy instead of a seek, a decode and a SHA-256. They are the
// records as a read decodes them: the same fields, the time in UTC
// without a monotonic reading, Data nil only for a nil payload. Nothing
// of them is stored: the transaction's bbolt pages still hold every
// byte, and its rollback drops both.

// freshMaxRecords and freshMaxBytes bound the records a transaction keeps:
// past either, it forgets those it has and starts again from the next.
const (
	freshMaxRecords = 4096
	freshMaxBytes   = 4 << 20
)

// freshRecords are records appended in this transaction, of seqs first,
// first+1, ..., in blocks of up to freshBlock (one slice grown by
// doubling would copy every record it holds at each growth); the first
// blocks start small, for the transaction of a single append.
type freshRecords struct {
	first  uint64
	n      int
	blocks [][]Record
	bytes  int
}

const freshBlock = 256

// keepFresh keeps a copy of r, just appended, whose Data is not yet the
// record's own.
func (tx *Tx) keepFresh(r *Record) {
	f := &tx.fresh
	if f.n > 0 && (f.first+uint64(f.n) != r.Seq || f.n >= freshMaxRecords || f.bytes+len(r.Data) > freshMaxBytes) {
		f.n, f.bytes = 0, 0
		for _, b := range f.blocks {
			clear(b[:cap(b)]) // let go of their payloads
		}
	}
	if f.n == 0 {
		f.first = r.Seq
	}
	i := f.n / freshBlock
	if i == len(f.blocks) {
		f.blocks = append(f.blocks, make([]Record, 0, min(4<<i, freshBlock)))
	}
	c := *r
	c.Time = time.Unix(0, r.Time.UnixNano()).UTC()
	c.Data = bytes.Clone(r.Data)
	f.blocks[i] = append(f.blocks[i][:f.n%freshBlock], c)
	f.n++
	f.bytes += len(c.Data)
}

// freshRecord returns the record at seq if the transaction appended and
// kept it, else nil. It is the transaction's: callers copy it.
func (tx *Tx) freshRecord(seq uint64) *Record {
	f := &tx.fresh
	if seq < f.first || seq-f.first >= uint64(f.n) {
		return nil
	}
	i := int(seq - f.first)
	return &f.blocks[i/freshBlock][i%freshBlock]
}
