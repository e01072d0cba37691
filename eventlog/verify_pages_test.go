package eventlog

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
	"pgregory.net/rapid"
)

// readPage returns page id of the closed file at path.
func readPage(tb testing.TB, path string, id int) []byte {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	p := make([]byte, os.Getpagesize())
	if _, err := f.ReadAt(p, int64(id*len(p))); err != nil {
		tb.Fatal(err)
	}
	return p
}

// writePage writes p as page id of the closed file at path.
func writePage(tb testing.TB, path string, id int, p []byte) {
	tb.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(p, int64(id*len(p))); err != nil {
		tb.Fatal(err)
	}
}

// freelistPage returns the page of the free list of the closed file at
// path, as its newest meta names it.
func freelistPage(tb testing.TB, path string) int {
	tb.Helper()
	var best, txid uint64
	for id := range 2 {
		m := readPage(tb, path, id)[pageHeaderSize:]
		if t := le.Uint64(m[metaTxidOff:]); t >= txid {
			best, txid = le.Uint64(m[metaFreelistOff:]), t
		}
	}
	return int(best)
}

// checkPagesFile runs the shape check and the page check on the file at
// path, as Verify runs them, without the record walk; shaped says whether
// the shape check passed.
func checkPagesFile(path string) (shaped bool, err error) {
	l, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		return false, err
	}
	defer l.Close()
	err = l.view(func(btx *bolt.Tx) error {
		pg := l.newPager(btx)
		if err := l.checkShape(btx, pg); err != nil {
			return &CorruptionError{Reason: damageReason(err.Error())}
		}
		shaped = true
		return l.checkPages(btx)
	})
	return shaped, err
}

// boltCheck runs bbolt's Tx.Check on the file at path, in a handle of its
// own, and returns its first finding.
func boltCheck(path string) (err error) {
	db, err := bolt.Open(path, 0o644, &bolt.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer db.Close()
	return db.View(func(tx *bolt.Tx) error {
		var first error
		for err := range tx.Check() {
			if first == nil {
				first = err
			}
		}
		return first
	})
}

// TestVerify_Pages: damage the shape check leaves to the page check (a
// leaf page, the order of keys, the free list) fails Verify naming the
// page, as bbolt's check did.
func TestVerify_Pages(t *testing.T) {
	t.Run("OK/Clean", func(t *testing.T) {
		path := newLogFile(t, 600)
		userBucketRoot(t, path)
		if _, err := checkPagesFile(path); err != nil {
			t.Fatal(err)
		}
		mustVerifyFile(t, path)
	})
	t.Run("ZeroedLeaf/CallerBucket", func(t *testing.T) {
		path := newLogFile(t, 5)
		root := userBucketRoot(t, path)
		leaf := int(le.Uint64(readPage(t, path, root)[pageHeaderSize+8:]))
		zeroPage(t, path, leaf)
		_, err := verifyFile(path)
		wantDamage(t, "a zeroed leaf", err, leaf)
	})
	t.Run("ZeroedLeaf/Log", func(t *testing.T) {
		path := newLogFile(t, 600)
		root := bucketRoot(t, path, bucketLog)
		leaf := int(le.Uint64(readPage(t, path, root)[pageHeaderSize+branchElemSize+8:]))
		zeroPage(t, path, leaf)
		_, err := verifyFile(path)
		wantDamage(t, "a zeroed leaf of the log", err, leaf)
	})
	t.Run("KeysOutOfOrder", func(t *testing.T) {
		path := newLogFile(t, 5)
		root := userBucketRoot(t, path)
		leaf := int(le.Uint64(readPage(t, path, root)[pageHeaderSize+8:]))
		p := readPage(t, path, leaf)
		// Swap the first two keys ("key-0000", "key-0001": one size).
		k := func(i int) []byte {
			e := pageHeaderSize + i*leafElemSize
			at := e + int(le.Uint32(p[e+4:]))
			return p[at : at+int(le.Uint32(p[e+8:]))]
		}
		a, b := k(0), k(1)
		tmp := string(a)
		copy(a, b)
		copy(b, tmp)
		writePage(t, path, leaf, p)
		_, err := verifyFile(path)
		wantDamage(t, "two keys swapped", err, leaf)
		if boltCheck(path) == nil {
			t.Fatal("bbolt's check finds nothing wrong: the test damages nothing")
		}
	})
	t.Run("FreelistHoldsPageInUse", func(t *testing.T) {
		path := newLogFile(t, 600)
		root := bucketRoot(t, path, bucketLog)
		fl := freelistPage(t, path)
		p := readPage(t, path, fl)
		h := readPageHeader(p)
		if h.count == 0 || h.count == 0xFFFF {
			t.Skipf("free list of %d ids: want a few", h.count)
		}
		le.PutUint64(p[pageHeaderSize:], uint64(root))
		writePage(t, path, fl, p)
		_, err := verifyFile(path)
		wantDamage(t, "the log's root page on the free list", err, root)
	})
	t.Run("ZeroedFreelist", func(t *testing.T) {
		path := newLogFile(t, 600)
		zeroPage(t, path, freelistPage(t, path))
		_, err := verifyFile(path)
		var ce *CorruptionError
		if !errors.As(err, &ce) {
			t.Fatalf("err = %v, want a *CorruptionError", err)
		}
	})
}

// TestVerify_PagesFindWhatBoltFinds: for damage to bytes of any page of
// a file, bbolt's Tx.Check finds nothing wrong with a file the page check
// (after the shape check) passed.
func TestVerify_PagesFindWhatBoltFinds(t *testing.T) {
	clean := newLogFile(t, 400)
	userBucketRoot(t, clean)
	orig, err := os.ReadFile(clean)
	if err != nil {
		t.Fatal(err)
	}
	ps := os.Getpagesize()
	dir := t.TempDir()
	rapid.Check(t, func(rt *rapid.T) {
		b := append([]byte(nil), orig...)
		id := rapid.IntRange(2, len(b)/ps-1).Draw(rt, "page")
		page := b[id*ps : (id+1)*ps]
		for range rapid.IntRange(1, 4).Draw(rt, "flips") {
			// Mostly the header and the element array, where the
			// structure is; a key anywhere.
			at := rapid.OneOf(rapid.IntRange(0, 64), rapid.IntRange(0, ps-1)).Draw(rt, "at")
			page[at] ^= byte(rapid.IntRange(1, 255).Draw(rt, "bits"))
		}
		path := filepath.Join(dir, "damaged.db")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			rt.Fatal(err)
		}
		shaped, ours := checkPagesFile(path)
		if !shaped {
			// bbolt's check could recurse into a cycle without end, or
			// read past the file.
			if ours == nil {
				rt.Fatalf("page %d: the shape check failed without an error", id)
			}
			return
		}
		if ours != nil {
			var ce *CorruptionError
			if !errors.As(ours, &ce) {
				rt.Fatalf("page %d: %v, want a *CorruptionError", id, ours)
			}
			return
		}
		// bbolt's check runs only on what ours passed: it reads a key
		// that lies past the end of the map on a goroutine of its own,
		// which crashes the process (ours refuses such a key).
		if berr := boltCheck(path); berr != nil {
			rt.Fatalf("page %d: bbolt's check finds %v, ours nothing", id, berr)
		}
	})
}
