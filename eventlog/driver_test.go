package eventlog

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/flowctl/flowctl/flow/store"
)

func TestDriver_Open(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "flow.db")
	t.Run("ErrNotExist", func(t *testing.T) {
		if _, err := store.Open(path, store.Options{}); !errors.Is(err, store.ErrNotExist) {
			t.Fatalf("Open = %v, want ErrNotExist", err)
		}
	})
	t.Run("OK", func(t *testing.T) {
		st, err := store.Open(path, store.Options{Create: true, NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		err = st.Update(func(tx store.Tx) error {
			_, err := tx.Append("s", store.NoStream, store.Event{Type: "t"})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := st.(store.Verifier).Verify()
		if err != nil || rep.HeadSeq != 1 {
			t.Fatalf("Verify = %+v, %v; want head 1", rep, err)
		}
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		d, _ := store.Lookup(path)
		crep, err := d.(store.Compacter).Compact(path, store.Options{NoSync: true})
		if err != nil || crep.Verified.HeadSeq != 1 {
			t.Fatalf("Compact = %+v, %v", crep, err)
		}
		var n int
		srep, err := d.(store.Salvager).Salvage(path, store.Options{}, func(*store.Record) error { n++; return nil })
		if err != nil || srep.Kept != 1 || n != 1 {
			t.Fatalf("Salvage = %+v, %v, %d records", srep, err, n)
		}
	})
}
