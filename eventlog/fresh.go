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
// first+1, ...
type freshRecords struct {
	first uint64
	recs  []Record
	bytes int
}

// keepFresh keeps a copy of r, just appended, whose Data is not yet the
// record's own.
func (tx *Tx) keepFresh(r *Record) {
	f := &tx.fresh
	if len(f.recs) > 0 && (f.first+uint64(len(f.recs)) != r.Seq || len(f.recs) >= freshMaxRecords || f.bytes+len(r.Data) > freshMaxBytes) {
		f.recs, f.bytes = f.recs[:0], 0
	}
	if len(f.recs) == 0 {
		f.first = r.Seq
	}
	c := *r
	c.Time = time.Unix(0, r.Time.UnixNano()).UTC()
	c.Data = bytes.Clone(r.Data)
	f.recs = append(f.recs, c)
	f.bytes += len(c.Data)
}

// freshRecord returns the record at seq if the transaction appended and
// kept it, else nil. It is the transaction's: callers copy it.
func (tx *Tx) freshRecord(seq uint64) *Record {
	f := &tx.fresh
	if seq < f.first || seq-f.first >= uint64(len(f.recs)) {
		return nil
	}
	return &f.recs[seq-f.first]
}
