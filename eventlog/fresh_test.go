package eventlog

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

// TestTx_RecordFresh reads records back in the transaction that appends
// them (from what it kept, fresh.go) and after it (decoded from the
// file), and wants the same records: every field, the time in UTC, a nil
// payload nil and an empty one empty, and none changed by the caller
// reusing its payload buffer.
func TestTx_RecordFresh(t *testing.T) {
	for _, f := range []format{formatV1, formatV2} {
		t.Run(fmt.Sprintf("Format%d", f), func(t *testing.T) {
			l := mustOpen(t, Options{NoSync: true, createFormat: f})
			mustAppend(t, l, "before", Any, ev("e", "x")) // the head is not in this transaction
			local := time.FixedZone("here", 3600)
			buf := []byte("payload")
			events := []Event{
				{Type: "a", Data: buf, Project: "p", Actor: "me", Session: "s1", Correlation: testID(1)},
				{Type: "b", Data: nil, Project: "p", Time: time.Now().In(local)},
				{Type: "c", Data: []byte{}, Causation: testID(2), Schema: 3},
				{Type: "d", Data: []byte("late"), Project: "q", Time: time.Unix(10, 0)}, // before the head: raised to it
			}
			var inTx []*Record
			var inTxProject, inTxStream []*Record
			err := l.Update(func(tx *Tx) error {
				for i, e := range events {
					res, err := tx.Append(fmt.Sprint("s", i%2), Any, e)
					if err != nil {
						return err
					}
					r, err := tx.Record(res.Seqs[0])
					if err != nil {
						return err
					}
					inTx = append(inTx, r)
				}
				copy(buf, "changed") // the caller reuses its buffer
				if err := tx.ReadProject("p", 0, func(r *Record) error { inTxProject = append(inTxProject, r); return nil }); err != nil {
					return err
				}
				return tx.ReplayStream("s0", 0, func(r *Record) error {
					c := *r
					c.Data = append([]byte(nil), r.Data...)
					inTxStream = append(inTxStream, &c)
					return nil
				})
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range append(inTx, inTxProject...) {
				var stored *Record
				_ = l.View(func(tx *Tx) error { stored, err = tx.Record(r.Seq); return err })
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(r, stored) {
					t.Errorf("seq %d read in its transaction:\n %+v\nread after it:\n %+v", r.Seq, r, stored)
				}
			}
			if got, want := seqsOf(inTxProject), []uint64{2, 3}; !equalSeqs(got, want) {
				t.Errorf("ReadProject(p) in the transaction = %v, want %v", got, want)
			}
			if got, want := seqsOf(inTxStream), []uint64{2, 4}; !equalSeqs(got, want) {
				t.Errorf("ReplayStream(s0) in the transaction = %v, want %v", got, want)
			}
			if len(inTxStream) > 0 && !reflect.DeepEqual(inTxStream[0], inTx[0]) {
				t.Errorf("ReplayStream lent %+v, Record gave %+v", inTxStream[0], inTx[0])
			}
		})
	}
}

// TestTx_RecordFreshBounded appends more records in one transaction than
// it keeps (freshMaxRecords) and reads each back in it: the ones it let
// go are decoded from its pages.
func TestTx_RecordFreshBounded(t *testing.T) {
	l := mustOpen(t)
	n := freshMaxRecords + freshMaxRecords/2
	err := l.Update(func(tx *Tx) error {
		for i := range n {
			if _, err := tx.Append("s", Any, ev("e", fmt.Sprint(i))); err != nil {
				return err
			}
		}
		if kept := tx.fresh.n; kept > freshMaxRecords || kept == 0 {
			t.Errorf("the transaction kept %d records, want 1 to %d", kept, freshMaxRecords)
		}
		for seq := uint64(1); seq <= uint64(n); seq++ {
			r, err := tx.Record(seq)
			if err != nil {
				return err
			}
			if string(r.Data) != fmt.Sprint(seq-1) || r.Version != seq {
				return fmt.Errorf("Record(%d) = version %d data %q", seq, r.Version, r.Data)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
