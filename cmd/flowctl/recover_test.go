package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow"
	bolt "go.etcd.io/bbolt"
)

// goInternals are texts of Go's runtime and libraries that must never
// reach a user.
var goInternals = []string{"panic", "assertion failed", "slice bounds", "index out of range",
	"strconv.", "Go struct field", "goroutine", "file size too small", "invalid database", "msgpack:"}

// wantNoInternals fails t if stderr shows Go internals.
func wantNoInternals(t testing.TB, what, stderr string) {
	t.Helper()
	for _, s := range goInternals {
		if strings.Contains(stderr, s) {
			t.Errorf("%s: stderr %q shows Go internals (%q)", what, stderr, s)
		}
	}
}

// bigFile makes a flow file of n tasks with long descriptions, enough for
// a log bucket of several levels of pages.
func bigFile(t *testing.T, n int) *flowFile {
	t.Helper()
	f := mustInit(t, "--project", "p")
	eng, err := flow.Open(f.path, flow.Options{Actor: "bulk", NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if _, err := eng.AddTask(flow.NewTask{Project: "p", Title: fmt.Sprint("task ", i), Description: strings.Repeat("d", 500)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	return f
}

// zeroLogRoot zeroes the root page of the file's log bucket and returns
// its id.
func zeroLogRoot(t *testing.T, path string) int {
	t.Helper()
	db, err := bolt.Open(path, 0o644, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var root int
	_ = db.View(func(tx *bolt.Tx) error { root = int(tx.Bucket([]byte("log")).Root()); return nil })
	db.Close()
	fh, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	size := os.Getpagesize()
	if _, err := fh.WriteAt(make([]byte, size), int64(root*size)); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestRecover(t *testing.T) {
	t.Run("OK/DamagedPage", func(t *testing.T) {
		f := bigFile(t, 200)
		export := f.mustRun("", "export")
		head := strings.Count(export, "\n")
		id := zeroLogRoot(t, f.path)
		f.markCorrupted()
		before := f.bytes()
		for _, args := range [][]string{{"task", "add", "more"}, {"rebuild"}, {"compact"}, {"verify"}} {
			_, stderr, code := f.run("", args...)
			wantError(t, stderr, code, 7, fmt.Sprintf("page %d of the file is damaged", id), "flowctl recover --into NEW")
			wantNoInternals(t, fmt.Sprint(args), stderr)
		}
		if !bytes.Equal(before, f.bytes()) {
			t.Fatal("the refused commands changed the damaged file")
		}

		out := f.mustRun("", "recover", "--into", "new.db", "-o", "json")
		var rep flow.RecoverReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("recover -o json: %v in %q", err, out)
		}
		if rep.Kept != uint64(head) || rep.Lost != 0 || !rep.ScannedPages || rep.SourceHeadSeq != uint64(head) {
			t.Fatalf("recover reported %+v, want all %d events found by the page scan", rep, head)
		}
		newPath := filepath.Join(f.dir, "new.db")
		if _, stderr, code := f.run("", "verify", "--db", newPath); code != 0 {
			t.Fatalf("verify of the recovered file: exit %d, %s", code, stderr)
		}
		if got := f.mustRun("", "export", "--db", newPath); got != export {
			t.Fatal("the recovered file's export differs from the file's before the damage")
		}
		if !bytes.Equal(before, f.bytes()) {
			t.Fatal("recover changed the damaged file")
		}
	})

	t.Run("OK/Text", func(t *testing.T) {
		f := mustInit(t, "--project", "p")
		f.mustImportFixture()
		out := f.mustRun("", "recover", "--into", "copy.db")
		if !strings.HasPrefix(out, "recovered 7 of 7 events into ") || strings.Contains(out, "lost") {
			t.Fatalf("recover of a clean file printed %q", out)
		}
	})

	t.Run("OK/RebuildInto", func(t *testing.T) {
		f := mustInit(t, "--project", "p")
		f.mustImportFixture()
		out := f.mustRun("", "rebuild", "--into", "copy.db")
		if !strings.HasPrefix(out, "recovered 7 of 7 events into ") {
			t.Fatalf("rebuild --into printed %q", out)
		}
		if got, want := f.mustRun("", "export", "--db", filepath.Join(f.dir, "copy.db")), f.mustRun("", "export"); got != want {
			t.Fatal("the new file's export differs")
		}
	})

	t.Run("ErrInvalid/NoInto", func(t *testing.T) {
		f := mustInit(t, "--project", "p")
		_, stderr, code := f.run("", "recover")
		wantError(t, stderr, code, 2, "--into")
	})

	t.Run("ErrExists/IntoExists", func(t *testing.T) {
		f := mustInit(t, "--project", "p")
		other := filepath.Join(f.dir, "other.db")
		if err := os.WriteFile(other, []byte("keep me"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := f.run("", "recover", "--into", other)
		wantError(t, stderr, code, 4, "does not exist")
		if b, _ := os.ReadFile(other); string(b) != "keep me" {
			t.Fatalf("recover changed an existing file: %q", b)
		}
	})
}
