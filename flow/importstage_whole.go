package flow

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/flowctl/flowctl/flow/internal/logidx"
	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
)

// onDatabase reports whether the engine's store is a database server's
// (a URL, as postgres://...) rather than a file: an import into it takes
// one transaction, whatever its size (importWhole).
func (e *Engine) onDatabase() bool {
	return e.driver != nil && e.tx == nil && e.at == nil && store.DriverName(e.path) != store.PathDriver
}

// importBulkWhole appends events to an empty store in one write
// transaction, a batch of importBatch events an AppendBulk, and folds
// them at the end, each project's from the records in hand, as a staged
// file's are folded (importBulk): on a database server a statement per event
// costs a round trip, and the fold of an empty store reads nothing. ok
// is false, and nothing is written, when the store holds events or its
// transactions are not store.BulkAppenders: the caller then appends
// event by event.
func (e *Engine) importBulkWhole(events []importEvent) (res ImportResult, ok bool, err error) {
	var unknown map[string]int
	err = e.update(func(tx store.Tx) error {
		_, bulk := tx.(store.BulkAppender)
		head, _ := tx.Head()
		if ok = bulk && head == 0; !ok {
			return nil
		}
		res, unknown = ImportResult{}, map[string]int{}
		st := newBulkState(unknown)
		byProject := map[string][]*store.Record{}
		for rest := events; len(rest) > 0; {
			n := min(len(rest), importBatch)
			c, err := appendBulkTx(tx, rest[:n], nil)
			if err == nil {
				var idx logidx.Writer
				c.index(&idx)
				err = errors.Join(idx.Flush(tx), c.addTo(&res, st))
			}
			if err != nil {
				return err
			}
			for i := range c.in {
				if p := c.in[i].Event.Project; p != "" && !c.out.Duplicate[i] {
					byProject[p] = append(byProject[p], c.record(i))
				}
			}
			rest = rest[n:]
			e.progress(res.Read, len(events))
		}
		if st.folded {
			if err := projstore.WriteProject(tx, st.loose); err != nil {
				return err
			}
		}
		for _, p := range slices.Sorted(maps.Keys(byProject)) {
			if err := foldRecords(tx, byProject[p], unknown); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || !ok {
		return ImportResult{}, ok, err
	}
	e.progress(res.Read, res.Read)
	e.warnUnknown(unknown)
	return res, true, nil
}

// foldRecords folds recs, the events of one project appended in tx in
// seq order, into the project's projections and its digest log index,
// as a staged import does (bulkFolder), and writes them in tx.
func foldRecords(tx store.Tx, recs []*store.Record, unknown map[string]int) error {
	s, _ := projstore.Writer(tx)
	var digest projstore.DigestWriter
	for _, r := range recs {
		if err := foldInto(s, r, unknown); err != nil {
			return fmt.Errorf("event %s (seq %d): %w", r.ID, r.Seq, err)
		}
		if err := digest.Add(tx, r); err != nil {
			return err
		}
	}
	if err := s.Flush(); err != nil {
		return err
	}
	return digest.Flush(tx)
}
