package eventlog

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// zeroPage overwrites page id of the closed file at path with zeros.
func zeroPage(tb testing.TB, path string, id int) {
	tb.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	size := os.Getpagesize()
	if _, err := f.WriteAt(make([]byte, size), int64(id*size)); err != nil {
		tb.Fatal(err)
	}
}

// userBucketRoot fills the caller bucket "things" of the closed log at
// path with enough keys for a branch page and returns that page's id.
func userBucketRoot(tb testing.TB, path string) int {
	tb.Helper()
	var root int
	rawUpdate(tb, path, func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("things"))
		if err != nil {
			return err
		}
		for i := range 500 {
			if err := b.Put(fmt.Appendf(nil, "key-%04d", i), bytes.Repeat([]byte("v"), 64)); err != nil {
				return err
			}
		}
		return nil
	})
	db, err := bolt.Open(path, 0o644, &bolt.Options{ReadOnly: true})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	_ = db.View(func(tx *bolt.Tx) error { root = int(tx.Bucket([]byte("things")).Root()); return nil })
	return root
}

// wantDamage fails tb unless err is a *CorruptionError that names page
// id in words and carries no Go panic text.
func wantDamage(tb testing.TB, what string, err error, id int) {
	tb.Helper()
	var ce *CorruptionError
	if !errors.As(err, &ce) {
		tb.Fatalf("%s: err = %v, want a *CorruptionError", what, err)
	}
	if want := fmt.Sprintf("page %d of the file", id); !strings.Contains(err.Error(), want) {
		tb.Fatalf("%s: err = %q, want it to say %q", what, err, want)
	}
	if strings.Contains(err.Error(), "assertion") || strings.Contains(err.Error(), "panic") {
		tb.Fatalf("%s: err = %q shows Go internals", what, err)
	}
}

func TestLog_Update_DamagedPage(t *testing.T) {
	path := newLogFile(t, 5)
	id := userBucketRoot(t, path)
	zeroPage(t, path, id)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatalf("Open: %v (the damage is away from the head: the open check must not see it)", err)
	}
	err = l.Update(func(tx *Tx) error { return tx.Put("things", []byte("key-0001"), []byte("x")) })
	wantDamage(t, "Put on a zeroed page", err, id)
	err = l.View(func(tx *Tx) error { _, err := tx.Get("things", []byte("key-0001")); return err })
	wantDamage(t, "Get on a zeroed page", err, id)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(before, after) {
		t.Fatalf("the failed write changed the file (err %v)", err)
	}
}

func TestOpen_WritableRefusesDamage(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(tb testing.TB, path string)
	}{
		{"ErrCorrupt/MetaPage0", func(tb testing.TB, path string) { zeroPage(tb, path, 0) }},
		{"ErrCorrupt/MetaPage1", func(tb testing.TB, path string) { zeroPage(tb, path, 1) }},
		{"ErrCorrupt/HeadRecordChanged", func(tb testing.TB, path string) {
			rawUpdate(tb, path, func(tx *bolt.Tx) error {
				b := tx.Bucket(bucketLog)
				v := bytes.Clone(b.Get(seqKey(5)))
				v[len(v)/2] ^= 0xff
				return b.Put(seqKey(5), v)
			})
		}},
		{"ErrCorrupt/HeadRecordMissing", func(tb testing.TB, path string) {
			rawUpdate(tb, path, func(tx *bolt.Tx) error { return tx.Bucket(bucketLog).Delete(seqKey(5)) })
		}},
		{"ErrCorrupt/RecordPastHead", func(tb testing.TB, path string) {
			rawUpdate(tb, path, func(tx *bolt.Tx) error {
				return tx.Bucket(bucketLog).Put(seqKey(6), tx.Bucket(bucketLog).Get(seqKey(5)))
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := newLogFile(t, 5)
			tc.damage(t, path)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Open(path, Options{}); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("writable Open: err = %v, want ErrCorrupt", err)
			}
			l, err := Open(path, Options{ReadOnly: true})
			if err != nil {
				t.Fatalf("read-only Open: %v, want it to work (reads salvage what they can)", err)
			}
			l.Close()
			if after, err := os.ReadFile(path); err != nil || !bytes.Equal(before, after) {
				t.Fatalf("the refused open changed the file (err %v)", err)
			}
		})
	}
}

func TestDamageReason(t *testing.T) {
	for msg, want := range map[string]string{
		"assertion failed: Page expected to be: 127, but self identifies as 0": "page 127 of the file is damaged",
		"assertion failed: page 0: has unexpected type/flags: 0":               "page 0 of the file is damaged",
		"panic: invalid page type: 12: 20":                                     "page 12 of the file is damaged",
		"page 36: unreachable unfreed":                                         "page 36 of the file is damaged",
		"invalid freelist page: 0, page type is unknown<00>":                   "the file's list of free pages is damaged",
		"pgid (900) above high water mark (40)":                                "a page of the file points past the end of its pages",
		"runtime error: slice bounds out of range [:4105] with capacity 4096":  "a page of the file is damaged",
		"something else": "a page of the file is damaged",
	} {
		if got := damageReason(msg); got != want {
			t.Errorf("damageReason(%q) = %q, want %q", msg, got, want)
		}
	}
}
