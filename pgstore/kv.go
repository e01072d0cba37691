package pgstore

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/jackc/pgx/v5"
)

// The caller's buckets are rows of one table, flow_kv, keyed by bucket
// name and key; bytea sorts as bytes do, so Scan and Last see bbolt's
// order.
//
// A command reads and writes many rows of them (an entity, its status
// index entries, the log index), and each statement sent alone would
// cost a round trip. So a Tx keeps:
//
//   - its writes (Put, Delete) until something needs them on the server:
//     a Scan, a Last, a DeleteBucket or the commit, which send them in
//     the same pipelined batch as their own statement, one upsert and one
//     delete for all of them (kvWrites). A Get answers from them.
//   - what its Gets read, and reads ahead: the first Get of a bucket
//     fetches its key; when it was there, the next one the 64 rows from
//     its key on, then 256, then 1024 while the reads ahead answer Gets
//     (aheadSizes), so that a command that reads a project's entities one
//     by one (status, ready) fetches them a page at a time. A range read
//     is complete: a key inside it that it did not return is not there.
//     Values over aheadValue bytes are left for their own Get.
//
// Both are valid for the transaction: a View reads one snapshot, and an
// Update holds the head row, which every writer takes first.

// kvKey names a row of flow_kv.
type kvKey struct{ bucket, key string }

// kvOp is a write not yet sent: a value, or a deletion.
type kvOp struct {
	value []byte
	del   bool
}

// ahead is what the Gets of one bucket read.
type ahead struct {
	rows  map[string]aheadRow
	spans []span // key ranges read whole, the last maxSpans
	level int    // of the last read: its size was aheadSizes[level]
	hits  int    // Gets the last read answered after it
	found bool   // the last read found the key it was for
}

// maxSpans bounds the ranges a bucket remembers: a Get looks through
// them all.
const maxSpans = 16

type aheadRow struct {
	value []byte
	big   bool // over aheadValue bytes: not fetched by a range read
}

// span is a range of keys read whole: lo <= key, and key <= hi unless
// open (the range ran to the end of the bucket).
type span struct {
	lo, hi string
	open   bool
}

// aheadValue bounds the values a range read fetches: a larger one (a
// snapshot) is fetched by the Get that asks for it.
const aheadValue = 16 << 10

// aheadBytes bounds what a Tx keeps of its reads ahead: past it, what it
// kept is dropped, and the next Gets read again. A long read of every
// entity (task ls of a large project) holds a page of them at a time,
// not all.
const aheadBytes = 32 << 20

// aheadSizes are how many rows a read of a bucket at each level
// fetches. The first read of a bucket is at level 0, of one row. A read
// goes a level up when the read before it found its key or answered a
// Get after it, and back to 0 when it did neither: the Gets of a write
// that creates entities, each of a key that is not there, read a row
// each.
var aheadSizes = []int{1, 64, 256, 1024}

func (a *ahead) covered(key string) bool {
	for _, s := range a.spans {
		if key >= s.lo && (s.open || key <= s.hi) {
			return true
		}
	}
	return false
}

func checkBucket(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty bucket name", store.ErrInvalid)
	}
	return nil
}

func (t *Tx) Get(bucket string, key []byte) ([]byte, error) {
	if err := checkBucket(bucket); err != nil {
		return nil, err
	}
	k := kvKey{bucket, string(key)}
	if op, ok := t.writes[k]; ok {
		if op.del {
			return nil, nil
		}
		return op.value, nil
	}
	a := t.ahead[bucket]
	if a == nil {
		a = &ahead{rows: map[string]aheadRow{}}
		if t.ahead == nil {
			t.ahead = map[string]*ahead{}
		}
		t.ahead[bucket] = a
	}
	if r, ok := a.rows[k.key]; ok && !r.big {
		a.hits++
		return r.value, nil
	} else if !ok && a.covered(k.key) {
		a.hits++
		return nil, nil
	} else if ok {
		return t.getOne(k)
	}
	if err := t.readAhead(a, k); err != nil {
		return nil, err
	}
	if r, ok := a.rows[k.key]; ok && !r.big {
		return r.value, nil
	} else if ok {
		return t.getOne(k)
	}
	return nil, nil // the read covers k: it is not there
}

// getOne reads one row.
func (t *Tx) getOne(k kvKey) ([]byte, error) {
	var v []byte
	err := t.q.QueryRow(t.ctx, `SELECT value FROM flow_kv WHERE bucket = $1 AND key = $2`, k.bucket, []byte(k.key)).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return nonNil(v), t.s.wrap(err)
}

// readAhead reads the rows of k's bucket from k on, as many as the
// bucket's reads so far call for (aheadSize), into a. Even a read of one
// row is a range: k, or the key after it, so that the Gets of keys that
// are not there, in a bucket with few keys, soon go without reads.
func (t *Tx) readAhead(a *ahead, k kvKey) error {
	if a.found || a.hits > 0 {
		a.level = min(a.level+1, len(aheadSizes)-1)
	} else {
		a.level = 0
	}
	a.hits, a.found = 0, false
	if t.aheadSize > aheadBytes {
		for _, b := range t.ahead {
			b.rows, b.spans = map[string]aheadRow{}, nil
		}
		t.aheadSize = 0
	}
	size := aheadSizes[a.level]
	rows, err := t.q.Query(t.ctx, `SELECT key, CASE WHEN octet_length(value) <= $3 THEN value END
		FROM flow_kv WHERE bucket = $1 AND key >= $2 ORDER BY key LIMIT $4`, k.bucket, []byte(k.key), aheadValue, size)
	if err != nil {
		return t.s.wrap(err)
	}
	n, last := 0, ""
	for rows.Next() {
		var key, v []byte
		if err := rows.Scan(&key, &v); err != nil {
			rows.Close()
			return t.s.wrap(err)
		}
		n, last = n+1, string(key)
		a.rows[last] = aheadRow{value: nonNil(v), big: v == nil}
		t.aheadSize += len(key) + len(v)
		a.found = a.found || last == k.key
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return t.s.wrap(err)
	}
	if len(a.spans) == maxSpans {
		a.spans = append(a.spans[:0], a.spans[1:]...)
	}
	a.spans = append(a.spans, span{lo: k.key, hi: last, open: n < size})
	return nil
}

func (t *Tx) Put(bucket string, key, value []byte) error {
	if err := checkBucket(bucket); err != nil {
		return err
	}
	if !t.writable {
		return store.ErrReadOnly
	}
	if len(key) == 0 {
		return fmt.Errorf("%w: empty key", store.ErrInvalid)
	}
	t.hold(kvKey{bucket, string(key)}, kvOp{value: bytes.Clone(nonNil(value))})
	return nil
}

func (t *Tx) Delete(bucket string, key []byte) error {
	if err := checkBucket(bucket); err != nil {
		return err
	}
	if !t.writable {
		return store.ErrReadOnly
	}
	t.hold(kvKey{bucket, string(key)}, kvOp{del: true})
	return nil
}

func (t *Tx) hold(k kvKey, op kvOp) {
	if t.writes == nil {
		t.writes = map[kvKey]kvOp{}
	}
	t.writes[k] = op
}

func (t *Tx) DeleteBucket(bucket string) error {
	if err := checkBucket(bucket); err != nil {
		return err
	}
	if !t.writable {
		return store.ErrReadOnly
	}
	for k := range t.writes {
		if k.bucket == bucket {
			delete(t.writes, k)
		}
	}
	delete(t.ahead, bucket)
	var b pgx.Batch
	n := t.queueWrites(&b)
	b.Queue(`DELETE FROM flow_kv WHERE bucket = $1`, bucket)
	return t.sendWrites(&b, n+1)
}

// kvChunk bounds the rows of one statement of queueWrites.
const kvChunk = 4096

// queueWrites queues the writes the Tx holds onto b, as few statements as
// it takes, and returns how many; they count as sent from then on (and
// the reads ahead see them).
func (t *Tx) queueWrites(b *pgx.Batch) int {
	if len(t.writes) == 0 {
		return 0
	}
	keys := make([]kvKey, 0, len(t.writes))
	for k := range t.writes {
		keys = append(keys, k)
	}
	// In key order, as bbolt writes them: two transactions that write
	// the same rows lock them in one order.
	slices.SortFunc(keys, func(a, b kvKey) int {
		if c := compareStrings(a.bucket, b.bucket); c != 0 {
			return c
		}
		return compareStrings(a.key, b.key)
	})
	var putB, delB []string
	var putK, putV, delK [][]byte
	n := 0
	flush := func(force bool) {
		if len(putK) > 0 && (force || len(putK) == kvChunk) {
			b.Queue(`INSERT INTO flow_kv (bucket, key, value) SELECT * FROM unnest($1::text[], $2::bytea[], $3::bytea[])
				ON CONFLICT (bucket, key) DO UPDATE SET value = excluded.value`, putB, putK, putV)
			putB, putK, putV, n = nil, nil, nil, n+1
		}
		if len(delK) > 0 && (force || len(delK) == kvChunk) {
			b.Queue(`DELETE FROM flow_kv USING unnest($1::text[], $2::bytea[]) AS d(bucket, key)
				WHERE flow_kv.bucket = d.bucket AND flow_kv.key = d.key`, delB, delK)
			delB, delK, n = nil, nil, n+1
		}
	}
	for _, k := range keys {
		op := t.writes[k]
		if a := t.ahead[k.bucket]; a != nil {
			if op.del {
				delete(a.rows, k.key)
			} else {
				a.rows[k.key] = aheadRow{value: op.value}
			}
		}
		if op.del {
			delB, delK = append(delB, k.bucket), append(delK, []byte(k.key))
		} else {
			putB, putK, putV = append(putB, k.bucket), append(putK, []byte(k.key)), append(putV, op.value)
		}
		flush(false)
	}
	flush(true)
	clear(t.writes)
	return n
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// sendWrites sends b, n statements that return no rows, and fails the
// transaction with the first error.
func (t *Tx) sendWrites(b *pgx.Batch, n int) error {
	if n == 0 {
		return nil
	}
	br := t.q.SendBatch(t.ctx, b)
	var err error
	for range n {
		if _, e := br.Exec(); err == nil {
			err = e
		}
	}
	err = t.s.wrap(errors.Join(err, br.Close()))
	if err != nil {
		t.fail(err)
	}
	return err
}

// query runs sql after the writes the Tx holds, in one round trip. The
// caller closes the rows, then calls done.
func (t *Tx) query(sql string, args ...any) (rows pgx.Rows, done func() error, err error) {
	var b pgx.Batch
	n := t.queueWrites(&b)
	if n == 0 {
		rows, err := t.q.Query(t.ctx, sql, args...)
		return rows, func() error { return nil }, err
	}
	b.Queue(sql, args...)
	br := t.q.SendBatch(t.ctx, &b)
	for range n {
		if _, err := br.Exec(); err != nil {
			br.Close()
			t.fail(t.s.wrap(err))
			return nil, nil, err
		}
	}
	rows, err = br.Query()
	if err != nil {
		br.Close()
		return nil, nil, err
	}
	return rows, br.Close, nil
}

// Scan reads the bucket by pages, as the record reads do.
func (t *Tx) Scan(bucket string, prefix []byte, fn func(k, v []byte) error) error {
	if err := checkBucket(bucket); err != nil {
		return err
	}
	end := successor(prefix) // nil: no upper bound
	from := nonNil(prefix)
	for size := firstPage; ; size = min(2*size, lastPage) {
		rows, done, err := t.query(`SELECT key, value FROM flow_kv WHERE bucket = $1 AND key >= $2
			AND ($3::bytea IS NULL OR key < $3) ORDER BY key LIMIT `+fmt.Sprint(size), bucket, from, end)
		if err != nil {
			return t.s.wrap(err)
		}
		type kv struct{ k, v []byte }
		page := make([]kv, 0, size)
		for rows.Next() {
			var e kv
			if err := rows.Scan(&e.k, &e.v); err != nil {
				rows.Close()
				done()
				return t.s.wrap(err)
			}
			page = append(page, kv{e.k, nonNil(e.v)})
		}
		rows.Close()
		if err := errors.Join(rows.Err(), done()); err != nil {
			return t.s.wrap(err)
		}
		for _, e := range page {
			if err := fn(e.k, e.v); err != nil {
				if errors.Is(err, store.ErrStop) {
					return nil
				}
				return err
			}
		}
		if len(page) < size {
			return nil
		}
		from = append(bytes.Clone(page[len(page)-1].k), 0) // the next key in byte order
	}
}

// Last is bbolt's: the last key at most max, if it starts with prefix.
func (t *Tx) Last(bucket string, prefix, max []byte) (k, v []byte, err error) {
	if err := checkBucket(bucket); err != nil {
		return nil, nil, err
	}
	rows, done, err := t.query(`SELECT key, value FROM flow_kv WHERE bucket = $1 AND key <= $2
		ORDER BY key DESC LIMIT 1`, bucket, nonNil(max))
	if err != nil {
		return nil, nil, t.s.wrap(err)
	}
	found := rows.Next()
	if found {
		err = rows.Scan(&k, &v)
	}
	rows.Close()
	if err = errors.Join(err, rows.Err(), done()); err != nil {
		return nil, nil, t.s.wrap(err)
	}
	if !found {
		return nil, nil, nil
	}
	if !bytes.HasPrefix(k, prefix) {
		return nil, nil, nil
	}
	return k, nonNil(v), nil
}
