package eventlog

import (
	"errors"
	"fmt"
	bolt "go.etcd.io/bbolt"
	"runtime/debug"
	"time"
)

// call is one Update waiting for its commit.
type call struct {
	fn   func(*Tx) error
	done chan outcome
}

// outcome is either the result of a call's commit or, when lead is set,
// the hand-over of leadership: the receiver commits the next batch.
type outcome struct {
	err  error
	lead bool
}

// View runs fn in a read transaction.
func (l *Log) View(fn func(*Tx) error) error {
	return l.view(func(btx *bolt.Tx) error { return fn(newTx(l, btx)) })
}

// Update runs fn in a write transaction and returns after the commit is
// durable. Concurrent calls are committed together in one transaction
// (group commit): the first caller leads and commits every call queued
// while the previous commit was in flight.
//
// If fn returns an error, nothing fn wrote is kept. Because a failing call
// makes its batch roll back and retry without it, fn may run more than
// once: it must have no effects outside tx and must not call Update.
func (l *Log) Update(fn func(*Tx) error) error {
	if l.opts.ReadOnly {
		return ErrReadOnly
	}
	c := &call{fn: fn, done: make(chan outcome, 1)}
	l.mu.Lock()
	l.pending = append(l.pending, c)
	select {
	case l.arrived <- struct{}{}:
	default:
	}
	if l.leading {
		l.mu.Unlock()
		o := <-c.done
		if !o.lead {
			return o.err
		}
	} else {
		l.leading = true
		l.mu.Unlock()
	}
	l.lead()
	return (<-c.done).err
}

// lead commits one batch of pending calls, then hands leadership to the
// oldest call queued meanwhile, so that no caller waits for more than
// its own batch and one other.
func (l *Log) lead() {
	l.gather()
	l.mu.Lock()
	n := min(len(l.pending), l.opts.MaxBatch)
	batch := l.pending[:n:n]
	l.pending = l.pending[n:]
	l.mu.Unlock()

	start := time.Now()
	done, err := l.commit(batch)

	l.mu.Lock()
	// The next commit waits for this batch's callers and for those that
	// queued while it ran: with writers in a loop, all of them (gather).
	l.lastBatch, l.lastCommit = min(n+len(l.pending), l.opts.MaxBatch), time.Since(start)
	l.mu.Unlock()
	for _, c := range done {
		c.done <- outcome{err: err}
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.pending) == 0 {
		l.leading = false
		return
	}
	l.pending[0].done <- outcome{lead: true}
}

// gather gives the callers of the previous commit a moment to queue again
// before the next one, so that writers in a loop share commits instead of
// splitting into a large batch and a small one that always waits (1, 7,
// 1, 7, ... or 6, 2, 6, 2, ...). It waits only while fewer calls are
// queued than the previous commit had plus those that queued during it,
// and at most a quarter of that commit's duration: a lone writer never
// waits.
func (l *Log) gather() {
	l.mu.Lock()
	want, limit := l.lastBatch, l.lastCommit/4
	l.mu.Unlock()
	var timeout <-chan time.Time
	for {
		l.mu.Lock()
		n := len(l.pending)
		l.mu.Unlock()
		if n >= want || n >= l.opts.MaxBatch {
			return
		}
		if timeout == nil {
			t := time.NewTimer(limit)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-l.arrived:
		case <-timeout:
			return
		}
	}
}

// commit runs the calls of batch in one transaction. A call that fails is
// answered with its error at once and the rest are retried without it;
// the calls of the transaction that ended are returned with its outcome
// (nil: committed), for the caller to answer.
func (l *Log) commit(batch []*call) ([]*call, error) {
	for len(batch) > 0 {
		failed := -1
		var ferr error
		err := l.update(func(tx *Tx) error {
			for i, c := range batch {
				if err := runCall(c.fn, tx); err != nil {
					failed, ferr = i, err
					return err
				}
			}
			return nil
		})
		if failed < 0 {
			return batch, err
		}
		batch[failed].done <- outcome{err: ferr}
		batch = append(batch[:failed:failed], batch[failed+1:]...)
	}
	return nil, nil
}

// runCall runs one call of a batch. A panic fails that call alone, as
// an error does, so that the other calls are retried without it. A panic
// in the caller's code is a bug, not damage to the file: it is reported
// as such; one raised by bbolt, or a memory fault on a mapped page, is
// damage to the file.
func runCall(fn func(*Tx) error, tx *Tx) (err error) {
	defer func() {
		r := recover()
		switch {
		case r == nil:
		case isFault(r) || raisedByBolt():
			err = damageError(r)
		default:
			err = fmt.Errorf("eventlog: an update panicked: %v", r)
		}
	}()
	return fn(tx)
}

// isFault reports whether a recovered panic is a memory fault (a read of
// a mapped page past the end of a truncated file, with panic-on-fault).
func isFault(r any) bool {
	f, ok := r.(interface{ Addr() uintptr })
	return ok && f.Addr() != 0
}

// errNothingWritten rolls back a transaction in which no call wrote:
// committing it would still write a bbolt meta page and fsync, so that a
// retried, idempotent command would change the file's bytes.
var errNothingWritten = errors.New("eventlog: nothing written")

// update runs fn in one bbolt write transaction, then stores what its
// appends kept in memory (Tx.flush); a panic from a damaged
// page becomes a *CorruptionError and the transaction is rolled back.
func (l *Log) update(fn func(*Tx) error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer recoverCorruption(&err)
	err = l.db.Update(func(btx *bolt.Tx) error {
		tx := newTx(l, btx)
		if err := fn(tx); err != nil {
			return err
		}
		if err := tx.flush(); err != nil {
			return err
		}
		if !tx.wrote {
			return errNothingWritten
		}
		return nil
	})
	if err == errNothingWritten {
		return nil
	}
	return closedError(err)
}

// Append appends events to stream in its own transaction (group committed
// with concurrent callers). See Tx.Append.
//
// The events are checked, and given ids and times, before the call joins
// a commit, so that concurrent callers do that work in parallel rather
// than one after the other inside the shared transaction.
func (l *Log) Append(stream string, exp Expect, events ...Event) (Appended, error) {
	if l.opts.ReadOnly {
		return Appended{}, ErrReadOnly
	}
	b, err := prepare(stream, events, l.opts.Now)
	if err != nil {
		return Appended{}, err
	}
	var out Appended
	err = l.Update(func(tx *Tx) error {
		var err error
		out, err = tx.appendBatch(b, exp)
		return err
	})
	return out, err
}

// Head returns the seq and hash of the last record.
func (l *Log) Head() (seq uint64, hash Hash, err error) {
	err = l.View(func(tx *Tx) error {
		seq, hash = tx.Head()
		return nil
	})
	return seq, hash, err
}

// ReadRange reads records from <= seq <= to (to == 0: to the head).
func (l *Log) ReadRange(from, to uint64, fn func(*Record) error) error {
	return l.View(func(tx *Tx) error { return tx.ReadRange(from, to, fn) })
}

// Replay reads records from <= seq <= to (to == 0: to the head) for
// folding, as Tx.Replay does: without the hash check, lending fn a
// reused Record.
func (l *Log) Replay(from, to uint64, fn func(*Record) error) error {
	return l.View(func(tx *Tx) error { return tx.Replay(from, to, fn) })
}

// ReadStream reads the records of stream from version from.
func (l *Log) ReadStream(stream string, from uint64, fn func(*Record) error) error {
	return l.View(func(tx *Tx) error { return tx.ReadStream(stream, from, fn) })
}

// ReadProject reads the records of project from seq from.
func (l *Log) ReadProject(project string, from uint64, fn func(*Record) error) error {
	return l.View(func(tx *Tx) error { return tx.ReadProject(project, from, fn) })
}
