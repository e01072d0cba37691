package flow

import (
	"fmt"

	"github.com/flowctl/flowctl/flow/internal/logidx"
	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
)

// A bulk import into an empty file runs on three goroutines at once, so
// that the phases of the import overlap on the machine's cores rather than
// follow each other:
//
//   - parseAhead parses the next batch of lines;
//   - the caller (importBulk) appends a batch a write transaction with
//     AppendBulk, and writes in the same transaction what the folder
//     handed it;
//   - the folder (bulkFolder) takes the batches as they commit, a few at
//     a time (an epoch), and in one read transaction folds their events of
//     a project into the projections the epochs before left, from the
//     events in hand rather than read back from the log; it lists them in
//     the log index and counts them in the digest log index on the way.
//     It hands the epoch to the caller, and folds the next one without
//     waiting for it to be written: the entities of the epochs handed
//     over and not yet written are read from them (projstore.ReadOver),
//     the rest from the store. At most maxAhead epochs are unwritten.
//
// The log index and the projections lag the log by an epoch or two until
// the end: readers read past the log index's mark (logidx.Through), and
// nobody reads the copy before it replaces the file. What an import holds
// is a few batches of events and an epoch's entities, never a project's.

// foldEpoch is how many batches of events the folder folds in one read
// transaction, for the caller to write in one write transaction. One
// measured best: a larger epoch writes an entity that several batches
// change fewer times, but holds more batches in memory (it waits for all
// of them before it reads) for no less CPU (1M events: 20.9 s at one,
// 22.6 at two, 22.5 at three; peak RSS 227, 253, 257 MiB).
const foldEpoch = 1

// maxAhead is how many epochs the folder hands over before it waits
// for the first of them to be written: one in a write transaction, one
// waiting for the next, while the folder folds a third.
const maxAhead = 2

// foldedEpoch is an epoch folded, for the caller to write.
type foldedEpoch struct {
	st      *projstore.Tx           // the entities it changed
	idx     logidx.Writer           // its events in the log index
	digest  *projstore.DigestWriter // on the last: the digest log index
	unknown map[string]int          // its events of types this binary does not know
	err     error
}

// write writes ep into tx.
func (ep *foldedEpoch) write(tx store.Tx) error {
	if ep.st != nil {
		if err := ep.st.FlushInto(tx); err != nil {
			return err
		}
	}
	if err := ep.idx.Flush(tx); err != nil || ep.digest == nil {
		return err
	}
	return ep.digest.Flush(tx) // as a command would: prime reads it
}

// bulkFolder is the folder's side of a bulk import.
type bulkFolder struct {
	e       *Engine
	in      chan *bulkAppended // the batches committed, in seq order
	out     chan *foldedEpoch  // epochs folded; closed when the folder ends
	written chan error         // the caller's answer to each epoch: nil when committed
	spent   chan *bulkAppended // batches folded, whose slices the caller may reuse (appendBulkTx)
	quit    chan struct{}      // closed when the caller stops the import
	digest  projstore.DigestWriter
	unknown map[string]int // the caller's count of events of unknown types
	// unwritten holds the entities of the epochs handed over and not
	// answered yet, oldest first (the folder's own).
	unwritten []projstore.Unwritten
}

// startFolder starts e's folder, which counts the events of unknown
// types it wrote in unknown (on the caller's goroutine).
func (e *Engine) startFolder(unknown map[string]int) *bulkFolder {
	f := &bulkFolder{
		e: e, unknown: unknown,
		in: make(chan *bulkAppended, 1), out: make(chan *foldedEpoch, 1),
		written: make(chan error, maxAhead), quit: make(chan struct{}), spent: make(chan *bulkAppended, 2),
	}
	go f.run()
	return f
}

// run folds epochs until the caller closes in, then hands the digest log
// index over, and closes out.
func (f *bulkFolder) run() {
	defer close(f.out)
	for {
		batches, more := f.gather()
		// The answers in, the epochs written are read from the store.
		if !f.settle(len(f.unwritten)) {
			return
		}
		if len(batches) > 0 {
			ep := f.fold(batches)
			for _, c := range batches {
				select {
				case f.spent <- c: // for the caller to append a later batch into
				default:
				}
			}
			if !f.hand(ep) {
				return
			}
		}
		if !more {
			f.hand(&foldedEpoch{digest: &f.digest})
			return
		}
	}
}

// gather waits for the batches of the next epoch: false when in is closed
// (the last epoch) or the import stopped. No read transaction is open
// while it waits, as a write transaction that grows the file waits for
// every read to end.
func (f *bulkFolder) gather() ([]*bulkAppended, bool) {
	var batches []*bulkAppended
	for len(batches) < foldEpoch {
		select {
		case c, ok := <-f.in:
			if !ok {
				return batches, false
			}
			batches = append(batches, c)
		case <-f.quit:
			return nil, false
		}
	}
	return batches, true
}

// hand sends ep to the caller, once fewer than maxAhead epochs handed
// over are unwritten: false when it is not sent, or an epoch was not
// written (an error, or the import stopped). It does not wait for ep to
// be written.
func (f *bulkFolder) hand(ep *foldedEpoch) bool {
	if !f.settle(maxAhead - 1) {
		return false
	}
	var u projstore.Unwritten
	if ep.st != nil {
		u = ep.st.Unwritten() // before it is sent: the caller flushes it
	}
	select {
	case f.out <- ep:
	case <-f.quit:
		return false
	}
	if ep.err != nil {
		return false
	}
	f.unwritten = append(f.unwritten, u)
	return true
}

// settle takes the caller's answers to the epochs handed over, waiting
// for them until at most n are unwritten, and drops the entities of those
// written: a read transaction begun after sees them in the store. false
// when an epoch was not written.
func (f *bulkFolder) settle(n int) bool {
	for len(f.unwritten) > 0 {
		var err error
		if len(f.unwritten) > n {
			select {
			case err = <-f.written:
			case <-f.quit:
				return false
			}
		} else {
			select {
			case err = <-f.written:
			default:
				return true
			}
		}
		if err != nil {
			return false
		}
		f.unwritten[0] = projstore.Unwritten{}
		f.unwritten = f.unwritten[1:]
	}
	return true
}

// fold folds the events of a project that batches appended, in one read
// transaction that sees what the epochs before wrote, through the
// entities of those it does not see yet (unwritten), and lists every
// event they appended in the log index. An event the fold refuses is an
// error naming its line and id.
func (f *bulkFolder) fold(batches []*bulkAppended) *foldedEpoch {
	ep := &foldedEpoch{unknown: map[string]int{}}
	ep.err = f.e.log.View(func(tx store.Tx) error {
		ep.st, _ = projstore.Writer(tx) // keeps the entities it reads
		ep.st.ReadOver(f.unwritten)
		defer ep.st.ReadOver(nil)
		var r store.Record
		for _, c := range batches {
			c.index(&ep.idx)
			for i := range c.in {
				if c.out.Duplicate[i] || c.in[i].Event.Project == "" {
					continue // a copy; or folded by addTo
				}
				r = store.Record{Seq: c.out.Seqs[i], Stream: c.in[i].Stream, Version: c.in[i].Version, Event: c.in[i].Event}
				if err := foldInto(ep.st, &r, ep.unknown); err != nil {
					return fmt.Errorf("%s: event %s: %w", c.at[i], r.ID, err)
				}
				if err := f.digest.Add(tx, &r); err != nil {
					return err
				}
			}
		}
		if trim, ok := tx.(residentTrimmer); ok {
			trim.TrimResident()
		}
		// Encoded here, the entities cost the caller's write
		// transaction their puts alone.
		return ep.st.Encode()
	})
	return ep
}

// A residentTrimmer gives back the pages of the file's memory map that a
// long read made resident (eventlog's Tx): the folder reads entities all
// over the projections, which would otherwise stay in its resident set.
type residentTrimmer interface{ TrimResident() }

// stop ends the folder, whether or not it is done, and waits for it.
func (f *bulkFolder) stop() {
	select {
	case <-f.quit:
	default:
		close(f.quit)
	}
	for range f.out {
	}
}

// importBulk appends the batches to e, empty, a transaction each with
// AppendBulk (appendBulkTx), while the folder folds them (bulkFolder);
// each transaction writes, besides its batch, the epoch the folder
// handed over since the one before, and the events of no project are
// folded into st as they are appended. The folder's and the caller's
// first error ends the import. progress is called after each batch.
func (e *Engine) importBulk(batches *parsedBatches, st *bulkState, res *ImportResult, progress func()) error {
	if err := e.acquire(); err != nil {
		return err
	}
	f := e.startFolder(st.unknown)
	defer f.stop()
	for {
		b, ok, err := batches.next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		var ep *foldedEpoch
		select {
		case ep = <-f.out:
		default:
		}
		if err := e.appendEpoch(batches, b, ep, st, res, f); err != nil {
			return err
		}
		progress()
	}
	close(f.in)
	for ep := range f.out {
		if err := e.writeEpoch(ep, f); err != nil {
			return err
		}
	}
	if !st.folded {
		return nil
	}
	return e.update(func(tx store.Tx) error { return projstore.WriteProject(tx, st.loose) })
}

// appendEpoch appends the batch b and writes ep (when not nil) in one
// transaction, then hands the batch to the folder, writing the epochs it
// hands over while it is behind.
func (e *Engine) appendEpoch(batches *parsedBatches, b []importEvent, ep *foldedEpoch, st *bulkState, res *ImportResult, f *bulkFolder) error {
	if ep != nil && ep.err != nil {
		return ep.err
	}
	var spent *bulkAppended
	select {
	case spent = <-f.spent:
	default:
	}
	var c *bulkAppended
	err := e.update(func(tx store.Tx) (err error) {
		if c, err = appendBulkTx(tx, b, spent); err != nil || ep == nil {
			return err
		}
		return ep.write(tx)
	})
	if err == nil {
		batches.done(b) // c holds what it needs of b
		err = c.addTo(res, st)
	}
	if ep != nil {
		f.answer(ep, err)
	}
	if err != nil {
		return err
	}
	select {
	case f.in <- c:
		return nil
	default: // the folder is behind: select would pick either at random
	}
	for err == nil {
		select {
		case f.in <- c:
			return nil
		case ep := <-f.out:
			err = e.writeEpoch(ep, f)
		}
	}
	return err
}

// writeEpoch writes ep in a transaction of its own.
func (e *Engine) writeEpoch(ep *foldedEpoch, f *bulkFolder) error {
	err := ep.err
	if err == nil {
		err = e.update(ep.write)
	}
	f.answer(ep, err)
	return err
}

// answer tells the folder whether ep was written, and counts its events
// of unknown types once it was.
func (f *bulkFolder) answer(ep *foldedEpoch, err error) {
	if ep.err != nil {
		return // the folder does not wait
	}
	if err == nil {
		for typ, n := range ep.unknown {
			f.unknown[typ] += n
		}
	}
	f.written <- err
}
