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
	if err := one.Update(func(tx *Tx) error { return tx.mergeTail() }); err != nil {
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
