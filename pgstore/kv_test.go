package pgstore

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/internal/pgtest"
	"pgregory.net/rapid"
)

// TestKV_Model: whatever a transaction does to the buckets, in any order
// (puts, deletes and dropped buckets held back, Gets answered from reads
// ahead, Scans and Lasts sent after the writes), every read sees what a
// map would hold, in that transaction and in the next.
func TestKV_Model(t *testing.T) {
	st, err := Driver{}.Open(pgtest.DSN(t), store.Options{Create: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	model := map[kvKey][]byte{}
	buckets := []string{"a", "b"}
	keyGen := rapid.SampledFrom([]string{"k", "k1", "k10", "k2", "k20", "k3", "m", "m\x00", "z"})
	rapid.Check(t, func(rt *rapid.T) {
		want := maps.Clone(model)
		err := st.Update(func(tx store.Tx) error {
			for i := range rapid.IntRange(1, 40).Draw(rt, "ops") {
				b := rapid.SampledFrom(buckets).Draw(rt, fmt.Sprint("bucket", i))
				k := keyGen.Draw(rt, fmt.Sprint("key", i))
				switch op := rapid.IntRange(0, 9).Draw(rt, fmt.Sprint("op", i)); {
				case op < 4:
					v := []byte(fmt.Sprint(i))
					if err := tx.Put(b, []byte(k), v); err != nil {
						return err
					}
					want[kvKey{b, k}] = v
				case op < 6:
					if err := tx.Delete(b, []byte(k)); err != nil {
						return err
					}
					delete(want, kvKey{b, k})
				case op == 6 && rapid.IntRange(0, 5).Draw(rt, fmt.Sprint("drop", i)) == 0:
					if err := tx.DeleteBucket(b); err != nil {
						return err
					}
					for key := range want {
						if key.bucket == b {
							delete(want, key)
						}
					}
				default:
					if err := checkReads(tx, want, b, k); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			rt.Fatal(err)
		}
		model = want
		if err := st.View(func(tx store.Tx) error {
			for _, b := range buckets {
				for _, k := range []string{"k", "k1", "k2", "m", "z"} {
					if err := checkReads(tx, want, b, k); err != nil {
						return err
					}
				}
			}
			return nil
		}); err != nil {
			rt.Fatal(err)
		}
	})
}

// checkReads compares Get(k), Scan(prefix k) and Last(max k) of bucket b
// with want.
func checkReads(tx store.Tx, want map[kvKey][]byte, b, k string) error {
	got, err := tx.Get(b, []byte(k))
	if err != nil {
		return err
	}
	if w, ok := want[kvKey{b, k}]; !bytes.Equal(got, w) || (got == nil) != !ok {
		return fmt.Errorf("Get(%s, %q) = %q, want %q", b, k, got, w)
	}
	var keys []string
	for key := range want {
		if key.bucket == b && strings.HasPrefix(key.key, k) {
			keys = append(keys, key.key)
		}
	}
	slices.Sort(keys)
	var scanned []string
	if err := tx.Scan(b, []byte(k), func(key, v []byte) error {
		if !bytes.Equal(v, want[kvKey{b, string(key)}]) {
			return fmt.Errorf("Scan(%s, %q): %q = %q, want %q", b, k, key, v, want[kvKey{b, string(key)}])
		}
		scanned = append(scanned, string(key))
		return nil
	}); err != nil {
		return err
	}
	if !slices.Equal(scanned, keys) {
		return fmt.Errorf("Scan(%s, %q) = %q, want %q", b, k, scanned, keys)
	}
	lk, _, err := tx.Last(b, nil, []byte(k))
	if err != nil {
		return err
	}
	var last string
	for key := range want {
		if key.bucket == b && key.key <= k && key.key > last {
			last = key.key
		}
	}
	if string(lk) != last {
		return fmt.Errorf("Last(%s, %q) = %q, want %q", b, k, lk, last)
	}
	return nil
}
