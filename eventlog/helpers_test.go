package eventlog

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// testClock is the fixed clock of the logs opened by mustOpen: events
// appended without a time get it, so that records are reproducible.
var testClock = time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.UTC)

// testFormat is the format of the files the tests create: FormatVersion,
// or the one EVENTLOG_TEST_FORMAT names (EVENTLOG_TEST_FORMAT=1 go test
// runs the suite on format-1 files).
var testFormat = func() format {
	if v, err := strconv.Atoi(os.Getenv("EVENTLOG_TEST_FORMAT")); err == nil && v >= 1 && v <= FormatVersion {
		return format(v)
	}
	return FormatVersion
}()

// mustOpen opens a new log in a fresh temporary directory. Without opts it
// uses Options{Create: true, NoSync: true} and a fixed clock; with opts,
// opts[0] is used as given except that Create is forced. On cleanup it
// runs Verify, fails the test if the file is not clean, and closes the log.
func mustOpen(tb testing.TB, opts ...Options) *Log {
	tb.Helper()
	return mustOpenPath(tb, filepath.Join(tb.TempDir(), "flow.db"), opts...)
}

// mustOpenPath is mustOpen for a given path, which may already hold a log.
func mustOpenPath(tb testing.TB, path string, opts ...Options) *Log {
	tb.Helper()
	o := Options{NoSync: true, Now: func() time.Time { return testClock }}
	if len(opts) > 0 {
		o = opts[0]
	}
	o.Create = !o.ReadOnly
	if o.createFormat == 0 {
		o.createFormat = testFormat
	}
	l, err := Open(path, o)
	if err != nil {
		tb.Fatalf("Open(%s): %v", path, err)
	}
	tb.Cleanup(func() { verifyAndClose(tb, l) })
	return l
}

// verifyAndClose fails tb if l's file is not clean. A log the test closed
// itself is reopened read-only to be checked.
func verifyAndClose(tb testing.TB, l *Log) {
	tb.Helper()
	_, err := l.Verify()
	if errors.Is(err, ErrClosed) {
		mustVerifyFile(tb, l.Path())
		return
	}
	if err != nil {
		tb.Errorf("cleanup: Verify: %v", err)
	}
	if err := l.Close(); err != nil {
		tb.Errorf("cleanup: Close: %v", err)
	}
}

// mustVerifyFile opens path read-only and fails tb unless Verify is clean.
func mustVerifyFile(tb testing.TB, path string) Report {
	tb.Helper()
	rep, err := verifyFile(path)
	if err != nil {
		tb.Errorf("Verify(%s): %v", path, err)
	}
	return rep
}

// verifyFile opens path read-only, verifies it and closes it.
func verifyFile(path string) (Report, error) {
	l, err := Open(path, Options{ReadOnly: true, Timeout: 10 * time.Second})
	if err != nil {
		return Report{}, err
	}
	defer l.Close()
	return l.Verify()
}

// ev returns an event of type typ with data as its payload.
func ev(typ, data string) Event {
	return Event{Type: typ, Data: []byte(data)}
}

// evID returns an event with a fixed id derived from n.
func evID(n uint64, typ, data string) Event {
	e := ev(typ, data)
	e.ID = testID(n)
	return e
}

// testID returns a recognizable non-zero id for n.
func testID(n uint64) ID {
	var id ID
	copy(id[:], fmt.Sprintf("test-id-%08d", n))
	return id
}

func mustAppend(tb testing.TB, l *Log, stream string, exp Expect, events ...Event) Appended {
	tb.Helper()
	got, err := l.Append(stream, exp, events...)
	if err != nil {
		tb.Fatalf("Append(%q, %v): %v", stream, exp, err)
	}
	return got
}

// readAll returns every record of the log in seq order.
func readAll(tb testing.TB, l *Log) []*Record {
	tb.Helper()
	return mustCollect(tb, func(fn func(*Record) error) error { return l.ReadRange(0, 0, fn) })
}

// mustCollect gathers the records a Read* call hands to its callback.
func mustCollect(tb testing.TB, read func(func(*Record) error) error) []*Record {
	tb.Helper()
	var out []*Record
	if err := read(func(r *Record) error { out = append(out, r); return nil }); err != nil {
		tb.Fatalf("read: %v", err)
	}
	return out
}

func seqsOf(rs []*Record) []uint64 {
	out := make([]uint64, len(rs))
	for i, r := range rs {
		out[i] = r.Seq
	}
	return out
}

func seqRange(from, to uint64) []uint64 {
	var out []uint64
	for s := from; s <= to; s++ {
		out = append(out, s)
	}
	return out
}

func equalSeqs(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// mustHead returns the log's head seq.
func mustHead(tb testing.TB, l *Log) uint64 {
	tb.Helper()
	seq, _, err := l.Head()
	if err != nil {
		tb.Fatalf("Head: %v", err)
	}
	return seq
}

// rawUpdate changes a closed log file with bbolt directly, behind the
// log's back: the tool of the corruption and format tests.
func rawUpdate(tb testing.TB, path string, fn func(*bolt.Tx) error) {
	tb.Helper()
	db, err := bolt.Open(path, 0o644, &bolt.Options{Timeout: 5 * time.Second, NoSync: true})
	if err != nil {
		tb.Fatalf("bolt.Open: %v", err)
	}
	defer db.Close()
	if err := db.Update(fn); err != nil {
		tb.Fatalf("raw update: %v", err)
	}
}

// sameRecord reports how got differs from want, or "" if they are equal.
// Times compare as instants; nil and empty payloads are equal.
func sameRecord(got, want *Record) string {
	switch {
	case got.Seq != want.Seq:
		return fmt.Sprintf("seq %d, want %d", got.Seq, want.Seq)
	case got.ID != want.ID:
		return fmt.Sprintf("id %s, want %s", got.ID, want.ID)
	case got.Stream != want.Stream || got.Version != want.Version:
		return fmt.Sprintf("stream %q v%d, want %q v%d", got.Stream, got.Version, want.Stream, want.Version)
	case got.Type != want.Type || got.Schema != want.Schema:
		return fmt.Sprintf("type %q/%d, want %q/%d", got.Type, got.Schema, want.Type, want.Schema)
	case !got.Time.Equal(want.Time):
		return fmt.Sprintf("time %v, want %v", got.Time, want.Time)
	case got.Actor != want.Actor || got.Session != want.Session || got.Project != want.Project:
		return fmt.Sprintf("actor/session/project %q/%q/%q, want %q/%q/%q",
			got.Actor, got.Session, got.Project, want.Actor, want.Session, want.Project)
	case got.Correlation != want.Correlation || got.Causation != want.Causation:
		return "correlation or causation id differs"
	case !bytes.Equal(got.Data, want.Data):
		return fmt.Sprintf("data %q, want %q", got.Data, want.Data)
	case got.Prev != want.Prev || got.Hash != want.Hash:
		return "chain hashes differ"
	}
	return ""
}
