package flow

import (
	"bytes"
	"errors"
	"maps"
	"testing"

	"github.com/flowctl/flowctl/flow/internal/history"
	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
)

// stored is every key and value of the projection buckets and the
// rollback index.
func stored(t *testing.T, e *Engine) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := e.view(func(tx store.Tx) error {
		for _, b := range append(projstore.Buckets, history.BucketRollbacks) {
			if err := tx.Scan(b, nil, func(k, v []byte) error {
				out[b+"\x00"+string(k)] = bytes.Clone(v)
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestEngine_RebuildProject(t *testing.T) {
	e := mustOpen(t)
	if err := WriteWorkload(e, 3000, 3, 400); err != nil {
		t.Fatal(err)
	}
	// Index the rollbacks of every project, as the next command would.
	err := e.update(func(tx store.Tx) error {
		for _, p := range []string{"proj000", "proj001", "proj002"} {
			if err := history.IndexRollbacks(tx, p); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := stored(t, e)

	t.Run("OK", func(t *testing.T) {
		// Lose a task and the summary of another of proj001, and change
		// an entity of proj000 that a rebuild of proj001 must keep.
		err := e.update(func(tx store.Tx) error {
			if err := tx.Delete(projstore.BucketTasks, []byte("proj001/T-3")); err != nil {
				return err
			}
			if err := tx.Delete(projstore.BucketSummaries, projstore.SummaryRefKey(projstore.BucketTasks, "proj001/T-5")); err != nil {
				return err
			}
			// Stray entries a replay does not make, which it must drop.
			if err := tx.Put(projstore.BucketTasks, []byte("proj001/T-99999"), []byte("stray")); err != nil {
				return err
			}
			if err := tx.Put(projstore.BucketSummaries, append(projstore.SummaryStatusPrefix(projstore.BucketTasks, "proj001", "doing"), "T-99999"...), nil); err != nil {
				return err
			}
			return tx.Put(projstore.BucketMeta, []byte("proj000-marker"), []byte("kept"))
		})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := e.RebuildProject("proj001")
		if err != nil {
			t.Fatal(err)
		}
		if rep.Events == 0 || rep.Events >= 3000 {
			t.Errorf("RebuildProject folded %d events, want proj001's alone", rep.Events)
		}
		got := stored(t, e)
		if string(got[projstore.BucketMeta+"\x00proj000-marker"]) != "kept" {
			t.Error("RebuildProject(proj001) changed what is not proj001's")
		}
		delete(got, projstore.BucketMeta+"\x00proj000-marker")
		if err := e.update(func(tx store.Tx) error { return tx.Delete(projstore.BucketMeta, []byte("proj000-marker")) }); err != nil {
			t.Fatal(err)
		}
		// proj001's rollback index is dropped, to be filled by its next
		// command; the rest is as before, byte for byte.
		for k := range want {
			if bytes.HasPrefix([]byte(k), []byte(history.BucketRollbacks+"\x00")) && bytes.Contains([]byte(k), []byte("proj001")) {
				delete(want, k)
			}
		}
		if !maps.EqualFunc(want, got, bytes.Equal) {
			for k := range want {
				if !bytes.Equal(want[k], got[k]) {
					t.Errorf("%q: got %x, want %x", k, got[k], want[k])
				}
			}
			for k := range got {
				if _, ok := want[k]; !ok {
					t.Errorf("%q: got %x, want none", k, got[k])
				}
			}
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		if _, err := e.RebuildProject("nope"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("RebuildProject(nope) = %v, want ErrNotFound", err)
		}
	})
}
