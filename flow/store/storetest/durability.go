package storetest

import (
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow/store"
)

// state is what a store holds, as the suite reads it back.
type state struct {
	recs     []*store.Record
	head     uint64
	hash     store.Hash
	headTime time.Time
	streams  map[string][2]uint64 // version, seq
	buckets  map[string]string
}

var stateStreams = []string{"s/a", "s/b", "s/c", "none"}
var stateBuckets = []string{"proj_task", "snapshots", "idem"}

func readState(t testing.TB, st store.Store) state {
	t.Helper()
	x := state{recs: all(t, st), streams: map[string][2]uint64{}, buckets: dump(t, st, stateBuckets...)}
	view(t, st, func(tx store.Tx) (err error) {
		x.head, x.hash = tx.Head()
		for _, s := range stateStreams {
			v, seq := tx.StreamVersion(s)
			x.streams[s] = [2]uint64{v, seq}
		}
		for _, r := range x.recs {
			if seq := tx.SeqOf(r.ID); seq != r.Seq {
				t.Errorf("SeqOf(%s) = %d, want %d", r.ID, seq, r.Seq)
			}
		}
		x.headTime, err = tx.HeadTime()
		return err
	})
	return x
}

// sameState fails t unless got and want are the same.
func sameState(t testing.TB, got, want state) {
	t.Helper()
	sameRecords(t, got.recs, want.recs)
	if got.head != want.head || got.hash != want.hash || !got.headTime.Equal(want.headTime) {
		t.Errorf("head %d %x at %v, want %d %x at %v", got.head, got.hash, got.headTime, want.head, want.hash, want.headTime)
	}
	if !maps.Equal(got.streams, want.streams) {
		t.Errorf("streams %v, want %v", got.streams, want.streams)
	}
	if !maps.Equal(got.buckets, want.buckets) {
		t.Errorf("buckets %q, want %q", got.buckets, want.buckets)
	}
}

// filled makes a store with records and buckets in it and closes it.
func (s *suite) filled(t *testing.T) (dsn string, want state) {
	st, dsn := s.fresh(t)
	for i := range 12 {
		stream := stateStreams[i%3]
		e := ev("t.a", stream)
		e.Project = []string{"p", "q"}[i%2]
		e.Time = base.Add(time.Duration(i) * time.Minute)
		update(t, st, func(tx store.Tx) error {
			if _, err := tx.Append(stream, store.Any, e); err != nil {
				return err
			}
			return putAll(tx, map[string]string{"proj_task/" + stream: e.ID.String(), "idem/" + e.ID.String(): stream})
		})
	}
	update(t, st, func(tx store.Tx) error {
		return tx.Put(bucketSnapshots, snapshotKey("p", 12), blob(64<<10, 12))
	})
	want = readState(t, st)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return dsn, want
}

func (s *suite) testDurability(t *testing.T) {
	dsn, want := s.filled(t)
	st := s.open(t, dsn, false)
	sameState(t, readState(t, st), want)

	// The store goes on where it stopped: seq, chain, stream version,
	// and the time of the head, which an earlier time is clamped to.
	e := ev("t.a", "after")
	e.Time = base
	got := appendOne(t, st, "s/a", store.Exact(want.streams["s/a"][0]), e)
	r := all(t, st)[want.head]
	if got.Seqs[0] != want.head+1 || r.Prev != want.hash || !r.Time.Equal(want.headTime) || r.Version != want.streams["s/a"][0]+1 {
		t.Errorf("the first append after reopening: seq %d, prev %x, time %v, version %d; want %d, %x, %v, %d",
			r.Seq, r.Prev, r.Time, r.Version, want.head+1, want.hash, want.headTime, want.streams["s/a"][0]+1)
	}
	want = readState(t, st)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	sameState(t, readState(t, s.open(t, dsn, true)), want)
}

func (s *suite) testOptional(t *testing.T) {
	t.Run("Verify", func(t *testing.T) {
		dsn, want := s.filled(t)
		st := s.open(t, dsn, true)
		rep, err := st.(*closer).Verify()
		if errors.Is(err, errors.ErrUnsupported) {
			t.Skip("the store is not a store.Verifier")
		}
		if err != nil || rep.HeadSeq != want.head || rep.HeadHash != want.hash || rep.Streams != 3 || rep.Projects != 2 {
			t.Errorf("Verify = %+v, %v; want head %d %x, 3 streams, 2 projects", rep, err, want.head, want.hash)
		}
	})
	t.Run("Compact", func(t *testing.T) {
		c, ok := s.b.Driver.(store.Compacter)
		if !ok {
			t.Skip("the driver is not a store.Compacter")
		}
		dsn, want := s.filled(t)
		rep, err := c.Compact(dsn, s.options(false, nil))
		if err != nil || rep.Verified.HeadSeq != want.head || rep.Verified.HeadHash != want.hash {
			t.Fatalf("Compact = %+v, %v; want a verified head of %d", rep, err, want.head)
		}
		sameState(t, readState(t, s.open(t, dsn, true)), want)
	})
	t.Run("Salvage", func(t *testing.T) {
		sv, ok := s.b.Driver.(store.Salvager)
		if !ok {
			t.Skip("the driver is not a store.Salvager")
		}
		dsn, want := s.filled(t)
		var got []*store.Record
		rep, err := sv.Salvage(dsn, s.options(true, nil), func(r *store.Record) error {
			got = append(got, clone(r))
			return nil
		})
		if err != nil || rep.HeadSeq != want.head || rep.Kept != want.head || rep.KeptHash != want.hash ||
			rep.Lost() != 0 || rep.Stranded != 0 || rep.PastHead != 0 || len(rep.Damage) != 0 {
			t.Errorf("Salvage of a good store = %+v, %v; want all %d records kept", rep, err, want.head)
		}
		sameRecords(t, got, want.recs)
		if !slices.Equal(seqs(got), span(1, want.head)) {
			t.Errorf("Salvage handed over %v", seqs(got))
		}
	})
}
