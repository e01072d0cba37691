package pgstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Store is a PostgreSQL database seen as a store.Store. It is safe for
// concurrent use; several processes may hold one open on one database.
type Store struct {
	pool     *pgxpool.Pool
	dsn      string
	redacted string   // dsn without its password
	secrets  []string // the password, as the URL and its config hold it: scrubbed from every error
	readOnly bool
	timeout  time.Duration // lock_timeout of a write transaction
	now      func() time.Time
	progress func(done, total uint64)
	closed   atomic.Bool

	tripCount atomic.Int64 // round trips of the connections (trips.go)
}

// maxAttempts bounds the runs of an Update that PostgreSQL aborted for a
// serialization failure or a deadlock.
const maxAttempts = 10

// View runs fn in a read-only REPEATABLE READ transaction: one snapshot
// of the database for all of fn's reads.
func (s *Store) View(fn func(store.Tx) error) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	tx, release, err := s.begin(false)
	if err != nil {
		return s.wrap(err)
	}
	defer release()
	if err := fn(tx); err != nil {
		return err
	}
	return s.wrap(tx.err)
}

// Update runs fn in a write transaction that holds the head row: write
// transactions take their turns, as the hash chain needs a total order
// (doc.go, "Ordering"). A serialization failure or deadlock runs fn
// again, up to maxAttempts; a lock wait past Options.Timeout is
// store.ErrBusy.
func (s *Store) Update(fn func(store.Tx) error) error {
	if s.closed.Load() {
		return store.ErrClosed
	}
	if s.readOnly {
		return store.ErrReadOnly
	}
	for attempt := 1; ; attempt++ {
		err := s.update(fn)
		if !retryable(err) || attempt == maxAttempts {
			return s.wrap(err)
		}
		time.Sleep(time.Duration(rand.Int64N(int64(attempt) * int64(5*time.Millisecond))))
	}
}

func (s *Store) update(fn func(store.Tx) error) error {
	tx, release, err := s.begin(true)
	if err != nil {
		return err
	}
	defer release()
	if err := fn(tx); err != nil {
		return err
	}
	if tx.err != nil {
		return tx.err
	}
	tag, err := tx.commit()
	if err == nil && tag.String() != "COMMIT" {
		err = fmt.Errorf("pgstore: the transaction was rolled back (%s)", tag)
	}
	tx.done = err == nil
	return err
}

// analyzeAfter is the records a transaction's AppendBulk writes past
// which its commit analyzes the tables.
const analyzeAfter = 10000

// commit sends the writes the transaction holds and COMMIT, in one
// round trip.
func (t *Tx) commit() (pgconn.CommandTag, error) {
	var b pgx.Batch
	n := t.queueWrites(&b)
	if t.copied >= analyzeAfter {
		// The planner's statistics of tables a bulk import just filled
		// say they are nearly empty until autovacuum comes by (a minute
		// or more), and its plans for a project's pages read the whole
		// project. Only the tables' owner may; another role gets a
		// warning, which is no error.
		// A small sample (3,000 rows, not 30,000): row counts are what
		// the plans need.
		b.Queue("SET LOCAL default_statistics_target = 10")
		b.Queue("ANALYZE flow_events, flow_streams, flow_kv")
		n += 2
	}
	b.Queue("COMMIT")
	br := t.q.SendBatch(t.ctx, &b)
	defer br.Close()
	for range n {
		if _, err := br.Exec(); err != nil {
			return pgconn.CommandTag{}, err
		}
	}
	tag, err := br.Exec()
	if err != nil {
		return tag, err
	}
	return tag, br.Close()
}

// begin starts a transaction on a connection of the pool and reads the
// head row (locked for a write transaction, under lock_timeout), all in
// one round trip: BEGIN, SET LOCAL and the SELECT go as one pipelined
// batch. release ends the transaction, unless it committed, and gives
// the connection back.
func (s *Store) begin(write bool) (tx *Tx, release func(), err error) {
	ctx := context.Background()
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, nil, err
	}
	tx = &Tx{s: s, q: c, ctx: ctx, writable: write}
	release = func() {
		if !tx.done {
			// A failed ROLLBACK leaves the connection in a transaction (or
			// closed), and the pool then drops it rather than reuse it.
			c.Exec(ctx, "ROLLBACK")
		}
		c.Release()
	}
	var b pgx.Batch
	head := `SELECT seq, hash, time_ns FROM flow_head`
	if write {
		b.Queue("BEGIN ISOLATION LEVEL READ COMMITTED")
		b.Queue(fmt.Sprintf("SET LOCAL lock_timeout = %d", s.timeout.Milliseconds()))
		head += ` FOR UPDATE`
	} else {
		b.Queue("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
	}
	b.Queue(head).QueryRow(tx.scanHead)
	if err := c.SendBatch(ctx, &b).Close(); err != nil {
		release()
		return nil, nil, err
	}
	return tx, release, nil
}

// Close closes the connections. Calls after it return store.ErrClosed.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.pool.Close()
	return nil
}

// retryable reports whether err is a PostgreSQL serialization failure
// (40001) or deadlock (40P01): the transaction may succeed run again.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40001" || pgErr.Code == "40P01")
}

// wrap maps PostgreSQL's errors to the store's sentinels and takes the
// password out of any error text. The store's own errors pass as they
// are.
func (s *Store) wrap(err error) error {
	if err == nil {
		return nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "55P03": // lock_not_available: lock_timeout passed
			return fmt.Errorf("%w: the write lock of %s was not free within %s", store.ErrBusy, s.redacted, s.timeout)
		case "23505": // unique_violation
			if strings.Contains(pgErr.ConstraintName, "stream_version") {
				return fmt.Errorf("%w: another writer appended to the stream first (%s)", store.ErrConflict, pgErr.Detail)
			}
			if strings.Contains(pgErr.ConstraintName, "_id_") {
				return fmt.Errorf("%w: event id already stored (%s)", store.ErrConflict, pgErr.Detail)
			}
		case "25006": // read_only_sql_transaction
			return fmt.Errorf("%w: %s", store.ErrReadOnly, pgErr.Message)
		}
		return err
	}
	for _, pw := range s.secrets {
		if strings.Contains(err.Error(), pw) {
			return errors.New(scrubText(strings.ReplaceAll(err.Error(), pw, "xxxxx"), s.dsn))
		}
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) {
		return fmt.Errorf("pgstore: %s: %w", s.redacted, err)
	}
	return err
}
