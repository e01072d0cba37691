package flow

import (
	"maps"
	"slices"

	"github.com/flowctl/flowctl/flow/internal/history"
	"github.com/flowctl/flowctl/flow/internal/logidx"
	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/internal/snapstore"
	"github.com/flowctl/flowctl/flow/store"
)

// Batch runs several commands in one transaction: fn gets a view of the
// engine whose commands all join that transaction, and they commit
// together when fn returns nil — or not at all when it returns an error.
// Reads through the view see the batch's own writes and bypass the cache.
// Like any Update callback, fn may run more than once (group commit
// retries without a failing caller) and must have no effects outside the
// engine.
//
// The batch's commands share their projections in memory
// (projstore.Pending): an entity that several of them change is decoded
// once and written once, when fn returns; each project's rollback index
// and digest log index are brought up to date once, then, too.
func (e *Engine) Batch(fn func(b *Engine) error) error {
	return e.commit(func(tx store.Tx) error {
		b := *e
		if b.batch != nil { // a batch in a batch joins it
			return fn(&b)
		}
		p := projstore.NewPending(tx)
		p.OnFlush(e.snaps.Flushed) // the snapshot cache keeps what the flushes encoded
		b.tx, b.batch, b.idx = p, &batch{projects: map[string]bool{}}, new(logidx.Writer)
		// The commands' events are listed on a second goroutine while
		// they run (a function of each event alone): the Flush at the end
		// waits for it, Stop ends it when the batch fails first.
		b.idx.Async()
		defer b.idx.Stop()
		if err := fn(&b); err != nil {
			return err
		}
		if err := b.batch.end(p); err != nil {
			return err
		}
		if err := b.batch.digest.Flush(tx); err != nil {
			return err
		}
		return b.idx.Flush(tx)
	})
}

// batch is what a Batch's commands leave for its end, and what they
// share.
type batch struct {
	projects map[string]bool        // projects the batch's commands wrote to
	digest   projstore.DigestWriter // their events' counts in the digest log index
	marks    snapstore.Marks        // the snapshot marks they read (autoSnapshot)
	// current is whether the stored projections are this binary's fold's
	// (projstore.Current): 0 not read yet, 1 yes, -1 no. A batch reads it
	// once: nothing in it makes them stale (a rebuild makes them current).
	current int8
}

// batchRead runs fn on the projections the commands of e's Batch share
// (projstore.Writer: what they folded, flushed or not, decoded once),
// when e is a Batch's view and the projections are this fold's; ok false
// (fn not run) otherwise. The entities fn reads are the batch's own, which
// later commands change in place: fn copies what it returns, and changes
// nothing.
func (e *Engine) batchRead(fn func(src source) error) (ok bool, err error) {
	if e.batch == nil || e.at != nil {
		return false, nil
	}
	s, shared := projstore.Writer(e.tx)
	if !shared {
		return false, nil
	}
	current, err := e.batch.currentIn(e.tx)
	if err != nil || !current {
		return err != nil, err
	}
	return true, fn(s)
}

// currentIn is projstore.Current(tx), read once per batch.
func (b *batch) currentIn(tx store.Tx) (bool, error) {
	if b.current == 0 {
		current, err := projstore.Current(tx)
		if err != nil {
			return false, err
		}
		b.current = -1
		if current {
			b.current = 1
		}
	}
	return b.current > 0, nil
}

// end writes what the batch's commands folded and indexes the rollbacks
// of the projects they wrote to.
func (b *batch) end(p *projstore.Pending) error {
	if err := p.Flush(); err != nil {
		return err
	}
	for _, project := range slices.Sorted(maps.Keys(b.projects)) {
		if err := history.IndexRollbacks(p.Raw(), project); err != nil {
			return err
		}
	}
	return nil
}
