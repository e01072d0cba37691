package flow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/flowctl/flowctl/flow/store"
)

// DefaultFollowInterval is how often Follow polls the log's head.
const DefaultFollowInterval = 200 * time.Millisecond

// FollowOptions configure Follow.
type FollowOptions struct {
	// Options open the file for each poll. ReadOnly is forced, and a poll
	// waits for the lock at most Interval (less if LockTimeout is less).
	Options
	// Interval is the time between the starts of two polls; 0 means
	// DefaultFollowInterval.
	Interval time.Duration
	// New starts at the head: only events appended after Follow started
	// are delivered, and Filter.SinceSeq, Since and Limit are ignored for
	// what was there before.
	New bool
}

// Follow calls fn for every event that matches f, in seq order, each
// once: first those already in the log (as Events would, Limit included;
// none with opts.New), then each new one as any process appends it. It
// runs until ctx is done, then returns ctx.Err(), or until fn or a poll
// fails.
//
// Every poll opens the file read-only, reads from where the last one
// stopped up to the head, and closes the file before waiting for the
// next, so Follow never holds the lock between polls; fn runs with the
// lock released. A poll that finds the file locked by a writer is retried
// at the next one: a long write delays Follow but never ends it.
//
// Errors: ErrInvalid (f.UntilSeq or f.Until set: a followed log has no
// end), store.ErrNotExist (no file), ctx.Err(), and whatever Open,
// Events or fn return.
func Follow(ctx context.Context, path string, opts FollowOptions, f Filter, fn func(Event) error) error {
	if f.UntilSeq != 0 || !f.Until.IsZero() {
		return fmt.Errorf("%w: a followed log has no end: UntilSeq and Until cannot be set", ErrInvalid)
	}
	fl := newFollower(ctx, path, opts, f, fn)
	tick := time.NewTicker(fl.interval)
	defer tick.Stop()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fl.poll(); err != nil && !errors.Is(err, store.ErrBusy) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// follower is the state of one Follow: where the next poll starts.
type follower struct {
	ctx      context.Context
	path     string
	opts     Options
	interval time.Duration
	f        Filter
	fn       func(Event) error
	next     uint64 // the first seq not yet read
	version  uint64 // with a stream filter: its first version not yet read
	started  bool   // the first poll is done
	fromHead bool
}

func newFollower(ctx context.Context, path string, opts FollowOptions, f Filter, fn func(Event) error) *follower {
	fl := &follower{ctx: ctx, path: path, opts: opts.Options, interval: opts.Interval, f: f, fn: fn,
		next: max(f.SinceSeq, 1), version: 1, fromHead: opts.New}
	if fl.interval <= 0 {
		fl.interval = DefaultFollowInterval
	}
	fl.opts.ReadOnly, fl.opts.Create = true, false
	if fl.opts.LockTimeout <= 0 || fl.opts.LockTimeout > fl.interval {
		fl.opts.LockTimeout = fl.interval
	}
	if fl.opts.Cache == nil {
		fl.opts.Cache = NewCache(DefaultCacheSize)
	}
	return fl
}

// poll opens the file, hands fn the events from fl.next to the head and
// closes the file.
func (fl *follower) poll() (err error) {
	e, err := Open(fl.path, fl.opts)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := e.Close(); err == nil {
			err = cerr
		}
	}()
	head, err := e.headSeq()
	if err != nil {
		return err
	}
	if fl.fromHead {
		fl.next, fl.fromHead, fl.started = head+1, false, true
		return nil
	}
	if head < fl.next {
		fl.started = true
		return nil
	}
	if err := fl.read(e, head); err != nil {
		return err
	}
	fl.next, fl.started = head+1, true
	return nil
}

// read hands fn the matching events from fl.next to head: the first time
// through Events (which applies Limit), then page by page from a cursor
// that, for a stream, also keeps the stream version, so that a poll never
// scans the stream from its start.
func (fl *follower) read(e *Engine, head uint64) error {
	f := fl.f
	f.SinceSeq, f.UntilSeq = fl.next, head
	if !fl.started {
		return e.Events(f, fl.deliver)
	}
	f.Limit = 0
	for at := (cursor{seq: fl.next, version: fl.version}); at.seq <= head; {
		page, next, err := e.page(&f, at)
		if err != nil {
			return err
		}
		if err := e.release(); err != nil {
			return err
		}
		for _, ev := range page {
			if err := fl.deliver(ev); err != nil {
				return err
			}
		}
		at = next
	}
	return nil
}

// deliver passes one event on, unless Follow was cancelled meanwhile.
func (fl *follower) deliver(ev Event) error {
	if err := fl.ctx.Err(); err != nil {
		return err
	}
	if err := fl.fn(ev); err != nil {
		return err
	}
	fl.next = ev.Seq + 1
	if fl.f.Stream != "" {
		fl.version = ev.Version + 1
	}
	return nil
}

// headSeq returns the seq of the log's last record.
func (e *Engine) headSeq() (uint64, error) {
	if err := e.acquire(); err != nil {
		return 0, err
	}
	var seq uint64
	err := e.log.View(func(tx store.Tx) error {
		seq, _ = tx.Head()
		return nil
	})
	return seq, err
}
