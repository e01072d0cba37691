package main

import (
	"encoding/binary"
	"testing"

	"github.com/flowctl/flowctl/eventlog"
	bolt "go.etcd.io/bbolt"
)

// setFormat writes the file's format and minimum reader version, as a
// newer flowctl would have.
func setFormat(t *testing.T, path string, format, minReader uint32) {
	t.Helper()
	db, err := bolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		meta := tx.Bucket([]byte("meta"))
		if err := meta.Put([]byte("format"), binary.BigEndian.AppendUint32(nil, format)); err != nil {
			return err
		}
		return meta.Put([]byte("min_reader"), binary.BigEndian.AppendUint32(nil, minReader))
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestNewerFormat: a file written by a newer flowctl is refused for
// writing (exit 7, one line, the file untouched) and read when its
// minimum reader version allows; otherwise reads are refused too.
func TestNewerFormat(t *testing.T) {
	t.Run("WritesRefusedReadsServed", func(t *testing.T) {
		f := mustInit(t, "--project", "p")
		f.mustRun("", "task", "add", "one")
		setFormat(t, f.path, eventlog.FormatVersion+1, eventlog.FormatVersion)
		before := f.bytes()
		_, stderr, code := f.run("", "task", "add", "two")
		wantError(t, stderr, code, 7, "newer")
		if string(before) != string(f.bytes()) {
			t.Fatal("a refused write changed the file")
		}
		if out := f.mustRun("", "task", "show", "T-1", "-o", "json"); out == "" {
			t.Fatal("read of a newer but readable file printed nothing")
		}
		setFormat(t, f.path, eventlog.FormatVersion, eventlog.MinReaderVersion) // for the cleanup's verify
	})
	t.Run("UnreadableRefused", func(t *testing.T) {
		f := mustInit(t, "--project", "p")
		setFormat(t, f.path, eventlog.FormatVersion+1, eventlog.FormatVersion+1)
		before := f.bytes()
		_, stderr, code := f.run("", "task", "ls")
		wantError(t, stderr, code, 7, "newer")
		if string(before) != string(f.bytes()) {
			t.Fatal("a refused read changed the file")
		}
		setFormat(t, f.path, eventlog.FormatVersion, eventlog.MinReaderVersion)
	})
}
