package logidx

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	"github.com/flowctl/flowctl/flow/store"
)

// Rebuild drops the index and lists every event of the log again, then
// stamps it with this Format. It lists the whole log in memory (8 bytes
// a seq and list) and writes the keys in order: bbolt splits a bucket's
// nodes only at the commit, so a bucket made in one transaction is one
// node until then, and keys put out of order would each move the ones
// after them.
func Rebuild(tx store.Tx) error {
	if err := tx.DeleteBucket(Bucket); err != nil {
		return err
	}
	var w Writer
	err := tx.Replay(1, 0, func(r *store.Record) error {
		w.Add(r.Seq, &r.Event)
		return nil
	})
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
	return w.each(func(k, v []byte) error { return tx.Put(Bucket, k, v) })
}

// each calls fn with the keys and values of a new index of w's lists, in
// key order: the types listed, then the chunks.
func (w *Writer) each(fn func(k, v []byte) error) error {
	prefixes := slices.Sorted(maps.Keys(w.lists))
	for _, p := range prefixes {
		if p[0] == kindType {
			if err := fn(append([]byte{kindTypeName}, p[3:]...), []byte{}); err != nil {
				return err
			}
		}
	}
	for _, p := range prefixes {
		seqs := *w.lists[p]
		for i := 0; i < len(seqs); i += ChunkSize {
			chunk := seqs[i:min(i+ChunkSize, len(seqs))]
			if err := fn(chunkKey([]byte(p), chunk[0]), encodeChunk(chunk)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Compare derives the index from the log and compares it, byte for byte,
// with the stored one. The first difference is a *store.CorruptionError
// naming the key.
func Compare(tx store.Tx) error {
	var w Writer
	err := tx.Replay(1, 0, func(r *store.Record) error {
		w.Add(r.Seq, &r.Event)
		return nil
	})
	if err != nil {
		return err
	}
	head, _ := tx.Head()
	want := map[string][]byte{string(keyVersion): stamp, string(keyThrough): binary.BigEndian.AppendUint64(nil, head)}
	_ = w.each(func(k, v []byte) error {
		want[string(k)] = v
		return nil
	})
	err = tx.Scan(Bucket, nil, func(k, v []byte) error {
		w, ok := want[string(k)]
		if !ok || !bytes.Equal(w, v) {
			return differs(k, "is not the log's")
		}
		delete(want, string(k))
		return nil
	})
	if err != nil {
		return err
	}
	if len(want) > 0 {
		return differs([]byte(slices.Min(slices.Collect(maps.Keys(want)))), "is missing")
	}
	return w.words.Compare(tx, head)
}

func differs(k []byte, what string) error {
	return &store.CorruptionError{Reason: fmt.Sprintf("%s entry %q %s (run 'flowctl rebuild')", Bucket, k, what)}
}
