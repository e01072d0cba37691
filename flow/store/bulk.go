package store

import "fmt"

// BulkEvent is one event of BulkAppender.AppendBulk: Event appended to
// Stream as its version Version.
type BulkEvent struct {
	Stream  string
	Version uint64
	Event   Event
}

// BulkAppended reports what AppendBulk did with each event, by index:
// the seq it was stored at, and whether it was there already (Duplicate;
// then Seqs holds the seq of the copy stored).
type BulkAppended struct {
	Seqs      []uint64
	Duplicate []bool
}

// BulkAppender is a Tx that appends many events of many streams at once,
// faster than an Append each: a bulk import. A Tx that is not one takes
// an Append per event.
type BulkAppender interface {
	// AppendBulk appends events in order, each as Append(e.Stream,
	// Exact(e.Version-1), e.Event) would, one after another in this
	// transaction: an event already stored with the same content is a
	// duplicate (and appends nothing), one that does not continue its
	// stream is a *VersionConflict. The first event that fails fails the
	// call with a *BulkError naming it; the transaction must then be
	// rolled back.
	AppendBulk(events []BulkEvent) (BulkAppended, error)
}

// BulkError is the failure of AppendBulk at the event of index Index.
type BulkError struct {
	Index int
	Err   error
}

func (e *BulkError) Error() string { return fmt.Sprintf("event %d: %v", e.Index, e.Err) }
func (e *BulkError) Unwrap() error { return e.Err }

// SharedScanner is a Tx that scans without copying: ScanShared is Scan
// but for the keys and values fn gets, which are the store's own, valid
// only until fn returns and never to be changed. A reader that keeps
// little of what it scans (a fingerprint, a decoded value) saves a copy
// of every record. A Tx that is not one takes Scan.
type SharedScanner interface {
	ScanShared(bucket string, prefix []byte, fn func(k, v []byte) error) error
}

// ScanShared is tx's ScanShared when it has one, else its Scan.
func ScanShared(tx Tx, bucket string, prefix []byte, fn func(k, v []byte) error) error {
	if s, ok := tx.(SharedScanner); ok {
		return s.ScanShared(bucket, prefix, fn)
	}
	return tx.Scan(bucket, prefix, fn)
}
