package logidx

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow/internal/searchidx"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/vmihailenco/msgpack/v5"
	"pgregory.net/rapid"
)

// killAfter is a store whose process dies after n more transactions.
type killAfter struct {
	store.Store
	n int
}

var errKilled = errors.New("killed")

func (k *killAfter) Update(fn func(store.Tx) error) error {
	if k.n == 0 {
		return errKilled
	}
	k.n--
	return k.Store.Update(fn)
}

// dumpAll is the log index's buckets and the full-text index's.
func dumpAll(t interface{ Fatal(...any) }, st store.Store) []byte {
	return dumpBuckets(t, st, Bucket, PendingBucket, searchidx.Bucket, searchidx.PendingBucket)
}

// appendEvents appends n events of a few types, actors, sessions and
// projects, half of them notes with words for the full-text index.
func appendEvents(t interface{ Fatal(...any) }, st store.Store, n int, draw func(i int, what string, of int) int) {
	words := []string{"alpha", "beta", "gamma", "delta", "epsilon"}
	types := []string{projection.TypeNoteAdded, projection.TypeTaskCreated, "x.other"}
	if n == 0 {
		return
	}
	err := st.Update(func(tx store.Tx) error {
		evs := make([]store.Event, n)
		for i := range evs {
			typ := types[draw(i, "type", len(types))]
			var ws []string
			for j := range 1 + draw(i, "words", 4) {
				ws = append(ws, words[(i+j*draw(i, "word", len(words)))%len(words)])
			}
			var data []byte
			switch typ {
			case projection.TypeNoteAdded:
				data, _ = msgpack.Marshal(projection.NoteAdded{Task: "T-1", Kind: "note", Text: strings.Join(ws, " ")})
			case projection.TypeTaskCreated:
				data, _ = msgpack.Marshal(projection.TaskCreated{ID: "T-1", Title: strings.Join(ws, " ")})
			}
			evs[i] = store.Event{Type: typ, Schema: projection.SchemaVersion, Data: data,
				Project: []string{"", "p", "q"}[draw(i, "project", 3)],
				Actor:   []string{"", "a", "b"}[draw(i, "actor", 3)],
				Session: []string{"", "s1"}[draw(i, "session", 2)]}
		}
		_, err := tx.Append("s", store.Any, evs...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSync_Upgrade: an index of an older Format is listed again by Sync
// in steps of any size, killed between any two of them and continued,
// into the bytes Rebuild writes; Compare passes.
func TestSync_Upgrade(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(0, 3*searchidx.PendingSpan+100).Draw(rt, "events")
		step := uint64(rapid.IntRange(1, 2*searchidx.PendingSpan).Draw(rt, "step"))
		kill := rapid.IntRange(0, 6).Draw(rt, "kill after")
		old := rapid.SampledFrom([]string{"format 3", "format 4", "none", "behind"}).Draw(rt, "old index")
		seed := rapid.Uint64().Draw(rt, "seed")
		st := openStore(t)
		appendEvents(rt, st, n, func(i int, what string, of int) int {
			h := seed ^ uint64(i)*0x9E3779B97F4A7C15 ^ uint64(len(what))*0xBF58476D1CE4E5B9
			h ^= h >> 29
			return int(h % uint64(of))
		})
		if err := st.Update(Rebuild); err != nil {
			rt.Fatal(err)
		}
		want := dumpAll(rt, st)
		err := st.Update(func(tx store.Tx) error {
			switch old {
			case "format 3": // an older stamp over stale lists
				if err := tx.Put(searchidx.Bucket, []byte("stale"), []byte{1}); err != nil {
					return err
				}
				if err := tx.Put(Bucket, []byte("stale"), []byte{1}); err != nil {
					return err
				}
				return tx.Put(Bucket, keyVersion, binary.BigEndian.AppendUint32(nil, 3))
			case "format 4": // every seq of the lists in chunks, none pending
				if err := formatFour(tx); err != nil {
					return err
				}
				return tx.Put(Bucket, keyVersion, binary.BigEndian.AppendUint32(nil, 4))
			case "none":
				return errors.Join(tx.DeleteBucket(Bucket), tx.DeleteBucket(PendingBucket), searchidx.Drop(tx))
			default: // an older flowctl appended: Reset leaves the index behind
				return Reset(tx)
			}
		})
		if err != nil {
			rt.Fatal(err)
		}
		if err := Sync(&killAfter{st, kill}, step); err != nil && !errors.Is(err, errKilled) {
			rt.Fatal(err)
		}
		// Between steps the index is of this Format, behind or current.
		err = st.View(func(tx store.Tx) error {
			seq, ok, err := Through(tx)
			head, _ := tx.Head()
			if err == nil && kill > 0 && (!ok || seq > head) {
				return fmt.Errorf("after %d steps: through %d, %v; head %d", kill, seq, ok, head)
			}
			return err
		})
		if err != nil {
			rt.Fatal(err)
		}
		if err := Sync(st, step); err != nil {
			rt.Fatal(err)
		}
		if err := st.View(Compare); err != nil {
			rt.Fatalf("Compare after Sync: %v", err)
		}
		if got := dumpAll(rt, st); !bytes.Equal(got, want) {
			rt.Fatalf("Sync in steps of %d wrote another index than Rebuild", step)
		}
		if err := st.View(func(tx store.Tx) error {
			if ok, err := Current(tx); !ok || err != nil {
				return fmt.Errorf("Current = %v, %v after Sync", ok, err)
			}
			return nil
		}); err != nil {
			rt.Fatal(err)
		}
	})
}

// formatFour turns tx's index into format 4's: the lists' pending seqs
// in their chunks (the full-text index is the same in both).
func formatFour(tx store.Tx) error {
	w, err := listLog(tx)
	if err != nil {
		return err
	}
	if err := tx.DeleteBucket(PendingBucket); err != nil {
		return err
	}
	for p, seqs := range w.lists {
		if err := putChunks(tx, []byte(p), *seqs); err != nil {
			return err
		}
	}
	return nil
}

// putChunks writes seqs, the whole list of prefix, as its chunks.
func putChunks(tx store.Tx, prefix []byte, seqs []uint64) error {
	for i := 0; i < len(seqs); i += ChunkSize {
		chunk := seqs[i:min(i+ChunkSize, len(seqs))]
		if err := tx.Put(Bucket, chunkKey(prefix, chunk[0]), encodeChunk(chunk)); err != nil {
			return err
		}
	}
	return nil
}
