package store

import "time"

// Store is an event store: streams of events under one global, gap-free
// sequence with a hash chain, and key/value buckets that commit
// atomically with the appends. It is safe for concurrent use.
type Store interface {
	// View runs fn in a read transaction: fn sees one consistent state of
	// the store, none of the commits that end while it runs. fn's error is
	// returned.
	View(fn func(Tx) error) error
	// Update runs fn in a write transaction and returns after the commit
	// is durable (unless the store was opened with NoSync). If fn returns
	// an error, nothing it wrote is kept and the error is returned. A
	// backend may commit concurrent calls together and retry a batch
	// without a call that failed, so fn may run more than once: it must
	// have no effects outside tx and must not call Update or View. On a
	// store opened read-only it returns ErrReadOnly.
	Update(fn func(Tx) error) error
	// Close releases the store and its locks. A store is not used after
	// Close; calls then return ErrClosed.
	Close() error
}

// Tx is one transaction of a Store: appends, reads and the caller's
// buckets, all atomic together. A Tx is valid only inside the View or
// Update callback that received it, and only on that goroutine.
//
// Reads hand records to a callback, in order, inside the transaction,
// and never an iterator. A callback returning ErrStop ends a read early
// and the read returns nil; any other error ends it and is returned.
// Records a backend finds damaged are reported as *CorruptionError
// naming their seq.
type Tx interface {
	// Writable reports whether the transaction can append and put.
	Writable() bool
	// Head returns the seq and hash of the last record; 0 and the zero
	// hash for an empty store. It sees this transaction's own appends.
	Head() (seq uint64, hash Hash)
	// HeadTime returns the time of the last record, the zero time for an
	// empty store. Errors: a *CorruptionError.
	HeadTime() (time.Time, error)
	// StreamVersion returns the stream's head version and the seq of its
	// last event; 0, 0 when the stream does not exist.
	StreamVersion(stream string) (version, seq uint64)
	// Append adds events to stream as one contiguous run of versions, if
	// the stream's version meets exp; each event gets the next global seq,
	// and the chain hash over the previous record's. A zero ID or Time is
	// filled in (a new UUIDv7; the store's clock), and an event's time is
	// never before the head record's: the later of the two is stored.
	// A batch whose ids are all stored already with the same content
	// (stream, type, schema, project, correlation, causation, data) is a
	// no-op returning the original seqs with Duplicate set; an id stored
	// with other content, or a batch partly stored, is ErrConflict.
	//
	// Errors: ErrInvalid (empty batch, a limit of Max* passed, a repeated
	// id), ErrTooLarge, ErrConflict (*VersionConflict for a version
	// mismatch), ErrReadOnly.
	Append(stream string, exp Expect, events ...Event) (Appended, error)
	// Record returns the record at seq, its hash checked; nil, nil if seq
	// is 0 or past the head. The record owns its memory.
	Record(seq uint64) (*Record, error)

	// ReadRange calls fn for every record with from <= seq <= to, in seq
	// order (to == 0: to the head), each checked against its hash and
	// owning its memory, so fn may keep it.
	ReadRange(from, to uint64, fn func(*Record) error) error
	// Replay is ReadRange for folding: the backend may skip the check of
	// the hash, and may lend fn one Record, reused from call to call,
	// whose Data is valid only until fn returns (its strings may be kept).
	Replay(from, to uint64, fn func(*Record) error) error
	// ReadStream calls fn for every record of stream with version >= from,
	// in version order, as ReadRange does.
	ReadStream(stream string, from uint64, fn func(*Record) error) error
	// ReplayStream is ReadStream lending records as Replay does.
	ReplayStream(stream string, from uint64, fn func(*Record) error) error
	// ReadProject calls fn for every record whose Event.Project is
	// project with seq >= from, in seq order, as ReadRange does.
	ReadProject(project string, from uint64, fn func(*Record) error) error
	// ReplayProject is ReadProject lending records as Replay does.
	ReplayProject(project string, from uint64, fn func(*Record) error) error
	// ReadRangeBack is ReadRange newest first: every record with from <=
	// seq <= to (to == 0, or past the head: from the head), in descending
	// seq order, checked and owned as ReadRange's.
	ReadRangeBack(from, to uint64, fn func(*Record) error) error
	// ReadStreamBack is ReadStream newest first: every record of stream
	// with version <= to (to == 0, or past the stream's head: from its
	// head), in descending version order.
	ReadStreamBack(stream string, to uint64, fn func(*Record) error) error
	// ReadProjectBack is ReadProject newest first: every record of project
	// with seq <= to (to == 0: from the head), in descending seq order.
	ReadProjectBack(project string, to uint64, fn func(*Record) error) error
	// SeqOf returns the seq of the event with id, or 0 if there is none
	// (the idempotency lookup).
	SeqOf(id ID) uint64

	// The caller's buckets: named sets of keys in byte order, for
	// projection records and snapshots, committed with the appends.
	// Names the backend keeps for itself are refused with ErrInvalid, and
	// so is the empty name. Values returned are copies the caller owns.

	// Get returns the value of key in bucket, or nil (no key, no bucket).
	Get(bucket string, key []byte) ([]byte, error)
	// Put sets key to value in bucket, creating the bucket if needed.
	// ErrReadOnly in a read transaction.
	Put(bucket string, key, value []byte) error
	// Delete removes key from bucket; a missing key or bucket is no error.
	// ErrReadOnly in a read transaction.
	Delete(bucket string, key []byte) error
	// DeleteBucket drops bucket and everything in it; a missing bucket is
	// no error. ErrReadOnly in a read transaction.
	DeleteBucket(bucket string) error
	// Scan calls fn with every key and value in bucket whose key starts
	// with prefix, in key order (nil prefix: all).
	Scan(bucket string, prefix []byte, fn func(k, v []byte) error) error
	// Last returns the last key and value in bucket that start with prefix
	// and are at most max, or nil, nil when there is none.
	Last(bucket string, prefix, max []byte) (k, v []byte, err error)
}

// VerifyReport summarizes a clean Verify.
type VerifyReport struct {
	HeadSeq  uint64
	HeadHash Hash
	Streams  int
	Projects int
}

// FreeSpacer is a Store in a file that can hold free pages: what a
// rewrite of the file (Compacter) would give back.
type FreeSpacer interface {
	// FreeBytes returns the bytes of the file in free pages as of the last
	// write, and the file's size.
	FreeBytes() (free, size int64)
}

// Verifier is a Store that can check all of itself: every record's
// checksum and hash, the chain, seq contiguity and the backend's indexes.
type Verifier interface {
	// Verify returns the first problem as a *CorruptionError naming the
	// seq of the first bad record. Options.Progress hears how it goes.
	Verify() (VerifyReport, error)
}
