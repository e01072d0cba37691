package eventlog

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// churnedFile returns a log of n events whose file also held, and then
// lost, a user bucket of about 4 MB: free pages that only Compact gives
// back. A small user bucket "kept" stays.
func churnedFile(t *testing.T, n int) string {
	t.Helper()
	path := newLogFile(t, n)
	l, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	err = l.Update(func(tx *Tx) error {
		for i := range 4000 {
			if err := tx.Put("scratch", fmt.Appendf(nil, "k%05d", i), bytes.Repeat([]byte{'x'}, 1000)); err != nil {
				return err
			}
		}
		for i := range 50 {
			if err := tx.Put("kept", fmt.Appendf(nil, "k%02d", i), fmt.Appendf(nil, "v%d", i)); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = l.Update(func(tx *Tx) error { return tx.DeleteBucket("scratch") })
	}
	if err == nil {
		err = l.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// snapshotOf reads every record and the "kept" bucket of the log at path.
func snapshotOf(t *testing.T, path string) (recs []*Record, kept map[string]string) {
	t.Helper()
	l, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	recs = readAll(t, l)
	kept = map[string]string{}
	err = l.View(func(tx *Tx) error {
		return tx.Scan("kept", nil, func(k, v []byte) error { kept[string(k)] = string(v); return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	return recs, kept
}

// leftovers lists the files beside path other than path itself.
func leftovers(t *testing.T, path string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.Name() != filepath.Base(path) {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestCompact(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		path := churnedFile(t, 300)
		if err := os.Chmod(path, 0o640); err != nil {
			t.Fatal(err)
		}
		wantRecs, wantKept := snapshotOf(t, path)
		rep, err := Compact(path, Options{NoSync: true})
		if err != nil {
			t.Fatalf("Compact: %v", err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if rep.After != fi.Size() || rep.After >= rep.Before/2 {
			t.Errorf("Compact: %d -> %d bytes (file now %d); want less than half", rep.Before, rep.After, fi.Size())
		}
		if fi.Mode().Perm() != 0o640 {
			t.Errorf("mode %v, want the old file's 0640", fi.Mode().Perm())
		}
		if rep.Verified.HeadSeq != 300 {
			t.Errorf("verified head %d, want 300", rep.Verified.HeadSeq)
		}
		gotRecs, gotKept := snapshotOf(t, path)
		if len(gotRecs) != len(wantRecs) {
			t.Fatalf("%d records after Compact, %d before", len(gotRecs), len(wantRecs))
		}
		for i := range wantRecs {
			if d := sameRecord(gotRecs[i], wantRecs[i]); d != "" {
				t.Fatalf("seq %d after Compact: %s", wantRecs[i].Seq, d)
			}
		}
		if fmt.Sprint(gotKept) != fmt.Sprint(wantKept) || len(gotKept) != 50 {
			t.Errorf("bucket kept: %d keys after Compact, %d before", len(gotKept), len(wantKept))
		}
		if l := leftovers(t, path); len(l) != 0 {
			t.Errorf("files left beside the log: %v", l)
		}
		mustVerifyFile(t, path)
		// The compacted file takes appends.
		l := mustOpenPath(t, path)
		mustAppend(t, l, "s1", Any, ev("e", "after"))
	})

	t.Run("ErrBusy", func(t *testing.T) {
		path := churnedFile(t, 10)
		l := mustOpenPath(t, path)
		before, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Compact(path, Options{Timeout: 50 * time.Millisecond}); !errors.Is(err, ErrBusy) {
			t.Fatalf("Compact of a file another writer holds: %v, want ErrBusy", err)
		}
		after, _ := os.ReadFile(path)
		if !bytes.Equal(before, after) || len(leftovers(t, path)) != 0 {
			t.Fatalf("a refused Compact changed the file or left files: %v", leftovers(t, path))
		}
		mustAppend(t, l, "s1", Any, ev("e", "still mine"))
	})

	t.Run("ErrCorrupt/LeavesTheFile", func(t *testing.T) {
		path := churnedFile(t, 20)
		rawUpdate(t, path, func(tx *bolt.Tx) error {
			b := rawRecord(tx, 7)
			b[len(b)/2] ^= 0x04
			return tx.Bucket(bucketLog).Put(seqKey(7), b)
		})
		before, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Compact(path, Options{NoSync: true})
		var ce *CorruptionError
		if !errors.As(err, &ce) || ce.Seq != 7 {
			t.Fatalf("Compact of a file with a damaged record: %v, want corruption at seq 7", err)
		}
		after, _ := os.ReadFile(path)
		if !bytes.Equal(before, after) || len(leftovers(t, path)) != 0 {
			t.Fatalf("a failed Compact changed the file or left files: %v", leftovers(t, path))
		}
	})
}

// TestOpen_FileReplacedWhileWaiting: a writer that waits for the lock of
// a file that is then replaced (as Compact replaces it, holding the old
// file's lock) must open the new file, or its appends would go to the
// unlinked old one and be lost.
func TestOpen_FileReplacedWhileWaiting(t *testing.T) {
	path := newLogFile(t, 5)
	holder, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	// The replacement: a copy with two more events.
	next := filepath.Join(t.TempDir(), "next.db")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(next, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	nl, err := Open(next, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, nl, "s1", Any, ev("e", "6"), ev("e", "7"))
	nl.Close()

	opened := make(chan *Log, 1)
	errs := make(chan error, 1)
	go func() {
		l, err := Open(path, Options{NoSync: true, Timeout: 10 * time.Second})
		if err != nil {
			errs <- err
			return
		}
		opened <- l
	}()
	time.Sleep(100 * time.Millisecond) // let it wait for the lock
	if err := os.Rename(next, path); err != nil {
		t.Fatal(err)
	}
	holder.Close()
	select {
	case err := <-errs:
		t.Fatalf("Open: %v", err)
	case l := <-opened:
		head := mustHead(t, l)
		if head == 7 {
			mustAppend(t, l, "s2", Any, ev("e", "8"))
		}
		l.Close()
		if head != 7 {
			t.Fatalf("the waiting writer opened a log at head %d: the replaced file, not the one path names (head 7)", head)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Open did not return")
	}
	mustVerifyFile(t, path)
}

func TestOpen_RemovesStaleCompactCopies(t *testing.T) {
	path := newLogFile(t, 3)
	stale := path + ".compact-123456"
	other := path + "-other.compact-1" // not a copy of this file
	for _, p := range []string{stale, other} {
		if err := os.WriteFile(p, make([]byte, 64<<10), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if _, err := os.Stat(stale); err != nil {
		t.Fatalf("a read-only open removed the copy: %v", err)
	}
	l, err = Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the stale copy of a killed compact is still there after a writable open (stat: %v)", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatalf("a file that is not a copy of this one was removed: %v", err)
	}
	if err := os.WriteFile(stale, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Compact(path, Options{NoSync: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the stale copy is still there after a compact (stat: %v)", err)
	}
}
