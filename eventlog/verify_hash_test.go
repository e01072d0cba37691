package eventlog

import (
	"fmt"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestVerify_HashBatches damages records' hashes at the edges of the
// batches the hash check takes beside the walk (hashCheck), alone and
// with a second damage the walk or another batch finds: Verify names the
// lowest bad seq whichever goroutine found it.
func TestVerify_HashBatches(t *testing.T) {
	const n = 2*hashBatch + 10
	forge := func(t *testing.T, path string, seq uint64) {
		rewriteRecord(t, path, seq, func(r *Record) { r.Data = []byte("forged") }, encodeKeepHash)
	}
	dropID := func(t *testing.T, path string, seq uint64) {
		rawUpdate(t, path, func(tx *bolt.Tx) error { return tx.Bucket(bucketIDs).Delete(idKey(seq)) })
	}
	for _, seq := range []uint64{1, hashBatch - 1, hashBatch, hashBatch + 1, 2 * hashBatch, 2*hashBatch + 1, n} {
		t.Run(fmt.Sprint("Hash", seq), func(t *testing.T) {
			path := newLogFile(t, n)
			forge(t, path, seq)
			wantCorruptAt(t, path, seq)
		})
	}
	tests := []struct {
		name   string
		hashes []uint64 // forged hashes
		ids    []uint64 // id index entries dropped (the walk's finding)
		want   uint64
	}{
		{"TwoBatches", []uint64{hashBatch + 1, 2*hashBatch + 5}, nil, hashBatch + 1},
		{"TwoBatchesLastFirst", []uint64{2*hashBatch + 5, hashBatch}, nil, hashBatch},
		{"WalkFirst", []uint64{2*hashBatch + 3}, []uint64{hashBatch + 7}, hashBatch + 7},
		{"HashFirst", []uint64{hashBatch - 1}, []uint64{hashBatch + 3}, hashBatch - 1},
		{"HashFirstSameBatch", []uint64{hashBatch + 2}, []uint64{hashBatch + 3}, hashBatch + 2},
		{"SameRecord", []uint64{hashBatch + 7}, []uint64{hashBatch + 7}, hashBatch + 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := newLogFile(t, n)
			for _, seq := range tt.hashes {
				forge(t, path, seq)
			}
			for _, seq := range tt.ids {
				dropID(t, path, seq)
			}
			wantCorruptAt(t, path, tt.want)
		})
	}
}

// TestHashCheck_LowestWins: the workers may find their bad hashes in any
// order; the lowest seq is kept, and only batches past it are skipped.
func TestHashCheck_LowestWins(t *testing.T) {
	for _, order := range [][]uint64{{600, 300}, {300, 600}} {
		h := &hashCheck{}
		for _, seq := range order {
			h.fail(corruptf(seq, "bad"))
		}
		if h.first == nil || h.first.Seq != 300 {
			t.Fatalf("found at %v: first = %v, want seq 300", order, h.first)
		}
		if h.past(300) || !h.past(301) {
			t.Fatalf("past(300), past(301) = %v, %v; want false, true", h.past(300), h.past(301))
		}
	}
}
