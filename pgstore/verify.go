package pgstore

import (
	"fmt"

	"github.com/flowctl/flowctl/flow/store"
)

// Verify reads every record in seq order in one snapshot and checks its
// hash, the chain, that seqs run 1..head without a gap, the head row, and
// the stream heads against the records.
func (s *Store) Verify() (store.VerifyReport, error) {
	var rep store.VerifyReport
	err := s.View(func(stx store.Tx) error {
		tx := stx.(*Tx)
		type head struct{ version, seq uint64 }
		streams := map[string]head{}
		projects := map[string]bool{}
		var last uint64
		var prev store.Hash
		err := tx.ReadRange(1, 0, func(r *store.Record) error {
			if r.Seq != last+1 {
				return &store.CorruptionError{Seq: last + 1, Reason: "the record is missing"}
			}
			if r.Prev != prev {
				return &store.CorruptionError{Seq: r.Seq, Reason: "the record does not chain from the one before it"}
			}
			if h := streams[r.Stream]; r.Version != h.version+1 {
				return &store.CorruptionError{Seq: r.Seq, Reason: fmt.Sprintf("stream %q jumps from version %d to %d", r.Stream, h.version, r.Version)}
			}
			streams[r.Stream] = head{r.Version, r.Seq}
			if r.Project != "" {
				projects[r.Project] = true
			}
			last, prev = r.Seq, r.Hash
			if s.progress != nil {
				s.progress(last, tx.head)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if last != tx.head || prev != tx.headHash {
			return &store.CorruptionError{Seq: last + 1, Reason: fmt.Sprintf("the head row names seq %d, the records end at %d", tx.head, last)}
		}
		rows, err := tx.q.Query(tx.ctx, `SELECT stream, version, seq FROM flow_streams`)
		if err != nil {
			return err
		}
		n := 0
		for rows.Next() {
			var name string
			var v, sq int64
			if err := rows.Scan(&name, &v, &sq); err != nil {
				rows.Close()
				return err
			}
			if h := streams[name]; h.version != uint64(v) || h.seq != uint64(sq) {
				rows.Close()
				return &store.CorruptionError{Reason: fmt.Sprintf("the head of stream %q is version %d at seq %d, its records end at %d, seq %d", name, v, sq, h.version, h.seq)}
			}
			n++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if n != len(streams) {
			return &store.CorruptionError{Reason: fmt.Sprintf("%d stream heads for %d streams", n, len(streams))}
		}
		rep = store.VerifyReport{HeadSeq: last, HeadHash: prev, Streams: len(streams), Projects: len(projects)}
		return nil
	})
	return rep, err
}
