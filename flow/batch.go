package flow

import (
	"maps"
	"slices"

	"github.com/flowctl/flowctl/flow/internal/history"
	"github.com/flowctl/flowctl/flow/internal/logidx"
	"github.com/flowctl/flowctl/flow/internal/projstore"
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

// batch is what a Batch's commands leave for its end.
type batch struct {
	projects map[string]bool        // projects the batch's commands wrote to
	digest   projstore.DigestWriter // their events' counts in the digest log index
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
