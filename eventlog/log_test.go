package eventlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// newLogFile creates a log at a fresh path with n events, their index
// entries merged from the tail into the indexes, and closes it.
func newLogFile(t *testing.T, n int) string {
	t.Helper()
	return newLogFileTail(t, n, true)
}

// newLogFileTail is newLogFile that leaves the index entries where the
// appends put them (in the tail, for n < tailMax) unless merge is set.
func newLogFileTail(t *testing.T, n int, merge bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "flow.db")
	l, err := Open(path, Options{Create: true, NoSync: true, createFormat: testFormat})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	for i := range n {
		e := evID(uint64(i+1), "e", string(rune('a'+i%26)))
		if i%3 == 0 {
			e.Project = "p"
		}
		if _, err := l.Append([]string{"s1", "s2", "s3"}[i%3], Any, e); err != nil {
			t.Fatalf("Append: %v", err)
		}
	}
	if merge {
		if err := l.Update(func(tx *Tx) error { return tx.spillTail() }); err != nil {
			t.Fatalf("merging the index tail: %v", err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return path
}

func TestOpen(t *testing.T) {
	t.Run("OK/Create", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "flow.db")
		l, err := Open(path, Options{Create: true})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		if l.Path() != path || l.ReadOnly() {
			t.Errorf("Path, ReadOnly = %q, %v", l.Path(), l.ReadOnly())
		}
		if err := l.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		rep := mustVerifyFile(t, path)
		if rep.HeadSeq != 0 || rep.HeadHash != (Hash{}) {
			t.Fatalf("new log report = %+v, want empty", rep)
		}
	})

	t.Run("OK/Reopen", func(t *testing.T) {
		path := newLogFile(t, 5)
		l := mustOpenPath(t, path, Options{NoSync: true})
		got := mustAppend(t, l, "s1", Exact(2), ev("e", "x"))
		if !equalSeqs(got.Seqs, []uint64{6}) || got.Version != 3 {
			t.Fatalf("append after reopen = %+v, want seq 6 version 3", got)
		}
	})

	t.Run("ErrNotExist", func(t *testing.T) {
		dir := t.TempDir()
		for _, opts := range []Options{{}, {ReadOnly: true}, {ReadOnly: true, Create: true}} {
			path := filepath.Join(dir, "missing.db")
			_, err := Open(path, opts)
			if !errors.Is(err, ErrNotExist) {
				t.Errorf("Open(%+v): err = %v, want ErrNotExist", opts, err)
			}
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Open(%+v) created the file", opts)
			}
		}
	})

	t.Run("ErrCorrupt/EmptyFile", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "empty.db")
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, opts := range []Options{{}, {ReadOnly: true}, {ReadOnly: true, Create: true}} {
			_, err := Open(path, opts)
			var ce *CorruptionError
			if !errors.Is(err, ErrCorrupt) || !errors.As(err, &ce) || ce.Seq != 0 {
				t.Errorf("Open(%+v): err = %v, want a *CorruptionError with seq 0", opts, err)
			}
		}
		if fi, _ := os.Stat(path); fi.Size() != 0 {
			t.Fatalf("refused Open wrote %d bytes", fi.Size())
		}
	})

	t.Run("OK/EmptyFileWithCreate", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "empty.db")
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		l := mustOpenPath(t, path)
		mustAppend(t, l, "s", NoStream, ev("a", "1"))
	})

	t.Run("ErrCorrupt/RandomBytes", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		for _, size := range []int{1, 100, 4096, 3 * 4096, 64 << 10} {
			path := filepath.Join(t.TempDir(), "random.db")
			b := make([]byte, size)
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, opts := range []Options{{}, {Create: true}, {ReadOnly: true}} {
				_, err := Open(path, opts)
				if !errors.Is(err, ErrCorrupt) {
					t.Errorf("Open(%d random bytes, %+v): err = %v, want ErrCorrupt", size, opts, err)
				}
			}
			got, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(got, b) {
				t.Errorf("Open changed a file of %d random bytes", size)
			}
		}
	})

	t.Run("ErrCorrupt/ForeignBoltFile", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "other.db")
		db, err := bolt.Open(path, 0o644, nil)
		if err != nil {
			t.Fatal(err)
		}
		err = db.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucket([]byte("users"))
			if err != nil {
				return err
			}
			return b.Put([]byte("k"), []byte("v"))
		})
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, opts := range []Options{{}, {Create: true}, {ReadOnly: true}} {
			if _, err := Open(path, opts); !errors.Is(err, ErrCorrupt) {
				t.Errorf("Open(%+v): err = %v, want ErrCorrupt", opts, err)
			}
		}
	})

	t.Run("ErrCorrupt/MissingBucket", func(t *testing.T) {
		path := newLogFile(t, 3)
		rawUpdate(t, path, func(tx *bolt.Tx) error { return tx.DeleteBucket(bucketIDs) })
		if _, err := Open(path, Options{}); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("err = %v, want ErrCorrupt", err)
		}
	})

	t.Run("ErrCorrupt/MalformedMeta", func(t *testing.T) {
		for _, key := range [][]byte{metaFormat, metaMinReader, metaHeadSeq, metaHeadHash} {
			path := newLogFile(t, 1)
			rawUpdate(t, path, func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(key, []byte{1}) })
			for _, opts := range []Options{{}, {ReadOnly: true}} {
				if _, err := Open(path, opts); !errors.Is(err, ErrCorrupt) {
					t.Errorf("meta %q malformed, Open(%+v): err = %v, want ErrCorrupt", key, opts, err)
				}
			}
		}
	})

	t.Run("ErrInvalid/Directory", func(t *testing.T) {
		if _, err := Open(t.TempDir(), Options{Create: true}); !errors.Is(err, ErrInvalid) {
			t.Fatalf("err = %v, want ErrInvalid", err)
		}
	})
}

func TestOpen_NewerFormat(t *testing.T) {
	setFormat := func(t *testing.T, path string, format, minReader uint32) {
		rawUpdate(t, path, func(tx *bolt.Tx) error {
			meta := tx.Bucket(bucketMeta)
			if err := meta.Put(metaFormat, binary.BigEndian.AppendUint32(nil, format)); err != nil {
				return err
			}
			return meta.Put(metaMinReader, binary.BigEndian.AppendUint32(nil, minReader))
		})
	}

	t.Run("ErrNewerFormat/Write", func(t *testing.T) {
		path := newLogFile(t, 3)
		setFormat(t, path, FormatVersion+1, FormatVersion)
		before, _ := os.ReadFile(path)
		for _, opts := range []Options{{}, {Create: true}} {
			if _, err := Open(path, opts); !errors.Is(err, ErrNewerFormat) {
				t.Errorf("Open(%+v): err = %v, want ErrNewerFormat", opts, err)
			}
		}
		if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
			t.Fatal("a refused writable Open changed the file")
		}
	})

	t.Run("OK/ReadOnly", func(t *testing.T) {
		if testFormat != FormatVersion {
			t.Skip("a newer format readable by this binary is one whose records are in FormatVersion's")
		}
		path := newLogFile(t, 3)
		setFormat(t, path, FormatVersion+1, FormatVersion)
		l := mustOpenPath(t, path, Options{ReadOnly: true})
		if got := readAll(t, l); len(got) != 3 {
			t.Fatalf("read %d records, want 3", len(got))
		}
		if _, err := l.Append("s1", Any, ev("e", "x")); !errors.Is(err, ErrReadOnly) {
			t.Fatalf("Append: err = %v, want ErrReadOnly", err)
		}
	})

	t.Run("ErrNewerFormat/ReadOnly", func(t *testing.T) {
		path := newLogFile(t, 3)
		setFormat(t, path, FormatVersion+1, FormatVersion+1)
		for _, opts := range []Options{{}, {ReadOnly: true}} {
			if _, err := Open(path, opts); !errors.Is(err, ErrNewerFormat) {
				t.Errorf("Open(%+v): err = %v, want ErrNewerFormat", opts, err)
			}
		}
	})
}

func TestOpen_Busy(t *testing.T) {
	// flock locks belong to an open file description, so two Opens in one
	// process exclude each other as two processes would.
	const timeout = 100 * time.Millisecond
	tryOpen := func(t *testing.T, path string, readOnly bool) error {
		t.Helper()
		start := time.Now()
		l, err := Open(path, Options{ReadOnly: readOnly, Timeout: timeout})
		if elapsed := time.Since(start); elapsed > timeout+2*time.Second {
			t.Errorf("Open took %v with a timeout of %v", elapsed, timeout)
		}
		if err == nil {
			l.Close()
		}
		return err
	}

	t.Run("ErrBusy/WriterHeld", func(t *testing.T) {
		path := newLogFile(t, 1)
		l := mustOpenPath(t, path, Options{NoSync: true})
		for _, readOnly := range []bool{false, true} {
			start := time.Now()
			err := tryOpen(t, path, readOnly)
			if !errors.Is(err, ErrBusy) {
				t.Fatalf("Open(ReadOnly=%v): err = %v, want ErrBusy", readOnly, err)
			}
			if elapsed := time.Since(start); elapsed < timeout {
				t.Errorf("Open gave up after %v, before its timeout of %v", elapsed, timeout)
			}
		}
		mustAppend(t, l, "s", Any, ev("a", "still works"))
	})

	t.Run("ErrBusy/ReaderHeld", func(t *testing.T) {
		path := newLogFile(t, 1)
		r := mustOpenPath(t, path, Options{ReadOnly: true})
		if err := tryOpen(t, path, false); !errors.Is(err, ErrBusy) {
			t.Fatalf("writable Open: err = %v, want ErrBusy", err)
		}
		if err := tryOpen(t, path, true); err != nil {
			t.Fatalf("second read-only Open: %v, want nil: readers share the lock", err)
		}
		readAll(t, r)
	})

	t.Run("OK/AfterClose", func(t *testing.T) {
		path := newLogFile(t, 1)
		l, err := Open(path, Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			l2, err := Open(path, Options{Timeout: 5 * time.Second})
			if err == nil {
				err = l2.Close()
			}
			done <- err
		}()
		time.Sleep(20 * time.Millisecond)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("Open waiting for the lock: %v, want nil once the holder closed", err)
		}
	})
}

func TestLog_ReadOnly(t *testing.T) {
	path := newLogFile(t, 4)
	l := mustOpenPath(t, path, Options{ReadOnly: true})
	if !l.ReadOnly() {
		t.Fatal("ReadOnly() = false")
	}
	called := false
	if err := l.Update(func(*Tx) error { called = true; return nil }); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Update: err = %v, want ErrReadOnly", err)
	}
	if called {
		t.Fatal("Update ran its callback on a read-only log")
	}
	if _, err := l.Append("s1", Any, ev("e", "x")); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Append: err = %v, want ErrReadOnly", err)
	}
	if got := seqsOf(readAll(t, l)); !equalSeqs(got, seqRange(1, 4)) {
		t.Fatalf("ReadRange = %v", got)
	}
	if got := mustCollect(t, func(fn func(*Record) error) error { return l.ReadStream("s1", 0, fn) }); len(got) != 2 {
		t.Fatalf("ReadStream(s1) read %d records, want 2", len(got))
	}
	if got := mustCollect(t, func(fn func(*Record) error) error { return l.ReadProject("p", 0, fn) }); len(got) != 2 {
		t.Fatalf("ReadProject(p) read %d records, want 2", len(got))
	}
	if rep, err := l.Verify(); err != nil || rep.HeadSeq != 4 || rep.Projects != 1 || rep.Streams != 3 {
		t.Fatalf("Verify = %+v, %v", rep, err)
	}
}

func TestLog_Close(t *testing.T) {
	t.Run("ErrClosed", func(t *testing.T) {
		l := mustOpen(t)
		mustAppend(t, l, "s", NoStream, ev("a", "1"))
		path := l.Path()
		if err := l.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if got := l.Path(); got != path || got == "" {
			t.Errorf("Path() after Close = %q, want %q", got, path)
		}
		_, err := l.Append("s", Any, ev("a", "2"))
		if !errors.Is(err, ErrClosed) {
			t.Errorf("Append: err = %v, want ErrClosed", err)
		}
		if err := l.Update(func(*Tx) error { return nil }); !errors.Is(err, ErrClosed) {
			t.Errorf("Update: err = %v, want ErrClosed", err)
		}
		if err := l.View(func(*Tx) error { return nil }); !errors.Is(err, ErrClosed) {
			t.Errorf("View: err = %v, want ErrClosed", err)
		}
		if err := l.ReadRange(0, 0, func(*Record) error { return nil }); !errors.Is(err, ErrClosed) {
			t.Errorf("ReadRange: err = %v, want ErrClosed", err)
		}
		if _, _, err := l.Head(); !errors.Is(err, ErrClosed) {
			t.Errorf("Head: err = %v, want ErrClosed", err)
		}
		if _, err := l.Verify(); !errors.Is(err, ErrClosed) {
			t.Errorf("Verify: err = %v, want ErrClosed", err)
		}
		if err := l.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
	})
}
