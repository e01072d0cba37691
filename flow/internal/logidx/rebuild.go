package logidx

import (
	"bytes"
	"fmt"
	"maps"
	"slices"

	"github.com/flowctl/flowctl/flow/store"
)

// rebuildFlush is how many events Rebuild lists in memory between writes.
const rebuildFlush = 1 << 16

// Rebuild drops the index and lists every event of the log again, then
// stamps it with this Format.
func Rebuild(tx store.Tx) error {
	if err := tx.DeleteBucket(Bucket); err != nil {
		return err
	}
	var w Writer
	n := 0
	err := tx.Replay(1, 0, func(r *store.Record) error {
		w.Add(r.Seq, &r.Event)
		if n++; n%rebuildFlush == 0 {
			return w.Flush(tx)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := w.Flush(tx); err != nil {
		return err
	}
	return tx.Put(Bucket, keyVersion, stamp)
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
	want := map[string][]byte{string(keyVersion): stamp}
	for p, seqs := range w.lists {
		if p[0] == kindType {
			want[string(append([]byte{kindTypeName}, p[3:]...))] = []byte{}
		}
		for i := 0; i < len(seqs); i += ChunkSize {
			chunk := seqs[i:min(i+ChunkSize, len(seqs))]
			want[string(chunkKey([]byte(p), chunk[0]))] = encodeChunk(chunk)
		}
	}
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
	return nil
}

func differs(k []byte, what string) error {
	return &store.CorruptionError{Reason: fmt.Sprintf("%s entry %q %s (run 'flowctl rebuild')", Bucket, k, what)}
}
