package eventlog

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestLog_Append(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		l := mustOpen(t)
		got := mustAppend(t, l, "s1", NoStream, ev("a", "1"), ev("a", "2"), ev("a", "3"))
		if want := []uint64{1, 2, 3}; !equalSeqs(got.Seqs, want) || got.Version != 3 || got.Duplicate {
			t.Fatalf("first append = %+v, want seqs %v version 3", got, want)
		}
		got = mustAppend(t, l, "s2", Any, ev("b", "4"))
		if !equalSeqs(got.Seqs, []uint64{4}) || got.Version != 1 {
			t.Fatalf("append to s2 = %+v, want seq 4 version 1", got)
		}
		got = mustAppend(t, l, "s1", Exact(3), ev("a", "5"))
		if !equalSeqs(got.Seqs, []uint64{5}) || got.Version != 4 {
			t.Fatalf("append to s1 at 3 = %+v, want seq 5 version 4", got)
		}
		got = mustAppend(t, l, "s3", Exact(0), ev("c", "6"))
		if !equalSeqs(got.Seqs, []uint64{6}) || got.Version != 1 {
			t.Fatalf("append to s3 at 0 = %+v, want seq 6 version 1", got)
		}

		recs := readAll(t, l)
		if got, want := seqsOf(recs), seqRange(1, 6); !equalSeqs(got, want) {
			t.Fatalf("seqs = %v, want %v", got, want)
		}
		wantPos := []struct {
			stream  string
			version uint64
			data    string
		}{{"s1", 1, "1"}, {"s1", 2, "2"}, {"s1", 3, "3"}, {"s2", 1, "4"}, {"s1", 4, "5"}, {"s3", 1, "6"}}
		var prev Hash
		for i, r := range recs {
			w := wantPos[i]
			if r.Stream != w.stream || r.Version != w.version || string(r.Data) != w.data {
				t.Errorf("seq %d = %q v%d %q, want %q v%d %q", r.Seq, r.Stream, r.Version, r.Data, w.stream, w.version, w.data)
			}
			if r.Prev != prev {
				t.Errorf("seq %d: prev hash does not chain to seq %d", r.Seq, r.Seq-1)
			}
			prev = r.Hash
		}
		headSeq, headHash, err := l.Head()
		if err != nil || headSeq != 6 || headHash != prev {
			t.Fatalf("Head = %d, %x, %v; want 6, %x", headSeq, headHash, err, prev)
		}
		rep, err := l.Verify()
		if err != nil {
			t.Fatalf("Verify: %v", err)
		}
		if rep.HeadSeq != 6 || rep.Streams != 3 || rep.HeadHash != prev {
			t.Fatalf("Verify report = %+v, want head 6, 3 streams", rep)
		}
	})

	t.Run("OK/Any", func(t *testing.T) {
		l := mustOpen(t)
		for i := range 3 {
			got := mustAppend(t, l, "s", Any, ev("a", "x"))
			if got.Version != uint64(i+1) {
				t.Fatalf("append %d: version %d, want %d", i, got.Version, i+1)
			}
		}
	})

	t.Run("ErrConflict/Exact", func(t *testing.T) {
		l := mustOpen(t)
		mustAppend(t, l, "s", NoStream, ev("a", "1"), ev("a", "2"))
		for _, exp := range []uint64{0, 1, 3, 100} {
			_, err := l.Append("s", Exact(exp), ev("a", "3"))
			var vc *VersionConflict
			if !errors.As(err, &vc) {
				t.Fatalf("Exact(%d): err = %v, want *VersionConflict", exp, err)
			}
			if !errors.Is(err, ErrConflict) {
				t.Errorf("Exact(%d): errors.Is(err, ErrConflict) = false", exp)
			}
			if vc.Stream != "s" || vc.Expected != exp || vc.Actual != 2 {
				t.Errorf("Exact(%d): conflict = %+v, want stream s expected %d actual 2", exp, vc, exp)
			}
		}
		if got := mustHead(t, l); got != 2 {
			t.Fatalf("head = %d after conflicts, want 2", got)
		}
	})

	t.Run("ErrConflict/NoStream", func(t *testing.T) {
		l := mustOpen(t)
		mustAppend(t, l, "s", NoStream, ev("a", "1"))
		_, err := l.Append("s", NoStream, ev("a", "2"))
		var vc *VersionConflict
		if !errors.As(err, &vc) || vc.Expected != 0 || vc.Actual != 1 {
			t.Fatalf("err = %v, want *VersionConflict expected 0 actual 1", err)
		}
	})

	t.Run("ErrConflict/NewStreamAtVersion", func(t *testing.T) {
		l := mustOpen(t)
		_, err := l.Append("s", Exact(1), ev("a", "1"))
		var vc *VersionConflict
		if !errors.As(err, &vc) || vc.Expected != 1 || vc.Actual != 0 {
			t.Fatalf("err = %v, want *VersionConflict expected 1 actual 0", err)
		}
		if got := mustHead(t, l); got != 0 {
			t.Fatalf("head = %d, want 0", got)
		}
	})
}

func TestLog_Append_Invalid(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	bad := "bad\xff"
	tests := []struct {
		name   string
		stream string
		events []Event
		want   error
	}{
		{"ErrInvalid/EmptyBatch", "s", nil, ErrInvalid},
		{"ErrInvalid/EmptyStream", "", []Event{ev("a", "")}, ErrInvalid},
		{"ErrInvalid/EmptyType", "s", []Event{ev("", "")}, ErrInvalid},
		{"ErrInvalid/StreamNotUTF8", bad, []Event{ev("a", "")}, ErrInvalid},
		{"ErrInvalid/TypeNotUTF8", "s", []Event{ev(bad, "")}, ErrInvalid},
		{"ErrInvalid/ActorNotUTF8", "s", []Event{{Type: "a", Actor: bad}}, ErrInvalid},
		{"ErrInvalid/SessionNotUTF8", "s", []Event{{Type: "a", Session: bad}}, ErrInvalid},
		{"ErrInvalid/ProjectNotUTF8", "s", []Event{{Type: "a", Project: bad}}, ErrInvalid},
		{"ErrInvalid/StreamTooLong", long(MaxStreamLen + 1), []Event{ev("a", "")}, ErrInvalid},
		{"ErrInvalid/TypeTooLong", "s", []Event{ev(long(MaxTypeLen+1), "")}, ErrInvalid},
		{"ErrInvalid/ActorTooLong", "s", []Event{{Type: "a", Actor: long(MaxFieldLen + 1)}}, ErrInvalid},
		{"ErrInvalid/SessionTooLong", "s", []Event{{Type: "a", Session: long(MaxFieldLen + 1)}}, ErrInvalid},
		{"ErrInvalid/ProjectTooLong", "s", []Event{{Type: "a", Project: long(MaxFieldLen + 1)}}, ErrInvalid},
		{"ErrInvalid/DuplicateIDInBatch", "s", []Event{evID(1, "a", "1"), evID(1, "a", "1")}, ErrInvalid},
		{"ErrInvalid/LaterEventBad", "s", []Event{ev("a", "1"), ev("", "2")}, ErrInvalid},
		{"ErrInvalid/TimeAfter2262", "s", []Event{{Type: "a", Time: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)}}, ErrInvalid},
		{"ErrInvalid/TimeBefore1678", "s", []Event{{Type: "a", Time: time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)}}, ErrInvalid},
		{"ErrTooLarge", "s", []Event{{Type: "a", Data: make([]byte, MaxPayload+1)}}, ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := mustOpen(t)
			mustAppend(t, l, "s", NoStream, evID(99, "a", "before"))
			_, before, _ := l.Head()
			_, err := l.Append(tt.stream, Any, tt.events...)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			seq, after, _ := l.Head()
			if seq != 1 || after != before {
				t.Fatalf("head moved to %d after a refused append", seq)
			}
		})
	}

	t.Run("OK/AtLimits", func(t *testing.T) {
		l := mustOpen(t)
		e := Event{
			Type:    long(MaxTypeLen),
			Actor:   long(MaxFieldLen),
			Session: long(MaxFieldLen),
			Project: long(MaxFieldLen),
			Data:    bytes.Repeat([]byte{0xa5}, MaxPayload),
		}
		got := mustAppend(t, l, long(MaxStreamLen), NoStream, e)
		var r *Record
		if err := l.View(func(tx *Tx) (err error) { r, err = tx.Record(got.Seqs[0]); return err }); err != nil {
			t.Fatalf("Record: %v", err)
		}
		if len(r.Data) != MaxPayload || len(r.Stream) != MaxStreamLen || r.Project != e.Project {
			t.Fatalf("stored record has %d bytes of data, stream of %d", len(r.Data), len(r.Stream))
		}
	})

	t.Run("OK/TimeAtLimits", func(t *testing.T) {
		l := mustOpen(t)
		for _, when := range []time.Time{time.Unix(0, math.MinInt64), time.Unix(0, math.MaxInt64)} {
			got := mustAppend(t, l, "s", Any, Event{Type: "a", Time: when})
			r := readAll(t, l)[got.Seqs[0]-1]
			if !r.Time.Equal(when) {
				t.Errorf("stored time %v, want %v", r.Time, when)
			}
		}
	})

	t.Run("OK/UTF8", func(t *testing.T) {
		l := mustOpen(t)
		mustAppend(t, l, "스트림/☃", NoStream, Event{Type: "작업.생성", Actor: "é", Project: "プロジェクト"})
	})
}

func TestLog_Append_Idempotent(t *testing.T) {
	t.Run("Duplicate", func(t *testing.T) {
		l := mustOpen(t)
		batch := []Event{evID(1, "a", "1"), evID(2, "a", "2")}
		first := mustAppend(t, l, "s", NoStream, batch...)
		mustAppend(t, l, "s", Exact(2), evID(3, "a", "3")) // the stream moves on

		retry := []Event{batch[0], batch[1]}
		retry[0].Time, retry[0].Actor, retry[0].Session = testClock.Add(time.Hour), "someone else", "other"
		got, err := l.Append("s", NoStream, retry...) // stale expectation: still a duplicate
		if err != nil {
			t.Fatalf("retry: %v", err)
		}
		if !got.Duplicate || !equalSeqs(got.Seqs, first.Seqs) || got.Version != 3 {
			t.Fatalf("retry = %+v, want duplicate of seqs %v at version 3", got, first.Seqs)
		}
		if seq := mustHead(t, l); seq != 3 {
			t.Fatalf("head = %d after a duplicate, want 3", seq)
		}
	})

	t.Run("Duplicate/Subset", func(t *testing.T) {
		l := mustOpen(t)
		mustAppend(t, l, "s", NoStream, evID(1, "a", "1"), evID(2, "a", "2"), evID(3, "a", "3"))
		got, err := l.Append("s", Any, evID(3, "a", "3"), evID(1, "a", "1"))
		if err != nil || !got.Duplicate || !equalSeqs(got.Seqs, []uint64{3, 1}) {
			t.Fatalf("Append = %+v, %v; want duplicate of seqs [3 1]", got, err)
		}
	})

	t.Run("Duplicate/InUpdate", func(t *testing.T) {
		l := mustOpen(t)
		err := l.Update(func(tx *Tx) error {
			if _, err := tx.Append("s", NoStream, evID(1, "a", "1")); err != nil {
				return err
			}
			got, err := tx.Append("s", NoStream, evID(1, "a", "1"))
			if err != nil || !got.Duplicate || got.Seqs[0] != 1 {
				t.Errorf("second append in one tx = %+v, %v; want duplicate of seq 1", got, err)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Update: %v", err)
		}
	})

	conflicts := []struct {
		name   string
		stream string
		events []Event
	}{
		{"ErrConflict/OtherData", "s", []Event{evID(1, "a", "changed")}},
		{"ErrConflict/OtherType", "s", []Event{evID(1, "b", "1")}},
		{"ErrConflict/OtherSchema", "s", []Event{{ID: testID(1), Type: "a", Schema: 2, Data: []byte("1")}}},
		{"ErrConflict/OtherProject", "s", []Event{{ID: testID(1), Type: "a", Project: "p", Data: []byte("1")}}},
		{"ErrConflict/OtherCausation", "s", []Event{{ID: testID(1), Type: "a", Causation: testID(7), Data: []byte("1")}}},
		{"ErrConflict/OtherStream", "t", []Event{evID(1, "a", "1")}},
		{"ErrConflict/PartlyStored", "s", []Event{evID(1, "a", "1"), evID(2, "a", "2")}},
		{"ErrConflict/PartlyStoredNewFirst", "s", []Event{evID(2, "a", "2"), evID(1, "a", "1")}},
	}
	for _, tt := range conflicts {
		t.Run(tt.name, func(t *testing.T) {
			l := mustOpen(t)
			mustAppend(t, l, "s", NoStream, evID(1, "a", "1"))
			_, err := l.Append(tt.stream, Any, tt.events...)
			if !errors.Is(err, ErrConflict) {
				t.Fatalf("err = %v, want ErrConflict", err)
			}
			var vc *VersionConflict
			if errors.As(err, &vc) {
				t.Fatalf("err = %v is a version conflict, want an id conflict", err)
			}
			if seq := mustHead(t, l); seq != 1 {
				t.Fatalf("head = %d, want 1: nothing appended", seq)
			}
		})
	}
}

func TestLog_Append_Assigns(t *testing.T) {
	t.Run("OK/IDAndTime", func(t *testing.T) {
		l := mustOpen(t)
		in := []Event{ev("a", "1"), ev("a", "2")}
		mustAppend(t, l, "s", NoStream, in...)
		if !in[0].ID.IsZero() || !in[0].Time.IsZero() {
			t.Fatalf("Append modified the caller's events: %+v", in[0])
		}
		recs := readAll(t, l)
		if recs[0].ID.IsZero() || recs[0].ID == recs[1].ID {
			t.Fatalf("assigned ids %s and %s, want distinct non-zero ids", recs[0].ID, recs[1].ID)
		}
		for _, r := range recs {
			if r.ID[6]>>4 != 7 || r.ID[8]>>6 != 2 {
				t.Errorf("assigned id %s is not a UUIDv7", r.ID)
			}
			if !r.Time.Equal(testClock) {
				t.Errorf("assigned time %v, want the clock's %v", r.Time, testClock)
			}
		}
	})

	t.Run("OK/Given", func(t *testing.T) {
		l := mustOpen(t)
		when := time.Date(2024, 1, 2, 3, 4, 5, 6, time.FixedZone("X", 3600))
		e := Event{
			ID: testID(1), Type: "t", Schema: 3, Time: when, Actor: "ann", Session: "sess",
			Project: "p", Correlation: testID(2), Causation: testID(3), Data: []byte{0x81, 0xa1, 'k', 0x01},
		}
		mustAppend(t, l, "s", NoStream, e)
		r := readAll(t, l)[0]
		want := &Record{Seq: 1, Stream: "s", Version: 1, Event: e, Hash: r.Hash}
		if diff := sameRecord(r, want); diff != "" {
			t.Fatalf("stored record: %s", diff)
		}
		if r.Time.Location() != time.UTC {
			t.Errorf("time location = %v, want UTC", r.Time.Location())
		}
	})
}

func TestLog_Append_TimeFollowsSeq(t *testing.T) {
	t.Run("ClockStepsBack", func(t *testing.T) {
		now := testClock
		l := mustOpen(t, Options{NoSync: true, Now: func() time.Time { return now }})
		mustAppend(t, l, "s", Any, Event{Type: "a"})
		now = testClock.Add(-time.Hour) // the clock is set back
		mustAppend(t, l, "s", Any, Event{Type: "b"})
		now = testClock.Add(time.Second)
		mustAppend(t, l, "s", Any, Event{Type: "c"})
		got := readAll(t, l)
		want := []time.Time{testClock, testClock, testClock.Add(time.Second)}
		for i, r := range got {
			if !r.Time.Equal(want[i]) {
				t.Errorf("seq %d time %s, want %s (never before seq %d's)", r.Seq, r.Time, want[i], r.Seq-1)
			}
		}
	})
	t.Run("EarlierTimesInOneBatch", func(t *testing.T) {
		l := mustOpen(t)
		mustAppend(t, l, "s", Any, Event{Type: "a", Time: testClock})
		mustAppend(t, l, "s", Any,
			Event{Type: "b", Time: testClock.Add(-2 * time.Hour)},
			Event{Type: "c", Time: testClock.Add(time.Minute)},
			Event{Type: "d", Time: testClock.Add(-time.Hour)})
		got := readAll(t, l)
		want := []time.Time{testClock, testClock, testClock.Add(time.Minute), testClock.Add(time.Minute)}
		for i, r := range got {
			if !r.Time.Equal(want[i]) {
				t.Errorf("seq %d time %s, want %s", r.Seq, r.Time, want[i])
			}
		}
	})
}
