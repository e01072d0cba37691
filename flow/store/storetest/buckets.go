package storetest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/flowctl/flowctl/flow/store"
)

// engineBuckets are the bucket names package flow writes: a backend
// must not keep them for itself.
var engineBuckets = []string{
	"proj_project", "proj_plan", "proj_task", "proj_approval", "proj_exec", "proj_checkpoint",
	"proj_meta", "proj_summary", "idem", "rollback_idx", "snapshots", "snapshot_marks",
	"snapshot_sums",
}

func (s *suite) testBuckets(t *testing.T) {
	st, _ := s.fresh(t)
	keys := []string{"a", "ab", "abc", "b", "ba", "c\x00", "c\xff"}
	update(t, st, func(tx store.Tx) error {
		for i := len(keys) - 1; i >= 0; i-- { // out of order
			if err := tx.Put("b1", []byte(keys[i]), []byte("v"+keys[i])); err != nil {
				return err
			}
		}
		return nil
	})
	t.Run("Get", func(t *testing.T) {
		view(t, st, func(tx store.Tx) error {
			for _, c := range []struct{ bucket, key, want string }{
				{"b1", "ab", "vab"}, {"b1", "c\xff", "vc\xff"}, {"b1", "x", ""}, {"nosuch", "a", ""},
			} {
				v, err := tx.Get(c.bucket, []byte(c.key))
				if err != nil || string(v) != c.want || (c.want == "") != (v == nil) {
					t.Errorf("Get(%s, %q) = %q, %v; want %q", c.bucket, c.key, v, err, c.want)
				}
			}
			return nil
		})
	})
	t.Run("Scan", func(t *testing.T) {
		for _, c := range []struct {
			prefix string
			want   []string
		}{
			{"", keys}, {"a", keys[:3]}, {"ab", keys[1:3]}, {"c", keys[5:]}, {"d", nil},
		} {
			got := scan(t, st, "b1", []byte(c.prefix))
			if !slices.Equal(got, c.want) {
				t.Errorf("Scan(%q) = %q, want %q", c.prefix, got, c.want)
			}
		}
		if got := scan(t, st, "nosuch", nil); got != nil {
			t.Errorf("Scan of a missing bucket = %q, want none", got)
		}
		calls := 0
		err := st.View(func(tx store.Tx) error {
			return tx.Scan("b1", nil, func(k, v []byte) error {
				if calls++; calls == 2 {
					return store.ErrStop
				}
				return nil
			})
		})
		if err != nil || calls != 2 {
			t.Errorf("Scan stopped at the second key: %v after %d calls; want nil after 2", err, calls)
		}
		err = st.View(func(tx store.Tx) error {
			return tx.Scan("b1", nil, func(k, v []byte) error { return errFail })
		})
		if !errors.Is(err, errFail) {
			t.Errorf("Scan with a failing fn = %v, want fn's error", err)
		}
	})
	t.Run("Last", func(t *testing.T) {
		for _, c := range []struct{ prefix, max, want string }{
			{"a", "a\xff", "abc"}, {"a", "abc", "abc"}, {"a", "abb", "ab"}, {"a", "a", "a"},
			{"b", "b\xff", "ba"}, {"b", "az", ""}, {"", "zz", "c\xff"}, {"c", "c\x00", "c\x00"}, {"d", "d\xff", ""},
		} {
			var k, v []byte
			view(t, st, func(tx store.Tx) (err error) {
				k, v, err = tx.Last("b1", []byte(c.prefix), []byte(c.max))
				return err
			})
			if string(k) != c.want || (c.want == "") != (k == nil) || (k != nil && string(v) != "v"+c.want) {
				t.Errorf("Last(%q, %q) = %q, %q; want %q", c.prefix, c.max, k, v, c.want)
			}
		}
		view(t, st, func(tx store.Tx) error {
			if k, v, err := tx.Last("nosuch", nil, []byte("z")); k != nil || v != nil || err != nil {
				t.Errorf("Last of a missing bucket = %q, %q, %v", k, v, err)
			}
			return nil
		})
	})
	t.Run("Copies", func(t *testing.T) {
		var got, k, v, sk, sv []byte
		view(t, st, func(tx store.Tx) (err error) {
			if got, err = tx.Get("b1", []byte("a")); err != nil {
				return err
			}
			if k, v, err = tx.Last("b1", nil, []byte("b")); err != nil {
				return err
			}
			return tx.Scan("b1", []byte("ba"), func(kk, vv []byte) error { sk, sv = kk, vv; return nil })
		})
		for _, b := range [][]byte{got, k, v, sk, sv} {
			for i := range b {
				b[i] = '!'
			}
		}
		update(t, st, func(tx store.Tx) error { // pages move under values still held
			for i := range 200 {
				if err := tx.Put("b2", binary.BigEndian.AppendUint32(nil, uint32(i)), bytes.Repeat([]byte{byte(i)}, 512)); err != nil {
					return err
				}
			}
			return nil
		})
		if got := scan(t, st, "b1", nil); !slices.Equal(got, keys) {
			t.Errorf("after writing into the values returned, b1 holds %q, want %q", got, keys)
		}
		if v, _ := get(t, st, "b1", "b"); string(v) != "vb" {
			t.Errorf("Get(b1, b) = %q, want vb", v)
		}
	})
	t.Run("Delete", func(t *testing.T) {
		update(t, st, func(tx store.Tx) error {
			if err := tx.Put("b3", []byte("k"), []byte("v")); err != nil {
				return err
			}
			for _, err := range []error{
				tx.Delete("b1", []byte("ab")), tx.Delete("b1", []byte("missing")), tx.Delete("nosuch", []byte("k")),
				tx.DeleteBucket("b3"), tx.DeleteBucket("nosuch"),
			} {
				if err != nil {
					return err
				}
			}
			if v, err := tx.Get("b3", []byte("k")); v != nil || err != nil {
				t.Errorf("Get in a bucket deleted in this Update = %q, %v", v, err)
			}
			return nil
		})
		if got, want := scan(t, st, "b1", []byte("a")), []string{"a", "abc"}; !slices.Equal(got, want) {
			t.Errorf("after Delete(ab): %q, want %q", got, want)
		}
		if got := scan(t, st, "b3", nil); got != nil {
			t.Errorf("a deleted bucket holds %q", got)
		}
		update(t, st, func(tx store.Tx) error { return tx.Put("b3", []byte("again"), []byte("v")) })
		if got := scan(t, st, "b3", nil); !slices.Equal(got, []string{"again"}) {
			t.Errorf("a bucket made again holds %q, want only its new key", got)
		}
	})
	t.Run("Names", func(t *testing.T) {
		for _, name := range append([]string{""}, s.b.Reserved...) {
			err := st.Update(func(tx store.Tx) error {
				for _, err := range []error{
					tx.Put(name, []byte("k"), []byte("v")), tx.Delete(name, []byte("k")), tx.DeleteBucket(name),
					firstErr(tx.Get(name, []byte("k"))), tx.Scan(name, nil, func(k, v []byte) error { return nil }),
				} {
					if !errors.Is(err, store.ErrInvalid) {
						t.Errorf("bucket %q: %v, want ErrInvalid", name, err)
					}
				}
				return nil
			})
			if err != nil {
				t.Errorf("Update: %v", err)
			}
		}
		update(t, st, func(tx store.Tx) error {
			for _, name := range engineBuckets {
				if err := tx.Put(name, []byte("k"), []byte(name)); err != nil {
					t.Errorf("Put in the engine's bucket %s: %v", name, err)
				}
			}
			return nil
		})
		for _, name := range engineBuckets {
			if v, _ := get(t, st, name, "k"); string(v) != name {
				t.Errorf("Get(%s, k) = %q, want %q", name, v, name)
			}
		}
	})
	t.Run("ErrReadOnly", func(t *testing.T) {
		view(t, st, func(tx store.Tx) error {
			for _, err := range []error{
				tx.Put("b1", []byte("k"), []byte("v")), tx.Put("fresh", []byte("k"), []byte("v")),
				tx.Delete("b1", []byte("a")), tx.DeleteBucket("b1"),
			} {
				if !errors.Is(err, store.ErrReadOnly) {
					t.Errorf("a write in a View = %v, want ErrReadOnly", err)
				}
			}
			return nil
		})
	})
}

func firstErr(_ []byte, err error) error { return err }

// scan returns the keys of bucket that start with prefix, nil for none.
func scan(t testing.TB, st store.Store, bucket string, prefix []byte) []string {
	t.Helper()
	var keys []string
	view(t, st, func(tx store.Tx) error {
		return tx.Scan(bucket, prefix, func(k, v []byte) error {
			if string(v) != "v"+string(k) && bucket == "b1" {
				t.Errorf("Scan: %q holds %q, want %q", k, v, "v"+string(k))
			}
			keys = append(keys, string(k))
			return nil
		})
	})
	return keys
}

// get returns the value of key in bucket.
func get(t testing.TB, st store.Store, bucket, key string) (v []byte, err error) {
	t.Helper()
	view(t, st, func(tx store.Tx) error {
		v, err = tx.Get(bucket, []byte(key))
		return nil
	})
	return v, err
}

// The snapshot bucket as package flow lays it out (flow/internal/snapstore):
// key = uint16 BE length of the scope, the scope, uint64 BE seq of the
// state; value = a FLOWSNAP blob, up to megabytes. The engine finds a
// snapshot with Last(prefix of the scope, key of the scope at a seq).
const bucketSnapshots = "snapshots"

func snapshotPrefix(scope string) []byte {
	return append(binary.BigEndian.AppendUint16(nil, uint16(len(scope))), scope...)
}

func snapshotKey(scope string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(snapshotPrefix(scope), seq)
}

// blob returns a snapshot-like blob of n bytes, the same for the same n
// and seed.
func blob(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, uint64(n)))
	b := make([]byte, n)
	copy(b, "FLOWSNAP")
	for i := 8; i < n; i++ {
		b[i] = byte(r.Uint32())
	}
	return b
}

func (s *suite) testSnapshots(t *testing.T) {
	st, dsn := s.fresh(t)
	type snap struct {
		scope string
		seq   uint64
		size  int
	}
	snaps := []snap{
		{"alpha", 3000, 300 << 10}, {"alpha", 10, 100}, {"alpha", 200, 70 << 10},
		{"alphabet", 50, 4 << 10}, {"", 7, 1 << 10}, {"b", 1 << 40, 10},
	}
	update(t, st, func(tx store.Tx) error {
		if _, err := tx.Append("project/alpha", store.Any, ev("t.a", "x")); err != nil {
			return err
		}
		for _, sn := range snaps {
			if err := tx.Put(bucketSnapshots, snapshotKey(sn.scope, sn.seq), blob(sn.size, sn.seq)); err != nil {
				return err
			}
		}
		return nil
	})
	st.Close()
	st = s.open(t, dsn, true)
	view(t, st, func(tx store.Tx) error {
		for _, sn := range snaps {
			if v, err := tx.Get(bucketSnapshots, snapshotKey(sn.scope, sn.seq)); err != nil || !bytes.Equal(v, blob(sn.size, sn.seq)) {
				t.Errorf("snapshot %q@%d: %d bytes back (%v), want the %d put", sn.scope, sn.seq, len(v), err, sn.size)
			}
		}
		for _, c := range []struct {
			scope   string
			at, got uint64 // got 0: none
		}{
			{"alpha", 2999, 200}, {"alpha", 3000, 3000}, {"alpha", 1 << 62, 3000}, {"alpha", 9, 0},
			{"alphabet", 100, 50}, {"", 1000, 7}, {"b", 1<<40 - 1, 0}, {"c", 1 << 62, 0},
		} {
			k, v, err := tx.Last(bucketSnapshots, snapshotPrefix(c.scope), snapshotKey(c.scope, c.at))
			want := []byte(nil)
			if c.got != 0 {
				want = snapshotKey(c.scope, c.got)
			}
			if err != nil || !bytes.Equal(k, want) || (k != nil && !bytes.HasPrefix(v, []byte("FLOWSNAP"))) {
				t.Errorf("the snapshot of %q at %d: key %x (%v), want %x", c.scope, c.at, k, err, want)
			}
		}
		var seqs []uint64
		err := tx.Scan(bucketSnapshots, snapshotPrefix("alpha"), func(k, v []byte) error {
			seqs = append(seqs, binary.BigEndian.Uint64(k[len(k)-8:]))
			return nil
		})
		if err != nil || len(seqs) != 3 || seqs[0] != 10 || seqs[1] != 200 || seqs[2] != 3000 {
			t.Errorf("Scan of alpha's snapshots = %v, %v; want 10, 200, 3000", seqs, err)
		}
		return nil
	})
}
