package logidx

import (
	"encoding/binary"
	"errors"

	"github.com/flowctl/flowctl/flow/internal/searchidx"
	"github.com/flowctl/flowctl/flow/store"
)

// Step is the number of events Sync lists in one transaction: a step's
// Writer holds their seqs and postings (about 100 MiB for 1<<18 events),
// whatever the length of the log.
const Step = 1 << 18

// Sync brings the index of st up to the log's head in transactions of at
// most step events each (0: Step). An index of another Format (or none)
// is first dropped, with the full-text index, and stamped with this
// Format listing the log through seq 0 (Reset); then each transaction
// lists the next step events after "through" (the Writer's incremental
// path, Add and Flush, whose chunks are canonical: the result is, byte
// for byte, Rebuild's). Between two transactions the index is one behind
// the head, which readers read around and the next Sync continues: a
// process killed between steps leaves a file the next writable open
// finishes.
func Sync(st store.Store, step uint64) error {
	if step == 0 {
		step = Step
	}
	for {
		var done bool
		err := st.Update(func(tx store.Tx) error {
			_, ok, err := Through(tx)
			if err != nil {
				return err
			}
			if !ok {
				return Reset(tx)
			}
			done, err = catchUp(tx, step)
			return err
		})
		if err != nil || done {
			return err
		}
	}
}

// Reset drops the index (and the full-text index) and stamps an empty one
// in this Format, listing the log through seq 0: readers read the whole
// log around it until Sync lists it.
func Reset(tx store.Tx) error {
	if err := errors.Join(tx.DeleteBucket(Bucket), tx.DeleteBucket(PendingBucket)); err != nil {
		return err
	}
	if err := searchidx.Drop(tx); err != nil {
		return err
	}
	if err := tx.Put(Bucket, keyVersion, stamp); err != nil {
		return err
	}
	return tx.Put(Bucket, keyThrough, binary.BigEndian.AppendUint64(nil, 0))
}

// catchUp lists at most n events after the seq the index, of this Format,
// lists through, and reports whether it then lists the whole log.
func catchUp(tx store.Tx, n uint64) (done bool, err error) {
	seq, _, err := Through(tx)
	if err != nil {
		return false, err
	}
	head, _ := tx.Head()
	if seq >= head {
		return true, nil
	}
	to := head
	if head-seq > n {
		to = seq + n
	}
	var w Writer
	err = tx.Replay(seq+1, to, func(r *store.Record) error {
		w.Add(r.Seq, &r.Event)
		return nil
	})
	if err != nil {
		return false, err
	}
	return to == head, w.Flush(tx)
}
