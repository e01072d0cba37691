package pgstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Tx is a transaction of a Store: a store.Tx over one PostgreSQL
// transaction. Valid only inside the View or Update callback that
// received it.
type Tx struct {
	s        *Store
	q        querier // the connection, in the transaction
	ctx      context.Context
	writable bool
	done     bool // committed

	// The head row, read when the transaction began (and locked by a
	// write transaction), moved by its appends, which write it too.
	head     uint64
	headHash store.Hash
	headTime int64 // unix ns

	// The caller's buckets: writes not sent yet, and what Gets read
	// (kv.go).
	writes    map[kvKey]kvOp
	ahead     map[string]*ahead
	aheadSize int // bytes of keys and values in ahead

	// copied counts the records AppendBulk wrote: past analyzeAfter, the
	// commit has the tables analyzed (commit).
	copied int

	// err is the first error of a method that has no error result
	// (StreamVersion, SeqOf), or of a write PostgreSQL aborted the
	// transaction for: the transaction then fails with it.
	err error
}

// querier is what a Tx needs of its connection (a *pgxpool.Conn).
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, rows pgx.CopyFromSource) (int64, error)
}

// scanHead reads the head row.
func (t *Tx) scanHead(row pgx.Row) error {
	var seq int64
	var hash []byte
	if err := row.Scan(&seq, &hash, &t.headTime); err != nil {
		return err
	}
	if len(hash) != len(t.headHash) {
		return &store.CorruptionError{Reason: fmt.Sprintf("the head row holds a hash of %d bytes", len(hash))}
	}
	t.head = uint64(seq)
	copy(t.headHash[:], hash)
	return nil
}

// fail keeps err as the transaction's error if it is the first.
func (t *Tx) fail(err error) {
	if t.err == nil {
		t.err = err
	}
}

func (t *Tx) Writable() bool { return t.writable }

func (t *Tx) Head() (uint64, store.Hash) { return t.head, t.headHash }

func (t *Tx) HeadTime() (time.Time, error) {
	if t.head == 0 {
		return time.Time{}, nil
	}
	return time.Unix(0, t.headTime).UTC(), nil
}

func (t *Tx) StreamVersion(stream string) (version, seq uint64) {
	v, s, err := t.streamHead(stream)
	if err != nil {
		t.fail(err)
	}
	return v, s
}

func (t *Tx) streamHead(stream string) (version, seq uint64, err error) {
	var v, s int64
	err = t.q.QueryRow(t.ctx, `SELECT version, seq FROM flow_streams WHERE stream = $1`, stream).Scan(&v, &s)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, 0, nil
	}
	return uint64(v), uint64(s), err
}

func (t *Tx) SeqOf(id store.ID) uint64 {
	var seq int64
	err := t.q.QueryRow(t.ctx, `SELECT seq FROM flow_events WHERE id = $1`, id[:]).Scan(&seq)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return 0
	case err != nil:
		t.fail(err)
		return 0
	}
	return uint64(seq)
}

// recordColumns are the columns scanRecord reads, in its order.
const recordColumns = `seq, id, stream, version, type, schema, time_ns, actor, session, project, correlation, causation, data, prev, hash`

// scanRecord reads a row of recordColumns and checks its hash.
func scanRecord(row pgx.Row) (*store.Record, error) {
	var (
		r                            store.Record
		seq, version, schema, timeNS int64
		id, corr, caus, prev, hash   []byte
	)
	if err := row.Scan(&seq, &id, &r.Stream, &version, &r.Type, &schema, &timeNS, &r.Actor, &r.Session,
		&r.Project, &corr, &caus, &r.Data, &prev, &hash); err != nil {
		return nil, err
	}
	r.Seq, r.Version, r.Schema = uint64(seq), uint64(version), uint32(schema)
	r.Time = time.Unix(0, timeNS).UTC()
	for _, f := range []struct {
		dst []byte
		src []byte
		opt bool
	}{{r.ID[:], id, false}, {r.Correlation[:], corr, true}, {r.Causation[:], caus, true}, {r.Prev[:], prev, false}, {r.Hash[:], hash, false}} {
		if f.opt && f.src == nil {
			continue
		}
		if len(f.src) != len(f.dst) {
			return nil, &store.CorruptionError{Seq: r.Seq, Reason: fmt.Sprintf("a column holds %d bytes, want %d", len(f.src), len(f.dst))}
		}
		copy(f.dst, f.src)
	}
	if store.ChainHash(&r) != r.Hash {
		return nil, &store.CorruptionError{Seq: r.Seq, Reason: "the record does not match its hash"}
	}
	return &r, nil
}

func (t *Tx) Record(seq uint64) (*store.Record, error) {
	if seq == 0 || seq > t.head {
		return nil, nil
	}
	r, err := scanRecord(t.q.QueryRow(t.ctx, `SELECT `+recordColumns+` FROM flow_events WHERE seq = $1`, int64(seq)))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, &store.CorruptionError{Seq: seq, Reason: "the record is missing below the head"}
	}
	return r, err
}

// Reads go by pages: a query fetches a page of rows, closes them, then
// hands them to fn, so that fn may use the transaction (a connection
// runs one query at a time). Pages start small, for the reads that stop
// after a few records, and grow.
const (
	firstPage  = 64
	binaryPage = 1024 // the first page read in binary
	lastPage   = 4096
)

// keyOf picks a record's position in a read: its seq or its version.
type keyOf func(*store.Record) uint64

func bySeq(r *store.Record) uint64     { return r.Seq }
func byVersion(r *store.Record) uint64 { return r.Version }

// pages reads the records of where (a condition on $1 <= key <= $2 and,
// if arg is not nil, $3) in key order, descending if desc, calling fn
// with each. Without arg, where is a range of seqs, which are dense: each
// page asks for the range of its size, so that the server sorts no more
// than a page whatever its statistics say (a table just filled by COPY,
// not analyzed yet, was read whole and sorted for every page).
func (t *Tx) pages(where, column string, arg any, lo, hi uint64, desc bool, key keyOf, fn func(*store.Record) error) error {
	if hi > math.MaxInt64 {
		hi = math.MaxInt64
	}
	order := "ASC"
	if desc {
		order = "DESC"
	}
	q := `SELECT ` + recordColumns + ` FROM flow_events WHERE ` + where + ` ORDER BY ` + column + ` ` + order + ` LIMIT `
	for size := firstPage; lo <= hi; size = min(2*size, lastPage) {
		// The first pages as every statement goes, in one round trip with
		// the values as text; the large ones in binary, which takes a
		// round trip more, once a connection, to learn the columns' types
		// (a replay of 100k records: 1.7 s -> 1.0 s).
		args := []any{pgx.QueryExecModeExec}
		if size >= binaryPage {
			args[0] = pgx.QueryExecModeCacheDescribe
		}
		qlo, qhi := lo, hi
		if arg == nil { // seqs 1..head are dense: a page is a range of them
			if desc {
				qlo = max(lo, hi-min(hi, uint64(size))+1)
			} else {
				qhi = min(hi, lo+uint64(size)-1)
			}
		}
		args = append(args, int64(qlo), int64(qhi))
		if arg != nil {
			args = append(args, arg)
		}
		rows, err := t.q.Query(t.ctx, q+fmt.Sprint(size), args...)
		if err != nil {
			return t.s.wrap(err)
		}
		page := make([]*store.Record, 0, size)
		for rows.Next() {
			r, err := scanRecord(rows)
			if err != nil {
				rows.Close()
				return err
			}
			page = append(page, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return t.s.wrap(err)
		}
		for _, r := range page {
			if err := fn(r); err != nil {
				if errors.Is(err, store.ErrStop) {
					return nil
				}
				return err
			}
		}
		if arg == nil { // the next range, whatever this one held
			if desc {
				if qlo <= lo {
					return nil
				}
				hi = qlo - 1
			} else {
				if qhi >= hi {
					return nil
				}
				lo = qhi + 1
			}
			continue
		}
		if len(page) < size {
			return nil
		}
		last := key(page[len(page)-1])
		if desc {
			if last == 0 {
				return nil
			}
			hi = last - 1
		} else {
			lo = last + 1
		}
	}
	return nil
}

// to is the upper bound of a read to seq to: the head when 0 or past it.
func (t *Tx) to(to uint64) uint64 {
	if to == 0 || to > t.head {
		return t.head
	}
	return to
}

func (t *Tx) ReadRange(from, to uint64, fn func(*store.Record) error) error {
	return t.pages(`seq BETWEEN $1 AND $2`, "seq", nil, max(from, 1), t.to(to), false, bySeq, fn)
}

func (t *Tx) Replay(from, to uint64, fn func(*store.Record) error) error {
	return t.ReadRange(from, to, fn)
}

func (t *Tx) ReadStream(stream string, from uint64, fn func(*store.Record) error) error {
	return t.pages(`version BETWEEN $1 AND $2 AND stream = $3`, "version", stream, max(from, 1), math.MaxInt64, false, byVersion, fn)
}

func (t *Tx) ReplayStream(stream string, from uint64, fn func(*store.Record) error) error {
	return t.ReadStream(stream, from, fn)
}

func (t *Tx) ReadProject(project string, from uint64, fn func(*store.Record) error) error {
	return t.pages(`seq BETWEEN $1 AND $2 AND project = $3`, "seq", project, max(from, 1), t.head, false, bySeq, fn)
}

func (t *Tx) ReplayProject(project string, from uint64, fn func(*store.Record) error) error {
	return t.ReadProject(project, from, fn)
}

func (t *Tx) ReadRangeBack(from, to uint64, fn func(*store.Record) error) error {
	return t.pages(`seq BETWEEN $1 AND $2`, "seq", nil, max(from, 1), t.to(to), true, bySeq, fn)
}

func (t *Tx) ReadStreamBack(stream string, to uint64, fn func(*store.Record) error) error {
	if to == 0 {
		to = math.MaxInt64
	}
	return t.pages(`version BETWEEN $1 AND $2 AND stream = $3`, "version", stream, 1, to, true, byVersion, fn)
}

func (t *Tx) ReadProjectBack(project string, to uint64, fn func(*store.Record) error) error {
	return t.pages(`seq BETWEEN $1 AND $2 AND project = $3`, "seq", project, 1, t.to(to), true, bySeq, fn)
}

// successor returns the least key greater than every key that starts
// with prefix, or nil when there is none (prefix empty or all 0xff).
func successor(prefix []byte) []byte {
	s := bytes.Clone(prefix)
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] < 0xff {
			s[i]++
			return s[:i+1]
		}
	}
	return nil
}

// nonNil is b, or an empty slice for nil: a bytea parameter that is nil
// would be NULL.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
