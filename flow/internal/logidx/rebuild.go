package logidx

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/flowctl/flowctl/flow/store"
)

// Rebuild drops the index and lists every event of the log again, then
// stamps it with this Format. It lists the whole log in memory (8 bytes
// a seq and list) and writes the keys in order: bbolt splits a bucket's
// nodes only at the commit, so a bucket made in one transaction is one
// node until then, and keys put out of order would each move the ones
// after them.
func Rebuild(tx store.Tx) error {
	if err := errors.Join(tx.DeleteBucket(Bucket), tx.DeleteBucket(PendingBucket)); err != nil {
		return err
	}
	w, err := listLog(tx)
	if err != nil {
		return err
	}
	head, _ := tx.Head()
	if err := tx.Put(Bucket, keyThrough, binary.BigEndian.AppendUint64(nil, head)); err != nil {
		return err
	}
	if err := tx.Put(Bucket, keyVersion, stamp); err != nil {
		return err
	}
	if err := w.words.Rebuild(tx, head); err != nil {
		return err
	}
	return w.each(head, tx.Put)
}

// each calls fn with the buckets, keys and values of a new index of w's
// lists, of the log up to through, in key order: the types listed, the
// chunks, then the pending entries.
func (w *Writer) each(through uint64, fn func(bucket string, k, v []byte) error) error {
	cut := pendingCut(through)
	prefixes := slices.Sorted(maps.Keys(w.lists))
	for _, p := range prefixes {
		if p[0] == kindType {
			if err := fn(Bucket, append([]byte{kindTypeName}, p[3:]...), []byte{}); err != nil {
				return err
			}
		}
	}
	for _, p := range prefixes {
		seqs := *w.lists[p]
		seqs = seqs[:sort.Search(len(seqs), func(i int) bool { return seqs[i] > cut })]
		for i := 0; i < len(seqs); i += ChunkSize {
			chunk := seqs[i:min(i+ChunkSize, len(seqs))]
			if err := fn(Bucket, chunkKey([]byte(p), chunk[0]), encodeChunk(chunk)); err != nil {
				return err
			}
		}
	}
	for _, p := range prefixes {
		seqs := *w.lists[p]
		if seqs = seqs[sort.Search(len(seqs), func(i int) bool { return seqs[i] > cut }):]; len(seqs) > 0 {
			if err := fn(PendingBucket, []byte(p), encodePending(seqs)); err != nil {
				return err
			}
		}
	}
	return nil
}

// listLog lists every event of tx's log in a Writer.
func listLog(tx store.Tx) (*Writer, error) {
	var w Writer
	err := tx.Replay(1, 0, func(r *store.Record) error {
		w.Add(r.Seq, &r.Event)
		return nil
	})
	return &w, err
}

// Compare derives the index from the log and compares it, byte for byte,
// with the stored one. The first difference is a *store.CorruptionError
// naming the key.
func Compare(tx store.Tx) error {
	w, err := listLog(tx)
	if err != nil {
		return err
	}
	head, _ := tx.Head()
	want := map[string]map[string][]byte{
		Bucket:        {string(keyVersion): stamp, string(keyThrough): binary.BigEndian.AppendUint64(nil, head)},
		PendingBucket: {},
	}
	_ = w.each(head, func(bucket string, k, v []byte) error {
		want[bucket][string(k)] = v
		return nil
	})
	for _, bucket := range []string{Bucket, PendingBucket} {
		if err := compareBucket(tx, bucket, want[bucket]); err != nil {
			return err
		}
	}
	return w.words.Compare(tx, head)
}

// compareBucket compares bucket's keys and values with want's, which it
// empties.
func compareBucket(tx store.Tx, bucket string, want map[string][]byte) error {
	err := tx.Scan(bucket, nil, func(k, v []byte) error {
		w, ok := want[string(k)]
		if !ok || !bytes.Equal(w, v) {
			return differsIn(bucket, k, "is not the log's")
		}
		delete(want, string(k))
		return nil
	})
	if err != nil {
		return err
	}
	if len(want) > 0 {
		return differsIn(bucket, []byte(slices.Min(slices.Collect(maps.Keys(want)))), "is missing")
	}
	return nil
}

func differs(k []byte, what string) error { return differsIn(Bucket, k, what) }

func differsIn(bucket string, k []byte, what string) error {
	return &store.CorruptionError{Reason: fmt.Sprintf("%s entry %q %s (run 'flowctl rebuild')", bucket, k, what)}
}
