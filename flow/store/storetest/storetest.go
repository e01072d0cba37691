package storetest

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow/store"
)

// Backend is the store under test: how to make, open and reopen one.
type Backend struct {
	// Driver opens the backend's stores. Required.
	Driver store.Driver
	// DSN returns the data source name of a new store that does not exist
	// yet, unique to t and removed when t ends (for a file, a path in
	// t.TempDir()). The suite opens it with Options.Create. Required.
	DSN func(t testing.TB) string
	// Options are passed to every Open; the suite sets Create, ReadOnly,
	// Timeout and Now itself. NoSync makes the suite faster where the
	// backend honours it.
	Options store.Options
	// Exclusive says that an open store keeps every other Open of it out,
	// from this process or another: they wait for its Close up to
	// Options.Timeout, then fail with store.ErrBusy (bbolt's file lock).
	// The suite then never holds two stores of one DSN open at once,
	// except to check that the second waits.
	Exclusive bool
	// Reserved are bucket names the backend keeps for itself; the suite
	// checks that each is refused with store.ErrInvalid.
	Reserved []string
	// NoProcesses skips the tests that open the store from child
	// processes, for a backend that another process cannot open (one in
	// memory).
	NoProcesses bool
}

// Run checks that b keeps every property the engine relies on, each in
// a subtest named after it. A test binary calling Run must let the suite
// re-execute it (see the package doc): Run then plays the child's part.
func Run(t *testing.T, b Backend) {
	if b.Driver == nil || b.DSN == nil {
		t.Fatal("storetest: Backend needs a Driver and a DSN")
	}
	s := &suite{b: b, name: t.Name()}
	if s.child(t) {
		return
	}
	for _, c := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"Open", s.testOpen},
		{"Seqs", s.testSeqs},
		{"Times", s.testTimes},
		{"Streams", s.testStreams},
		{"Invalid", s.testInvalid},
		{"Idempotency", s.testIdempotency},
		{"Atomicity", s.testAtomicity},
		{"Chain", s.testChain},
		{"Reads", s.testReads},
		{"Reverse", s.testReverse},
		{"Buckets", s.testBuckets},
		{"Snapshots", s.testSnapshots},
		{"Durability", s.testDurability},
		{"Goroutines", s.testGoroutines},
		{"Processes", s.testProcesses},
		{"Follow", s.testFollow},
		{"Optional", s.testOptional},
		{"Bulk", s.testBulk},
	} {
		t.Run(c.name, c.fn)
	}
}

// suite holds the backend for the tests, and the name of the test that
// called Run, which a child process runs again.
type suite struct {
	b    Backend
	name string
}

// lockTimeout bounds every wait of the suite for a store's lock.
const lockTimeout = 30 * time.Second

// base is the time of the suite's clocks at their start.
var base = time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.UTC)

// clock is a store's clock in the suite: base, then one millisecond
// later at each call, so that the times of a test are reproducible.
type clock struct{ calls atomic.Int64 }

func (c *clock) now() time.Time {
	return base.Add(time.Duration(c.calls.Add(1)-1) * time.Millisecond)
}

// options returns the backend's options for an Open by the suite.
func (s *suite) options(readOnly bool, now func() time.Time) store.Options {
	o := s.b.Options
	o.ReadOnly, o.Create, o.Timeout, o.Now = readOnly, !readOnly, lockTimeout, now
	return o
}

// fresh returns a new store, open for writing with a clock of its own,
// and its DSN. When t ends the store is closed and, if the backend can
// verify, opened again read-only and verified.
func (s *suite) fresh(t testing.TB) (store.Store, string) {
	t.Helper()
	dsn := s.b.DSN(t)
	t.Cleanup(func() { s.verifyDSN(t, dsn) })
	return s.open(t, dsn, false), dsn
}

// open opens dsn with a new clock; the store is closed when t ends.
func (s *suite) open(t testing.TB, dsn string, readOnly bool) store.Store {
	t.Helper()
	st, err := s.b.Driver.Open(dsn, s.options(readOnly, new(clock).now))
	if err != nil {
		t.Fatalf("Open(%s, ReadOnly=%v): %v", dsn, readOnly, err)
	}
	return closeOnCleanup(t, st)
}

// closeOnCleanup closes st when t ends unless the test did.
func closeOnCleanup(t testing.TB, st store.Store) store.Store {
	c := &closer{Store: st}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("cleanup: Close: %v", err)
		}
	})
	return c
}

// closer is a Store whose Close closes it once; a second Close is nil.
type closer struct {
	store.Store
	once sync.Once
}

func (c *closer) Close() (err error) {
	c.once.Do(func() { err = c.Store.Close() })
	return err
}

// Verify is the store's Verify, if it has one.
func (c *closer) Verify() (store.VerifyReport, error) {
	v, ok := c.Store.(store.Verifier)
	if !ok {
		return store.VerifyReport{}, errors.ErrUnsupported
	}
	return v.Verify()
}

// verifyDSN opens dsn read-only and fails t unless Verify finds it clean.
// A backend without Verify, or a store the test never created, passes.
func (s *suite) verifyDSN(t testing.TB, dsn string) {
	t.Helper()
	st, err := s.b.Driver.Open(dsn, s.options(true, nil))
	if errors.Is(err, store.ErrNotExist) {
		return
	}
	if err != nil {
		t.Errorf("cleanup: Open(%s) to verify: %v", dsn, err)
		return
	}
	defer st.Close()
	if v, ok := st.(store.Verifier); ok {
		if _, err := v.Verify(); err != nil {
			t.Errorf("cleanup: Verify(%s): %v", dsn, err)
		}
	}
}

// update runs fn in st.Update and fails t on an error.
func update(t testing.TB, st store.Store, fn func(store.Tx) error) {
	t.Helper()
	if err := st.Update(fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

// view runs fn in st.View and fails t on an error.
func view(t testing.TB, st store.Store, fn func(store.Tx) error) {
	t.Helper()
	if err := st.View(fn); err != nil {
		t.Fatalf("View: %v", err)
	}
}

// appendOne appends events to stream in an Update of its own.
func appendOne(t testing.TB, st store.Store, stream string, exp store.Expect, events ...store.Event) store.Appended {
	t.Helper()
	var got store.Appended
	update(t, st, func(tx store.Tx) (err error) {
		got, err = tx.Append(stream, exp, events...)
		return err
	})
	return got
}

// tryAppend appends events to stream in an Update of its own and returns
// its error.
func tryAppend(st store.Store, stream string, exp store.Expect, events ...store.Event) (store.Appended, error) {
	var got store.Appended
	err := st.Update(func(tx store.Tx) (err error) {
		got, err = tx.Append(stream, exp, events...)
		return err
	})
	return got, err
}

// ev returns an event of type typ with data as its payload and a new id.
func ev(typ, data string) store.Event {
	return store.Event{ID: store.NewID(base), Type: typ, Data: []byte(data)}
}

// head returns the head of st.
func head(t testing.TB, st store.Store) (seq uint64, hash store.Hash) {
	t.Helper()
	view(t, st, func(tx store.Tx) error {
		seq, hash = tx.Head()
		return nil
	})
	return seq, hash
}

// all returns every record of st, read with ReadRange.
func all(t testing.TB, st store.Store) []*store.Record {
	t.Helper()
	var out []*store.Record
	view(t, st, func(tx store.Tx) error {
		return tx.ReadRange(1, 0, func(r *store.Record) error {
			out = append(out, r)
			return nil
		})
	})
	return out
}

// collect returns the records read calls fn with, cloned so that lent
// records are safe to keep.
func collect(t testing.TB, st store.Store, read func(tx store.Tx, fn func(*store.Record) error) error) []*store.Record {
	t.Helper()
	var out []*store.Record
	view(t, st, func(tx store.Tx) error {
		return read(tx, func(r *store.Record) error {
			out = append(out, clone(r))
			return nil
		})
	})
	return out
}

// clone returns a copy of r that shares no memory with it.
func clone(r *store.Record) *store.Record {
	c := *r
	c.Data = slices.Clone(r.Data)
	return &c
}

// seqs returns the seqs of recs.
func seqs(recs []*store.Record) []uint64 {
	out := make([]uint64, len(recs))
	for i, r := range recs {
		out[i] = r.Seq
	}
	return out
}

// span returns from..to.
func span(from, to uint64) []uint64 {
	var out []uint64
	for s := from; s <= to; s++ {
		out = append(out, s)
	}
	return out
}

// diff returns "" if got and want are the same record, field by field,
// or says where they differ. Times are compared as instants.
func diff(got, want *store.Record) string {
	if got == nil || want == nil {
		if got == want {
			return ""
		}
		return fmt.Sprintf("got %v, want %v", got, want)
	}
	g, w := *got, *want
	if !g.Time.Equal(w.Time) {
		return fmt.Sprintf("seq %d: time %s, want %s", w.Seq, g.Time.Format(time.RFC3339Nano), w.Time.Format(time.RFC3339Nano))
	}
	g.Time, w.Time = time.Time{}, time.Time{}
	if string(g.Data) != string(w.Data) {
		return fmt.Sprintf("seq %d: data %q, want %q", w.Seq, g.Data, w.Data)
	}
	g.Data, w.Data = nil, nil
	if !reflect.DeepEqual(g, w) {
		return fmt.Sprintf("seq %d:\n got %+v\nwant %+v", w.Seq, g, w)
	}
	return ""
}

// sameRecords fails t unless got and want hold the same records.
func sameRecords(t testing.TB, got, want []*store.Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records (seqs %v), want %d (%v)", len(got), seqs(got), len(want), seqs(want))
	}
	for i := range want {
		if d := diff(got[i], want[i]); d != "" {
			t.Fatalf("record %d: %s", i, d)
		}
	}
}
