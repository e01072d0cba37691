package eventlog

import (
	"fmt"
	"maps"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestAppendBulk_Indexes: AppendBulk leaves the indexes byte for byte as
// an Append per event does, chunks of streams and projects filled across
// calls and started anew past 64 entries, the tail of earlier Appends
// merged; both files verify (on cleanup).
func TestAppendBulk_Indexes(t *testing.T) {
	one, bulk := mustOpen(t), mustOpen(t)
	var events []BulkEvent
	versions := map[string]uint64{}
	for n := range uint64(400) {
		stream := fmt.Sprintf("s%d", n%3+n%7/5)
		versions[stream]++
		e := evID(n+1, "t.a", fmt.Sprint(n))
		e.Project = fmt.Sprintf("p%d", n%2)
		if n%11 == 0 {
			e.Project = ""
		}
		events = append(events, BulkEvent{Stream: stream, Version: versions[stream], Event: e})
	}
	for _, part := range [][2]int{{0, 5}, {5, 100}, {100, 101}, {101, 330}, {330, 400}} {
		err := one.Update(func(tx *Tx) error {
			for _, e := range events[part[0]:part[1]] {
				if _, err := tx.Append(e.Stream, Exact(e.Version-1), e.Event); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if part[0] == 0 { // the first part by Appends in both: a tail to merge
			err = bulk.Update(func(tx *Tx) error {
				for _, e := range events[:5] {
					if _, err := tx.Append(e.Stream, Exact(e.Version-1), e.Event); err != nil {
						return err
					}
				}
				return nil
			})
		} else {
			err = bulk.Update(func(tx *Tx) error {
				_, err := tx.AppendBulk(events[part[0]:part[1]])
				return err
			})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := one.Update(func(tx *Tx) error { return tx.spillTail() }); err != nil {
		t.Fatal(err)
	}
	for _, b := range [][]byte{bucketLog, bucketIDs, bucketStreamIdx, bucketProjIdx, bucketTail} {
		if a, c := dumpBucket(t, one, b), dumpBucket(t, bulk, b); !maps.Equal(a, c) {
			t.Errorf("bucket %s: %d keys by Append, %d by AppendBulk, or other values", b, len(a), len(c))
		}
	}
}

func dumpBucket(t *testing.T, l *Log, name []byte) map[string]string {
	out := map[string]string{}
	err := l.view(func(btx *bolt.Tx) error {
		return btx.Bucket(name).ForEach(func(k, v []byte) error {
			out[string(k)] = string(v)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAppendBulk_InOneTransaction: Appends before and after an AppendBulk
// in the same transaction see the streams where it left them, and the
// file verifies (on cleanup): the transaction's own index tail is merged
// before the bulk append, and the heads it kept are read again after.
func TestAppendBulk_InOneTransaction(t *testing.T) {
	l := mustOpen(t)
	err := l.Update(func(tx *Tx) error {
		if _, err := tx.Append("s1", Exact(0), evID(1, "t.a", "1")); err != nil {
			return err
		}
		bulk := []BulkEvent{{Stream: "s1", Version: 2, Event: evID(2, "t.a", "2")}, {Stream: "s2", Version: 1, Event: evID(3, "t.a", "3")}}
		if _, err := tx.AppendBulk(bulk); err != nil {
			return err
		}
		if _, err := tx.Append("s1", Exact(2), evID(4, "t.a", "4")); err != nil {
			return err
		}
		_, err := tx.Append("s2", Exact(1), evID(5, "t.a", "5"))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	err = l.View(func(tx *Tx) error {
		for stream, want := range map[string]uint64{"s1": 3, "s2": 2} {
			if v, _ := tx.StreamVersion(stream); v != want {
				t.Errorf("%s at version %d, want %d", stream, v, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
