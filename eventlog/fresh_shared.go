package eventlog

// FreshRecord returns the record at seq when this transaction appended it
// and still keeps it (see keepFresh), else nil: Record without its copy of
// the payload. The record is a copy, but its Data is shared with the
// transaction's and must not be changed; it stays valid after the
// transaction ends. The engine folds each record it appends through it.
func (tx *Tx) FreshRecord(seq uint64) *Record {
	f := tx.freshRecord(seq)
	if f == nil {
		return nil
	}
	r := *f
	return &r
}
