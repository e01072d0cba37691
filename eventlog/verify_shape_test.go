package eventlog

import (
	"encoding/binary"
	"os"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// bucketRoot returns the root page of bucket name in the closed file at
// path.
func bucketRoot(tb testing.TB, path string, name []byte) int {
	tb.Helper()
	db, err := bolt.Open(path, 0o644, &bolt.Options{ReadOnly: true})
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	var root int
	_ = db.View(func(tx *bolt.Tx) error { root = int(tx.Bucket(name).Root()); return nil })
	return root
}

// pointChild makes child i of the branch page id of the closed file at
// path (-1: its last) point to page to, and returns the page its first
// child pointed to.
func pointChild(tb testing.TB, path string, id, i int, to uint64) (first uint64) {
	tb.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	ps := os.Getpagesize()
	page := make([]byte, ps)
	if _, err := f.ReadAt(page, int64(id*ps)); err != nil {
		tb.Fatal(err)
	}
	h := readPageHeader(page)
	if h.flags != branchPageFlag || h.count < 2 {
		tb.Fatalf("page %d is not a branch page of 2 children or more (flags %#x, count %d)", id, h.flags, h.count)
	}
	if i < 0 {
		i = int(h.count) - 1
	}
	first = binary.LittleEndian.Uint64(page[pageHeaderSize+8:])
	binary.LittleEndian.PutUint64(page[pageHeaderSize+i*branchElemSize+8:], to)
	if _, err := f.WriteAt(page, int64(id*ps)); err != nil {
		tb.Fatal(err)
	}
	return first
}

// verifyEnds runs Verify on the file at path and fails tb unless it ends
// within a minute with corruption naming page id.
func verifyEnds(tb testing.TB, what, path string, id int) {
	tb.Helper()
	done := make(chan error, 1)
	go func() { _, err := verifyFile(path); done <- err }()
	select {
	case err := <-done:
		wantDamage(tb, what, err, id)
	case <-time.After(time.Minute):
		tb.Fatalf("%s: Verify has not ended after a minute", what)
	}
}

// TestVerify_Shape: a branch page that points back to itself, or two
// pointers to one page, in a caller's bucket or in the log, make Verify
// name the page, and end: the record walk and the projections' reads run
// beside bbolt's check of the pages only once the shape check has passed,
// and bbolt's check itself recurses into a cycle without end.
func TestVerify_Shape(t *testing.T) {
	t.Run("Cycle/CallerBucket", func(t *testing.T) {
		path := newLogFile(t, 5)
		id := userBucketRoot(t, path)
		pointChild(t, path, id, -1, uint64(id))
		verifyEnds(t, "a branch page pointing to itself", path, id)
	})
	t.Run("Twice/CallerBucket", func(t *testing.T) {
		path := newLogFile(t, 5)
		id := userBucketRoot(t, path)
		first := pointChild(t, path, id, -1, 0)
		pointChild(t, path, id, -1, first)
		verifyEnds(t, "two pointers to a page", path, int(first))
	})
	t.Run("Cycle/Log", func(t *testing.T) {
		path := newLogFile(t, 600)
		id := bucketRoot(t, path, bucketLog)
		pointChild(t, path, id, 1, uint64(id))
		verifyEnds(t, "a branch page of the log pointing to itself", path, id)
	})
}
