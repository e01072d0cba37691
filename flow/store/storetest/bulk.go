package storetest

import (
	"errors"
	"reflect"
	"testing"

	"github.com/flowctl/flowctl/flow/store"
)

// testBulk: AppendBulk (store.BulkAppender, optional) stores what an
// Append per event stores, record for record and hash for hash: streams
// continued across calls, duplicates of the file and of the call itself
// skipped, a version that does not continue its stream refused with the
// index of its event.
func (s *suite) testBulk(t *testing.T) {
	bulkSt, _ := s.fresh(t)
	var bulk store.BulkAppender
	view(t, bulkSt, func(tx store.Tx) error {
		bulk, _ = tx.(store.BulkAppender)
		return nil
	})
	if bulk == nil {
		t.Skip("the store's Tx is not a store.BulkAppender")
	}
	oneSt, _ := s.fresh(t)
	var events []store.BulkEvent
	for n := range byte(40) {
		e := full(n + 1)
		events = append(events, store.BulkEvent{Stream: []string{"a", "b", "c"}[n%3], Version: uint64(n/3) + 1, Event: e})
	}
	first, second := events[:10], append(append([]store.BulkEvent{}, events[5:]...), events[7], events[12])
	for _, part := range [][]store.BulkEvent{first, second} {
		update(t, oneSt, func(tx store.Tx) error {
			for _, e := range part {
				if _, err := tx.Append(e.Stream, store.Exact(e.Version-1), e.Event); err != nil {
					return err
				}
			}
			return nil
		})
		var got store.BulkAppended
		update(t, bulkSt, func(tx store.Tx) (err error) {
			got, err = tx.(store.BulkAppender).AppendBulk(part)
			return err
		})
		if len(got.Seqs) != len(part) {
			t.Fatalf("AppendBulk reported %d events of %d", len(got.Seqs), len(part))
		}
	}
	var got store.BulkAppended
	update(t, bulkSt, func(tx store.Tx) (err error) {
		got, err = tx.(store.BulkAppender).AppendBulk(events[:2])
		return err
	})
	if !reflect.DeepEqual(got, store.BulkAppended{Seqs: []uint64{1, 2}, Duplicate: []bool{true, true}}) {
		t.Errorf("AppendBulk of stored events = %+v, want duplicates at seqs 1 and 2", got)
	}
	if a, b := all(t, oneSt), all(t, bulkSt); !reflect.DeepEqual(a, b) || len(a) != len(events) {
		t.Errorf("AppendBulk stored %d records, an Append each %d, or other ones", len(b), len(a))
	}
	for stream, want := range map[string]uint64{"a": 14, "b": 13, "c": 13} {
		view(t, bulkSt, func(tx store.Tx) error {
			if v, _ := tx.StreamVersion(stream); v != want {
				t.Errorf("stream %s at version %d, want %d", stream, v, want)
			}
			return nil
		})
	}
	h, _ := head(t, bulkSt)
	err := bulkSt.Update(func(tx store.Tx) error {
		_, err := tx.(store.BulkAppender).AppendBulk([]store.BulkEvent{
			{Stream: "d", Version: 1, Event: ev("t.a", "x")},
			{Stream: "a", Version: 14, Event: ev("t.a", "y")},
		})
		return err
	})
	var be *store.BulkError
	if !errors.As(err, &be) || be.Index != 1 || !errors.Is(err, store.ErrConflict) {
		t.Errorf("AppendBulk at a taken version = %v, want a *BulkError at index 1 that is ErrConflict", err)
	}
	if n, _ := head(t, bulkSt); n != h {
		t.Errorf("a refused AppendBulk moved the head from %d to %d", h, n)
	}
}
