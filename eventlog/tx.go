package eventlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Tx is one bbolt transaction seen through the log: appends, reads and
// key/value buckets for the caller's projections, all atomic together.
// A Tx is valid only inside the View or Update callback that received it.
type Tx struct {
	btx *bolt.Tx
	log *Log

	headLoaded bool
	headSeq    uint64
	headHash   Hash
	headDirty  bool
	// headTime is the last record's time once timeLoaded (HeadTime).
	headTime   time.Time
	timeLoaded bool
	wrote      bool // anything was appended or put: the commit is needed
	// tail is a write transaction's index tail, with what it appended
	// (txTail); nil until needed, and in a read-only transaction.
	tail *txTailState
	// fresh holds the newest records this transaction appended (fresh.go).
	fresh freshRecords
	// buckets are the caller's buckets opened in this transaction, by
	// name: a map read instead of bbolt's lookup and the reserved names'
	// check on every Get and Put.
	buckets map[string]*bolt.Bucket
}

func newTx(l *Log, btx *bolt.Tx) *Tx { return &Tx{btx: btx, log: l} }

func (tx *Tx) bucket(name []byte) *bolt.Bucket { return tx.btx.Bucket(name) }

// Writable reports whether the transaction can append.
func (tx *Tx) Writable() bool { return tx.btx.Writable() }

// Head returns the seq and hash of the last record; 0 and the zero hash
// for an empty log.
func (tx *Tx) Head() (uint64, Hash) {
	if !tx.headLoaded {
		meta := tx.bucket(bucketMeta)
		tx.headSeq = binary.BigEndian.Uint64(meta.Get(metaHeadSeq))
		copy(tx.headHash[:], meta.Get(metaHeadHash))
		tx.headLoaded = true
	}
	return tx.headSeq, tx.headHash
}

// HeadTime returns the time of the last record, the zero time for an
// empty log. It reads the head record once per transaction (its CRC and
// framing are checked, not its hash); appends keep it current. Errors: a
// *CorruptionError.
func (tx *Tx) HeadTime() (time.Time, error) {
	if tx.timeLoaded {
		return tx.headTime, nil
	}
	seq, _ := tx.Head()
	v, err := tx.recordBytes(seq)
	if v == nil || err != nil {
		return time.Time{}, err
	}
	var r Record
	if err := tx.log.format.decodeInto(&r, seq, v, Hash{}, true); err != nil {
		return time.Time{}, err
	}
	tx.headTime, tx.timeLoaded = r.Time, true
	return r.Time, nil
}

// flush stores, once per transaction and before it commits, what its
// appends kept in memory: their index entries (flushTail) and the head.
func (tx *Tx) flush() error {
	if err := tx.flushTail(); err != nil {
		return err
	}
	return tx.flushHead()
}

// flushHead writes the head to meta once per transaction.
func (tx *Tx) flushHead() error {
	if !tx.headDirty {
		return nil
	}
	meta := tx.bucket(bucketMeta)
	if err := meta.Put(metaHeadSeq, binary.BigEndian.AppendUint64(nil, tx.headSeq)); err != nil {
		return err
	}
	return meta.Put(metaHeadHash, bytes.Clone(tx.headHash[:]))
}

// StreamVersion returns the stream's head version and the seq of its last
// event; 0, 0 when the stream does not exist (or its head is malformed).
func (tx *Tx) StreamVersion(stream string) (version, seq uint64) {
	version, seq, _ = tx.streamHead(stream)
	return version, seq
}

// Record returns the record at seq, or nil if seq is past the head or 0.
func (tx *Tx) Record(seq uint64) (*Record, error) {
	if f := tx.freshRecord(seq); f != nil {
		r := *f
		r.Data = bytes.Clone(f.Data)
		return &r, nil
	}
	v, prev, err := tx.recordAt(seq)
	if v == nil || err != nil {
		return nil, err
	}
	return tx.log.format.decode(seq, v, prev)
}

// recordAt is recordBytes and, in a format-2 file, the hash of the
// record before (checked by its CRC), which the record does not store:
// one seek for both.
func (tx *Tx) recordAt(seq uint64) (v []byte, prev Hash, err error) {
	if tx.log.format == formatV1 || seq <= 1 {
		v, err = tx.recordBytes(seq)
		return v, prev, err
	}
	c := tx.bucket(bucketLog).Cursor()
	k, pv := c.Seek(seqKey(seq - 1))
	if !isSeq(k, seq-1) {
		return nil, prev, tx.missing(seq - 1)
	}
	if prev, err = tx.log.format.storedHash(seq-1, pv); err != nil {
		return nil, prev, err
	}
	if k, v = c.Next(); !isSeq(k, seq) {
		return nil, prev, tx.missing(seq)
	}
	return v, prev, nil
}

// logCursor is recordAt through one cursor kept from call to call.
type logCursor struct {
	c *bolt.Cursor
	k []byte // the key the cursor is on (nil: not placed)
	v []byte
}

// stepMax is how far ahead of the cursor a seq is reached by Next rather
// than by a seek: a step costs a few ns, a seek a walk from the root.
const stepMax = 32

// recordAt is Tx.recordAt, stepping forward from the cursor's place when
// seq-1 is at most stepMax ahead of it.
func (lc *logCursor) recordAt(tx *Tx, seq uint64) (v []byte, prev Hash, err error) {
	if tx.log.format == formatV1 || seq <= 1 {
		return tx.recordAt(seq)
	}
	if lc.c == nil {
		lc.c = tx.bucket(bucketLog).Cursor()
	}
	want := seq - 1
	if len(lc.k) == 8 {
		at := binary.BigEndian.Uint64(lc.k)
		if at <= want && want-at <= stepMax {
			for at < want && lc.k != nil {
				lc.k, lc.v = lc.c.Next()
				if len(lc.k) != 8 {
					break
				}
				at = binary.BigEndian.Uint64(lc.k)
			}
		}
	}
	if !isSeq(lc.k, want) {
		lc.k, lc.v = lc.c.Seek(seqKey(want))
	}
	if !isSeq(lc.k, want) {
		return nil, prev, tx.missing(want)
	}
	if prev, err = tx.log.format.storedHash(want, lc.v); err != nil {
		return nil, prev, err
	}
	if lc.k, lc.v = lc.c.Next(); !isSeq(lc.k, seq) {
		return nil, prev, tx.missing(seq)
	}
	return lc.v, prev, nil
}

// isSeq reports whether the log key k is seq.
func isSeq(k []byte, seq uint64) bool { return len(k) == 8 && binary.BigEndian.Uint64(k) == seq }

// missing is the error for a record not found at seq: corruption if the
// head says it exists, else none.
func (tx *Tx) missing(seq uint64) error {
	if head, _ := tx.Head(); seq >= 1 && seq <= head {
		return corruptf(seq, "record is missing")
	}
	return nil
}

// recordBytes returns the stored bytes of seq (a view of the page), nil
// if seq is past the head or 0, or an error if the head says it exists.
func (tx *Tx) recordBytes(seq uint64) ([]byte, error) {
	v := tx.bucket(bucketLog).Get(seqKey(seq))
	if v == nil {
		if head, _ := tx.Head(); seq >= 1 && seq <= head {
			return nil, corruptf(seq, "record is missing")
		}
	}
	return v, nil
}

// ReadRange calls fn for every record with from <= seq <= to, in seq
// order; to == 0 means up to the head. fn returning ErrStop ends the scan.
func (tx *Tx) ReadRange(from, to uint64, fn func(*Record) error) error {
	return tx.scanLog(from, to, func(r *Record, _ []byte) error { return fn(r) })
}

// scanLog is ReadRange that also hands fn each record's envelope, which
// is valid only during the call.
func (tx *Tx) scanLog(from, to uint64, fn func(r *Record, env []byte) error) error {
	return tx.walkLog(from, to, func(seq uint64, v []byte, prev Hash) error {
		r, err := tx.log.format.decode(seq, v, prev)
		if err != nil {
			return err
		}
		return fn(r, v[:len(v)-crcLen])
	})
}

// Replay calls fn for every record with from <= seq <= to, in seq order,
// like ReadRange, for folding the log into projections: each record's
// CRC32C, framing and seq are checked, but not its SHA-256 hash, and fn
// is lent one Record, reused from call to call, whose Data is valid only
// until fn returns (its strings are copies and may be kept). The hash
// guards the audit trail — ReadRange, ReadStream, ReadProject and Verify
// check it — against a record rewritten with a recomputed CRC; the
// projections a replay produces are not guarded by it either, and
// checking it is half the cost of a read (doc.go, "Reads and the hash
// chain").
func (tx *Tx) Replay(from, to uint64, fn func(*Record) error) error {
	var r Record
	var strs lentStrings
	return tx.walkLog(from, to, func(seq uint64, v []byte, prev Hash) error {
		if err := tx.log.format.decodeLent(&r, seq, v, prev, strs.cache()); err != nil {
			return err
		}
		return fn(&r)
	})
}

// walkLog calls fn with the stored bytes of every record with from <= seq
// <= to (to == 0: to the head), in seq order, and the hash the record
// before it holds (zeros before seq 1; the record at from-1 is read for
// it, its CRC checked; fn's decode checks the others'): a format-2
// record's prev. It reports a missing seq as corruption. An error of fn
// ends the walk; ErrStop ends it quietly.
func (tx *Tx) walkLog(from, to uint64, fn func(seq uint64, v []byte, prev Hash) error) error {
	from = max(from, 1)
	c := tx.bucket(bucketLog).Cursor()
	want := from
	var prev Hash
	k, v := c.Seek(seqKey(from - 1))
	switch {
	case from == 1:
	case isSeq(k, from-1):
		var err error
		if prev, err = tx.log.format.storedHash(from-1, v); err != nil && tx.log.format != formatV1 {
			return err
		}
		k, v = c.Next()
	case tx.log.format != formatV1 && k != nil:
		return corruptf(from-1, "record is missing (next stored seq is %d)", binary.BigEndian.Uint64(k))
	}
	for ; k != nil; k, v = c.Next() {
		seq := binary.BigEndian.Uint64(k)
		if to != 0 && seq > to {
			break
		}
		if seq != want {
			return corruptf(want, "record is missing (next stored seq is %d)", seq)
		}
		want++
		if err := fn(seq, v, prev); err != nil {
			return stopped(err)
		}
		if len(v) >= crcLen+len(prev) {
			copy(prev[:], v[len(v)-crcLen-len(prev):])
		}
	}
	return nil
}

// ReplayStream is ReadStream read as Replay reads: the hash unchecked,
// one Record lent to fn, its Data valid only during the call.
func (tx *Tx) ReplayStream(stream string, from uint64, fn func(*Record) error) error {
	return tx.readStream(tx.lender(), stream, max(from, 1), fn)
}

// ReplayProject is ReadProject read as Replay reads: the hash unchecked,
// one Record lent to fn, its Data valid only during the call.
func (tx *Tx) ReplayProject(project string, from uint64, fn func(*Record) error) error {
	return tx.readProject(tx.lender(), project, max(from, 1), fn)
}

// A recordReader returns the record at seq, or nil if seq is past the
// head or 0: Tx.Record, or a lender's.
type recordReader func(seq uint64) (*Record, error)

// lender returns a recordReader that decodes as Replay does, into one
// Record it reuses. It keeps one cursor on the log: a seq a little past
// the one before (a project's next event) is reached by stepping forward,
// not by a seek from the root.
func (tx *Tx) lender() recordReader {
	r := new(Record)
	var c logCursor
	var strs lentStrings
	return func(seq uint64) (*Record, error) {
		if f := tx.freshRecord(seq); f != nil {
			*r = *f
			return r, nil
		}
		v, prev, err := c.recordAt(tx, seq)
		if v == nil || err != nil {
			return nil, err
		}
		if err := tx.log.format.decodeLent(r, seq, v, prev, strs.cache()); err != nil {
			return nil, err
		}
		return r, nil
	}
}

// ReadStream calls fn for every record of stream with version >= from, in
// version order.
func (tx *Tx) ReadStream(stream string, from uint64, fn func(*Record) error) error {
	return tx.readStream(tx.Record, stream, max(from, 1), fn)
}

// ReadProject calls fn for every record of project with seq >= from, in
// seq order.
func (tx *Tx) ReadProject(project string, from uint64, fn func(*Record) error) error {
	return tx.readProject(tx.Record, project, max(from, 1), fn)
}

func stopped(err error) error {
	if errors.Is(err, ErrStop) {
		return nil
	}
	return err
}

// SeqOf returns the seq of the event with id, or 0 if there is none.
func (tx *Tx) SeqOf(id ID) uint64 {
	seq, _ := tx.idLookup(id)
	return seq
}

// idLookup finds id in ids or the index tail: its seq, 0 if it is in
// neither.
func (tx *Tx) idLookup(id ID) (uint64, error) {
	if v := tx.bucket(bucketIDs).Get(id[:]); v != nil {
		seq, ok := tx.log.format.parseIDValue(v)
		if !ok {
			return 0, corruptf(0, "id index entry for %s is malformed", id)
		}
		return seq, nil
	}
	return tx.tailByID(id)
}

// idValue is the value ids maps an event id to in format f: its seq, 8
// bytes big-endian in format 1, a uvarint (3 bytes up to 2M) in format 2.
func (f format) idValue(seq uint64) []byte { return f.appendIDValue(nil, seq) }

// appendIDValue appends idValue(seq) to b.
func (f format) appendIDValue(b []byte, seq uint64) []byte {
	if f == formatV1 {
		return binary.BigEndian.AppendUint64(b, seq)
	}
	return binary.AppendUvarint(b, seq)
}

// parseIDValue is the seq of an ids value of format f, if the value is
// in its one form.
func (f format) parseIDValue(v []byte) (uint64, bool) {
	if f == formatV1 {
		if len(v) != 8 {
			return 0, false
		}
		return binary.BigEndian.Uint64(v), true
	}
	seq, n := binary.Uvarint(v)
	return seq, n > 0 && n == len(v) && v[n-1] != 0 // no padding byte
}

func seqKey(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

// streamPrefix is the 2-byte big-endian length of s followed by s: the
// prefix of the stream and project index keys.
func streamPrefix(s string) []byte { return appendPrefix(make([]byte, 0, 2+len(s)+8), s) }

// appendPrefix appends the 2-byte big-endian length of s and s to b.
func appendPrefix(b []byte, s string) []byte {
	return append(binary.BigEndian.AppendUint16(b, uint16(len(s))), s...)
}

// The key/value API below gives the caller buckets of its own (projection
// records, snapshots) in the same transaction as the appends. The log's
// own buckets are refused.

func (tx *Tx) userBucket(name string, create bool) (*bolt.Bucket, error) {
	if b := tx.buckets[name]; b != nil {
		return b, nil
	}
	for _, b := range reservedBuckets {
		if name == string(b) {
			return nil, fmt.Errorf("%w: bucket %q belongs to the log", ErrInvalid, name)
		}
	}
	if name == "" {
		return nil, fmt.Errorf("%w: empty bucket name", ErrInvalid)
	}
	b := tx.btx.Bucket([]byte(name))
	switch {
	case b == nil && create && tx.btx.Writable():
		var err error
		if b, err = tx.btx.CreateBucket([]byte(name)); err != nil {
			return nil, err
		}
	case b == nil:
		return nil, nil
	}
	if tx.btx.Writable() {
		b.FillPercent = fillCaller
	}
	if tx.buckets == nil {
		tx.buckets = map[string]*bolt.Bucket{}
	}
	tx.buckets[name] = b
	return b, nil
}

// Get returns a copy of the value of key in bucket, or nil.
func (tx *Tx) Get(bucket string, key []byte) ([]byte, error) {
	b, err := tx.userBucket(bucket, false)
	if err != nil || b == nil {
		return nil, err
	}
	return bytes.Clone(b.Get(key)), nil
}

// Put sets key to value in bucket, creating the bucket if needed.
func (tx *Tx) Put(bucket string, key, value []byte) error {
	if !tx.btx.Writable() {
		return ErrReadOnly
	}
	b, err := tx.userBucket(bucket, true)
	if err != nil {
		return err
	}
	tx.wrote = true
	return b.Put(key, value)
}

// Delete removes key from bucket.
func (tx *Tx) Delete(bucket string, key []byte) error {
	if !tx.btx.Writable() {
		return ErrReadOnly
	}
	b, err := tx.userBucket(bucket, false)
	if err != nil || b == nil {
		return err
	}
	tx.wrote = true
	return b.Delete(key)
}

// DeleteBucket drops a caller bucket and everything in it.
func (tx *Tx) DeleteBucket(bucket string) error {
	if !tx.btx.Writable() {
		return ErrReadOnly
	}
	b, err := tx.userBucket(bucket, false)
	if err != nil || b == nil {
		return err
	}
	tx.wrote = true
	delete(tx.buckets, bucket) // bbolt's handle dies with the bucket
	return tx.btx.DeleteBucket([]byte(bucket))
}

// Scan calls fn with copies of every key and value in bucket whose key
// starts with prefix, in key order. fn returning ErrStop ends the scan.
func (tx *Tx) Scan(bucket string, prefix []byte, fn func(k, v []byte) error) error {
	b, err := tx.userBucket(bucket, false)
	if err != nil || b == nil {
		return err
	}
	c := b.Cursor()
	pg, n := tx.log.trimming.Load(), 0
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if err := fn(cloneKV(k, v)); err != nil {
			return stopped(err)
		}
		if n++; pg != nil && n%scanTrimStep == 0 {
			pg.trim()
		}
	}
	return nil
}

// ScanShared is Scan without the copies (store.SharedScanner): k and v
// are bbolt's, valid until fn returns, not to be changed.
func (tx *Tx) ScanShared(bucket string, prefix []byte, fn func(k, v []byte) error) error {
	b, err := tx.userBucket(bucket, false)
	if err != nil || b == nil {
		return err
	}
	c := b.Cursor()
	pg, n := tx.log.trimming.Load(), 0
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if err := fn(k, v); err != nil {
			return stopped(err)
		}
		if n++; pg != nil && n%scanTrimStep == 0 {
			pg.trim()
		}
	}
	return nil
}

// cloneKV copies k and v into one allocation (a Scan of a large bucket
// made two per entry), k capped so that appending to it cannot overwrite
// v.
func cloneKV(k, v []byte) ([]byte, []byte) {
	b := make([]byte, len(k)+len(v))
	copy(b, k)
	copy(b[len(k):], v)
	if v == nil { // as bytes.Clone keeps it
		return b[:len(k):len(k)], nil
	}
	return b[:len(k):len(k)], b[len(k):]
}

// Last returns copies of the last key and value in bucket that start with
// prefix and are at most max (nil, nil when there is none). Walking back
// from max, it reads only what it returns.
func (tx *Tx) Last(bucket string, prefix, max []byte) (k, v []byte, err error) {
	b, err := tx.userBucket(bucket, false)
	if err != nil || b == nil {
		return nil, nil, err
	}
	c := b.Cursor()
	k, v = c.Seek(max)
	if k == nil || bytes.Compare(k, max) > 0 {
		k, v = c.Prev()
	}
	if k == nil || !bytes.HasPrefix(k, prefix) {
		return nil, nil, nil
	}
	return bytes.Clone(k), bytes.Clone(v), nil
}
