package flow

import (
	"github.com/flowctl/flowctl/flow/internal/logidx"
	"github.com/flowctl/flowctl/flow/store"
)

// Batch runs several commands in one transaction: fn gets a view of the
// engine whose commands all join that transaction, and they commit
// together when fn returns nil — or not at all when it returns an error.
// Reads through the view see the batch's own writes and bypass the cache.
// Like any Update callback, fn may run more than once (group commit
// retries without a failing caller) and must have no effects outside the
// engine.
func (e *Engine) Batch(fn func(b *Engine) error) error {
	return e.update(func(tx store.Tx) error {
		b := *e
		b.tx = tx
		if e.idx != nil { // a batch inside a batch: the outer one writes
			return fn(&b)
		}
		b.idx = new(logidx.Writer)
		if err := fn(&b); err != nil {
			return err
		}
		return b.idx.Flush(tx)
	})
}
