package flow

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/flowctl/flowctl/flow/store"
)

// DefaultFollowInterval is how often Follow polls the log's head.
const DefaultFollowInterval = 200 * time.Millisecond

// DefaultFollowFallback is how often Follow polls a store that notifies
// its commits (PostgreSQL) when no notification comes.
const DefaultFollowFallback = time.Second

// FollowOptions configure Follow.
type FollowOptions struct {
	// Options open the file for each poll. ReadOnly is forced, and a poll
	// waits for the lock at most Interval (less if LockTimeout is less).
	Options
	// Interval is the time between the starts of two polls; 0 means
	// DefaultFollowInterval. Unused for a store that notifies.
	Interval time.Duration
	// Fallback is, for a store whose driver notifies commits
	// (store.Notifier: PostgreSQL), the longest wait for a notification
	// before Follow polls anyway, which covers lost ones; 0 means
	// DefaultFollowFallback.
	Fallback time.Duration
	// New starts at the head Follow reads when it is called: only events
	// appended after that are delivered, and Filter.SinceSeq, Since and
	// Limit are ignored for what was there before.
	New bool
	// Ready, when set, is called once, before any event is delivered,
	// when Follow has fixed where it starts and listens: every event
	// after seq after that matches f is delivered (with opts.New, after
	// is the head Follow read; otherwise f.SinceSeq-1, 0 for none).
	Ready func(after uint64)
}

// Follow calls fn for every event that matches f, in seq order, each
// once: first those already in the log (as Events would, Limit included;
// none with opts.New), then each new one as any process appends it. It
// runs until ctx is done, then returns ctx.Err(), or until fn or a poll
// fails.
//
// With opts.New, Follow first reads the head (waiting for the lock up to
// opts.LockTimeout) and delivers every event after it, so an event whose
// commit ends after Follow was called is never missed. When a writer
// holds the file past that, the start is the head of the first poll that
// gets in, as if the writer's commits came before the call.
//
// Every poll opens the file read-only, reads from where the last one
// stopped up to the head, and closes the file before waiting for the
// next, so Follow never holds the lock between polls; fn runs with the
// lock released. A poll that finds the file locked by a writer is retried
// at the next one: a long write delays Follow but never ends it.
//
// A store whose driver is a store.Notifier (PostgreSQL: LISTEN/NOTIFY)
// is not polled at a fixed interval: Follow listens before it catches
// up, and reads after each notification of a head past what it read, or
// after opts.Fallback without one. Other stores (the bbolt file) are
// polled every opts.Interval.
//
// Errors: ErrInvalid (f.UntilSeq or f.Until set: a followed log has no
// end), store.ErrNotExist (no file), ctx.Err(), and whatever Open,
// Events or fn return.
func Follow(ctx context.Context, path string, opts FollowOptions, f Filter, fn func(Event) error) error {
	if f.UntilSeq != 0 || !f.Until.IsZero() {
		return fmt.Errorf("%w: a followed log has no end: UntilSeq and Until cannot be set", ErrInvalid)
	}
	d, err := store.Lookup(path)
	if err != nil {
		return err
	}
	fl := newFollower(ctx, path, opts, f, fn)
	if opts.New {
		if err := fl.start(opts.LockTimeout); err != nil && !errors.Is(err, store.ErrBusy) {
			return err
		}
	}
	if n, ok := d.(store.Notifier); ok {
		l, err := n.Listen(path, store.Options{ReadOnly: true, Timeout: opts.LockTimeout})
		if err != nil {
			// The store's own error, if it has one, says more: missing,
			// unreachable.
			e, oerr := Open(path, fl.opts)
			if oerr != nil {
				return oerr
			}
			e.Close()
			return err
		}
		defer l.Close()
		fl.ready()
		return fl.listen(l, cmp.Or(opts.Fallback, DefaultFollowFallback))
	}
	fl.ready()
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

// listen is Follow's loop on a store that notifies: a poll, then a wait
// for a notification of a head past what it read, at most fallback.
func (fl *follower) listen(l store.Listener, fallback time.Duration) error {
	for {
		if err := fl.ctx.Err(); err != nil {
			return err
		}
		if err := fl.poll(); err != nil && !errors.Is(err, store.ErrBusy) {
			return err
		}
		wctx, cancel := context.WithTimeout(fl.ctx, fallback)
		err := l.Wait(wctx, fl.next-1)
		cancel()
		if err != nil && fl.ctx.Err() != nil {
			return fl.ctx.Err()
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
	onReady  func(after uint64) // FollowOptions.Ready, nil once called
}

// ready calls FollowOptions.Ready once the start is fixed.
func (fl *follower) ready() {
	if fl.onReady != nil && !fl.fromHead {
		fl.onReady(fl.next - 1)
		fl.onReady = nil
	}
}

func newFollower(ctx context.Context, path string, opts FollowOptions, f Filter, fn func(Event) error) *follower {
	fl := &follower{ctx: ctx, path: path, opts: opts.Options, interval: opts.Interval, f: f, fn: fn,
		next: max(f.SinceSeq, 1), version: 1, fromHead: opts.New, onReady: opts.Ready}
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

// start fixes where New begins: one read of the head, waiting for the
// lock up to lockTimeout (0: the store's default).
func (fl *follower) start(lockTimeout time.Duration) (err error) {
	o := fl.opts
	o.LockTimeout = lockTimeout
	e, err := Open(fl.path, o)
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
	fl.next, fl.fromHead, fl.started = head+1, false, true
	return nil
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
		fl.ready()
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
