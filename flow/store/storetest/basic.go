package storetest

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow/store"
)

func (s *suite) testOpen(t *testing.T) {
	t.Run("ErrNotExist", func(t *testing.T) {
		dsn := s.b.DSN(t)
		for _, ro := range []bool{false, true} {
			o := s.options(ro, nil)
			o.Create = false
			if st, err := s.b.Driver.Open(dsn, o); !errors.Is(err, store.ErrNotExist) {
				if err == nil {
					st.Close()
				}
				t.Errorf("Open of a missing store (ReadOnly=%v) = %v, want ErrNotExist", ro, err)
			}
		}
	})
	t.Run("ReadOnly", func(t *testing.T) {
		st, dsn := s.fresh(t)
		appendOne(t, st, "s", store.Any, ev("t.a", "1"))
		st.Close()
		ro := s.open(t, dsn, true)
		if err := ro.Update(func(store.Tx) error { return nil }); !errors.Is(err, store.ErrReadOnly) {
			t.Errorf("Update on a read-only store = %v, want ErrReadOnly", err)
		}
		if n, _ := head(t, ro); n != 1 {
			t.Errorf("read-only head = %d, want 1", n)
		}
	})
	t.Run("ErrClosed", func(t *testing.T) {
		st, _ := s.fresh(t)
		appendOne(t, st, "s", store.Any, ev("t.a", "1"))
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		if err := st.(*closer).Store.View(func(store.Tx) error { return nil }); !errors.Is(err, store.ErrClosed) {
			t.Errorf("View after Close = %v, want ErrClosed", err)
		}
		if err := st.(*closer).Store.Update(func(store.Tx) error { return nil }); !errors.Is(err, store.ErrClosed) {
			t.Errorf("Update after Close = %v, want ErrClosed", err)
		}
	})
	if s.b.Exclusive {
		t.Run("ErrBusy", s.testBusy)
	} else {
		t.Run("TwoOpen", s.testTwoOpen)
	}
}

// testBusy checks an exclusive backend's lock: a second Open waits for
// the first store's Close, and fails with ErrBusy past its timeout.
func (s *suite) testBusy(t *testing.T) {
	st, dsn := s.fresh(t)
	o := s.options(false, nil)
	o.Timeout = 50 * time.Millisecond
	if other, err := s.b.Driver.Open(dsn, o); !errors.Is(err, store.ErrBusy) {
		if err == nil {
			other.Close()
		}
		t.Fatalf("a second Open with a 50 ms timeout = %v, want ErrBusy", err)
	}
	opened := make(chan error, 1)
	go func() {
		other, err := s.b.Driver.Open(dsn, s.options(false, nil))
		if err == nil {
			err = other.Close()
		}
		opened <- err
	}()
	time.Sleep(100 * time.Millisecond)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-opened; err != nil {
		t.Fatalf("a second Open waiting for the first's Close: %v", err)
	}
}

// testTwoOpen checks a shared backend: two stores open on one DSN append
// in turn under one sequence.
func (s *suite) testTwoOpen(t *testing.T) {
	a, dsn := s.fresh(t)
	b := s.open(t, dsn, false)
	for i := range 6 {
		st := []store.Store{a, b}[i%2]
		if got := appendOne(t, st, "s", store.Exact(uint64(i)), ev("t.a", "x")); got.Seqs[0] != uint64(i+1) {
			t.Fatalf("append %d got seq %d, want %d", i, got.Seqs[0], i+1)
		}
	}
}

func (s *suite) testSeqs(t *testing.T) {
	t.Run("Empty", func(t *testing.T) {
		st, _ := s.fresh(t)
		view(t, st, func(tx store.Tx) error {
			seq, hash := tx.Head()
			ht, err := tx.HeadTime()
			v, vs := tx.StreamVersion("s")
			r, rerr := tx.Record(1)
			if seq != 0 || hash != (store.Hash{}) || err != nil || !ht.IsZero() || v != 0 || vs != 0 || r != nil || rerr != nil {
				t.Errorf("empty store: Head %d %x, HeadTime %v %v, StreamVersion %d %d, Record(1) %v %v; want zeros",
					seq, hash, ht, err, v, vs, r, rerr)
			}
			if tx.Writable() {
				t.Error("a View's Tx is Writable")
			}
			return nil
		})
	})
	t.Run("GapFree", func(t *testing.T) {
		st, _ := s.fresh(t)
		var want []uint64
		for i, n := range []int{1, 3, 1, 5, 2} {
			stream := []string{"a", "b", "c"}[i%3]
			events := make([]store.Event, n)
			for j := range events {
				events[j] = ev("t.a", stream)
			}
			got := appendOne(t, st, stream, store.Any, events...)
			next := uint64(len(want)) + 1
			want = append(want, span(next, next+uint64(n)-1)...)
			if !slices.Equal(got.Seqs, want[len(want)-n:]) {
				t.Fatalf("append %d: Seqs %v, want %v", i, got.Seqs, want[len(want)-n:])
			}
		}
		update(t, st, func(tx store.Tx) error {
			if !tx.Writable() {
				t.Error("an Update's Tx is not Writable")
			}
			for _, stream := range []string{"a", "d"} {
				h, _ := tx.Head()
				got, err := tx.Append(stream, store.Any, ev("t.b", stream))
				if err != nil {
					return err
				}
				if now, _ := tx.Head(); got.Seqs[0] != h+1 || now != h+1 {
					t.Errorf("in one Update: append got seq %d and head %d, want %d", got.Seqs[0], now, h+1)
				}
			}
			return nil
		})
		recs := all(t, st)
		if got := seqs(recs); !slices.Equal(got, span(1, 14)) {
			t.Fatalf("seqs %v, want 1..14", got)
		}
		if n, h := head(t, st); n != 14 || h != recs[13].Hash {
			t.Errorf("Head = %d %x, want 14 and the hash of record 14 (%x)", n, h, recs[13].Hash)
		}
		view(t, st, func(tx store.Tx) error {
			for _, seq := range []uint64{0, 15, 1 << 40} {
				if r, err := tx.Record(seq); r != nil || err != nil {
					t.Errorf("Record(%d) = %v, %v; want nil, nil", seq, r, err)
				}
			}
			return nil
		})
	})
}

func (s *suite) testTimes(t *testing.T) {
	t.Run("Clock", func(t *testing.T) {
		dsn := s.b.DSN(t)
		t.Cleanup(func() { s.verifyDSN(t, dsn) })
		now := base.Add(time.Hour)
		st, err := s.b.Driver.Open(dsn, s.options(false, func() time.Time { return now }))
		if err != nil {
			t.Fatal(err)
		}
		st = closeOnCleanup(t, st)
		appendOne(t, st, "s", store.Any, store.Event{Type: "t.a"})
		r := all(t, st)[0]
		if !r.Time.Equal(now) {
			t.Errorf("an event without a time got %v, want the store's clock, %v", r.Time, now)
		}
		if r.ID.IsZero() || r.ID[6]>>4 != 7 {
			t.Errorf("an event without an id got %s, want a new UUIDv7", r.ID)
		}
	})
	t.Run("NeverBackwards", func(t *testing.T) {
		st, _ := s.fresh(t)
		at := func(d time.Duration, more ...time.Duration) []store.Event {
			var out []store.Event
			for _, d := range append([]time.Duration{d}, more...) {
				e := ev("t.a", "x")
				e.Time = base.Add(d)
				out = append(out, e)
			}
			return out
		}
		const ns = time.Nanosecond
		appendOne(t, st, "s", store.Any, at(10*time.Second+123456789*ns)...)
		appendOne(t, st, "s", store.Any, at(5*time.Second)...)                       // clamped to 10.123456789
		appendOne(t, st, "t", store.Any, at(20*time.Second+1*ns, 15*time.Second)...) // second clamped
		appendOne(t, st, "s", store.Any, at(21*time.Second)...)
		want := []time.Duration{10*time.Second + 123456789*ns, 10*time.Second + 123456789*ns,
			20*time.Second + ns, 20*time.Second + ns, 21 * time.Second}
		recs := all(t, st)
		for i, r := range recs {
			if !r.Time.Equal(base.Add(want[i])) {
				t.Errorf("seq %d: time %s, want %s", r.Seq, r.Time.Format(time.RFC3339Nano), base.Add(want[i]).Format(time.RFC3339Nano))
			}
		}
		view(t, st, func(tx store.Tx) error {
			if ht, err := tx.HeadTime(); err != nil || !ht.Equal(recs[len(recs)-1].Time) {
				t.Errorf("HeadTime = %v, %v; want %v", ht, err, recs[len(recs)-1].Time)
			}
			return nil
		})
	})
}

func (s *suite) testStreams(t *testing.T) {
	t.Run("Versions", func(t *testing.T) {
		st, _ := s.fresh(t)
		for i, stream := range strings.Split("a b a a c b a", " ") {
			got := appendOne(t, st, stream, store.Any, ev("t.a", stream), ev("t.b", stream))
			if got.Seqs[1] != uint64(2*i+2) {
				t.Fatalf("append %d: Seqs %v, want %d, %d", i, got.Seqs, 2*i+1, 2*i+2)
			}
		}
		view(t, st, func(tx store.Tx) error {
			for _, c := range []struct {
				stream   string
				version  uint64
				seqs     []uint64
				lastSeqs uint64
			}{
				{"a", 8, []uint64{1, 2, 5, 6, 7, 8, 13, 14}, 14},
				{"b", 4, []uint64{3, 4, 11, 12}, 12},
				{"c", 2, []uint64{9, 10}, 10},
				{"d", 0, nil, 0},
			} {
				if v, seq := tx.StreamVersion(c.stream); v != c.version || seq != c.lastSeqs {
					t.Errorf("StreamVersion(%s) = %d, %d; want %d, %d", c.stream, v, seq, c.version, c.lastSeqs)
				}
				var got []uint64
				err := tx.ReadStream(c.stream, 0, func(r *store.Record) error {
					if r.Stream != c.stream || r.Version != uint64(len(got)+1) {
						t.Errorf("ReadStream(%s): seq %d is %s version %d, want version %d", c.stream, r.Seq, r.Stream, r.Version, len(got)+1)
					}
					got = append(got, r.Seq)
					return nil
				})
				if err != nil || !slices.Equal(got, c.seqs) {
					t.Errorf("ReadStream(%s) = %v, %v; want %v", c.stream, got, err, c.seqs)
				}
			}
			return nil
		})
	})
	t.Run("Expect", func(t *testing.T) {
		st, _ := s.fresh(t)
		for i, c := range []struct {
			stream  string
			exp     store.Expect
			version uint64 // after, or the actual version of a conflict
			ok      bool
		}{
			{"a", store.NoStream, 1, true},
			{"a", store.NoStream, 1, false},
			{"a", store.Exact(1), 2, true},
			{"a", store.Exact(1), 2, false}, // stale
			{"a", store.Exact(3), 2, false}, // ahead
			{"a", store.Exact(0), 2, false},
			{"a", store.Any, 3, true},
			{"b", store.Exact(0), 1, true},
			{"c", store.Exact(1), 0, false},
			{"c", store.Any, 1, true},
		} {
			h, _ := head(t, st)
			got, err := tryAppend(st, c.stream, c.exp, ev("t.a", c.stream))
			if c.ok {
				if err != nil || got.Version != c.version || len(got.Seqs) != 1 || got.Seqs[0] != h+1 {
					t.Errorf("%d: Append(%s, %v) = %+v, %v; want version %d at seq %d", i, c.stream, c.exp, got, err, c.version, h+1)
				}
				continue
			}
			var vc *store.VersionConflict
			if !errors.As(err, &vc) || !errors.Is(err, store.ErrConflict) {
				t.Errorf("%d: Append(%s, %v) = %v, want a *VersionConflict matching ErrConflict", i, c.stream, c.exp, err)
				continue
			}
			if *vc != (store.VersionConflict{Stream: c.stream, Expected: c.exp.Version(), Actual: c.version}) {
				t.Errorf("%d: conflict %+v, want stream %s expected %d actual %d", i, *vc, c.stream, c.exp.Version(), c.version)
			}
			if now, _ := head(t, st); now != h {
				t.Errorf("%d: a conflict moved the head from %d to %d", i, h, now)
			}
		}
	})
	t.Run("ConflictInUpdate", func(t *testing.T) {
		// A conflicting append appends nothing, and what else the Update
		// wrote commits when fn returns nil.
		st, _ := s.fresh(t)
		appendOne(t, st, "a", store.Any, ev("t.a", "1"))
		lost := ev("t.a", "lost")
		update(t, st, func(tx store.Tx) error {
			if _, err := tx.Append("b", store.Any, ev("t.a", "2")); err != nil {
				return err
			}
			if _, err := tx.Append("a", store.Exact(0), lost, ev("t.a", "lost too")); !errors.Is(err, store.ErrConflict) {
				t.Errorf("stale Append in an Update = %v, want ErrConflict", err)
			}
			_, err := tx.Append("c", store.Any, ev("t.a", "3"))
			return err
		})
		recs := all(t, st)
		if got := seqs(recs); !slices.Equal(got, span(1, 3)) || recs[1].Stream != "b" || recs[2].Stream != "c" {
			t.Fatalf("seqs %v, want 1..3 holding a, b, c", got)
		}
		view(t, st, func(tx store.Tx) error {
			if v, _ := tx.StreamVersion("a"); v != 1 || tx.SeqOf(lost.ID) != 0 {
				t.Errorf("stream a at version %d, lost event at seq %d; want 1 and none", v, tx.SeqOf(lost.ID))
			}
			return nil
		})
	})
}

func (s *suite) testInvalid(t *testing.T) {
	st, _ := s.fresh(t)
	appendOne(t, st, "s", store.Any, ev("t.a", "first"))
	long := func(n int) string { return strings.Repeat("x", n) }
	dup := ev("t.a", "dup")
	withActor := ev("t.a", "x")
	withActor.Actor = long(store.MaxFieldLen + 1)
	withProject := ev("t.a", "x")
	withProject.Project = long(store.MaxFieldLen + 1)
	big := ev("t.a", "")
	big.Data = make([]byte, store.MaxPayload+1)
	for _, c := range []struct {
		name   string
		stream string
		events []store.Event
		want   error
	}{
		{"EmptyBatch", "s", nil, store.ErrInvalid},
		{"EmptyStream", "", []store.Event{ev("t.a", "x")}, store.ErrInvalid},
		{"LongStream", long(store.MaxStreamLen + 1), []store.Event{ev("t.a", "x")}, store.ErrInvalid},
		{"EmptyType", "s", []store.Event{ev("", "x")}, store.ErrInvalid},
		{"LongType", "s", []store.Event{ev(long(store.MaxTypeLen+1), "x")}, store.ErrInvalid},
		{"LongActor", "s", []store.Event{withActor}, store.ErrInvalid},
		{"LongProject", "s", []store.Event{withProject}, store.ErrInvalid},
		{"RepeatedID", "s", []store.Event{dup, ev("t.a", "x"), dup}, store.ErrInvalid},
		{"TooLarge", "s", []store.Event{ev("t.a", "x"), big}, store.ErrTooLarge},
	} {
		if _, err := tryAppend(st, c.stream, store.Any, c.events...); !errors.Is(err, c.want) {
			t.Errorf("%s: Append = %v, want %v", c.name, err, c.want)
		}
	}
	if n, _ := head(t, st); n != 1 {
		t.Errorf("refused appends moved the head to %d, want 1", n)
	}
	max := ev("t.a", "")
	max.Data = make([]byte, store.MaxPayload)
	max.Data[0], max.Data[store.MaxPayload-1] = 1, 2
	appendOne(t, st, long(store.MaxStreamLen), store.Any, max)
	if r := all(t, st)[1]; string(r.Data) != string(max.Data) || r.Stream != long(store.MaxStreamLen) {
		t.Errorf("an event at the limits came back with %d bytes of data on a stream of %d bytes", len(r.Data), len(r.Stream))
	}
	view(t, st, func(tx store.Tx) error {
		if _, err := tx.Append("s", store.Any, ev("t.a", "x")); !errors.Is(err, store.ErrReadOnly) {
			t.Errorf("Append in a View = %v, want ErrReadOnly", err)
		}
		return nil
	})
}
