package storetest

import (
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow/store"
)

// errFail is the error of the suite's Update callbacks that fail on
// purpose.
var errFail = errors.New("storetest: fn failed on purpose")

func (s *suite) testIdempotency(t *testing.T) {
	st, _ := s.fresh(t)
	e1, e2 := full(1), full(2)
	first := appendOne(t, st, "a", store.NoStream, e1, e2)
	appendOne(t, st, "b", store.Any, ev("t.a", "later"))
	t.Run("Duplicate", func(t *testing.T) {
		retry1, retry2 := e1, e2
		retry1.Time, retry1.Actor, retry1.Session = base.Add(time.Hour), "other", "other"
		for _, exp := range []store.Expect{store.NoStream, store.Exact(2), store.Any} {
			got, err := tryAppend(st, "a", exp, retry1, retry2)
			if err != nil || !got.Duplicate || !slices.Equal(got.Seqs, first.Seqs) || got.Version != 2 {
				t.Errorf("retry with %v = %+v, %v; want Duplicate with seqs %v at version 2", exp, got, err, first.Seqs)
			}
		}
		if n, _ := head(t, st); n != 3 {
			t.Errorf("retries moved the head to %d, want 3", n)
		}
	})
	t.Run("SameUpdate", func(t *testing.T) {
		e := ev("t.a", "twice")
		update(t, st, func(tx store.Tx) error {
			a, err := tx.Append("c", store.Any, e)
			if err != nil {
				return err
			}
			b, err := tx.Append("c", store.Any, e)
			if err != nil || !b.Duplicate || !slices.Equal(b.Seqs, a.Seqs) {
				t.Errorf("the same append twice in one Update: %+v, %v; want Duplicate of %v", b, err, a.Seqs)
			}
			return nil
		})
	})
	t.Run("ErrConflict", func(t *testing.T) {
		h, _ := head(t, st)
		for name, change := range map[string]func(*store.Event, *string){
			"Data":        func(e *store.Event, _ *string) { e.Data = []byte("other") },
			"Type":        func(e *store.Event, _ *string) { e.Type = "t.other" },
			"Schema":      func(e *store.Event, _ *string) { e.Schema++ },
			"Project":     func(e *store.Event, _ *string) { e.Project = "other" },
			"Correlation": func(e *store.Event, _ *string) { e.Correlation = store.ID{9} },
			"Causation":   func(e *store.Event, _ *string) { e.Causation = store.ID{9} },
			"Stream":      func(_ *store.Event, stream *string) { *stream = "other" },
		} {
			e, stream := e1, "a"
			change(&e, &stream)
			_, err := tryAppend(st, stream, store.Any, e)
			var vc *store.VersionConflict
			if !errors.Is(err, store.ErrConflict) || errors.As(err, &vc) {
				t.Errorf("%s: an id reused with other content = %v, want ErrConflict (not a version conflict)", name, err)
			}
		}
		fresh := ev("t.a", "new")
		if _, err := tryAppend(st, "a", store.Any, e1, fresh); !errors.Is(err, store.ErrConflict) {
			t.Errorf("a batch partly stored = %v, want ErrConflict", err)
		}
		view(t, st, func(tx store.Tx) error {
			if n, _ := tx.Head(); n != h || tx.SeqOf(fresh.ID) != 0 {
				t.Errorf("conflicts moved the head from %d to %d or stored %s", h, n, fresh.ID)
			}
			return nil
		})
	})
	t.Run("SeqOf", func(t *testing.T) {
		view(t, st, func(tx store.Tx) error {
			if a, b, c := tx.SeqOf(e1.ID), tx.SeqOf(e2.ID), tx.SeqOf(store.NewID(base)); a != 1 || b != 2 || c != 0 {
				t.Errorf("SeqOf = %d, %d, %d; want 1, 2 and 0 for an unknown id", a, b, c)
			}
			return nil
		})
	})
}

// full returns event n of the suite with every envelope field set: a
// fixed id and time, and a payload that is not text.
func full(n byte) store.Event {
	return store.Event{
		ID:          store.ID{0x01, 0x95, 0x8e, 0x1c, 0, n, 0x70, 0, 0x80, 0, 0, 0, 0, 0, 0, n},
		Type:        fmt.Sprintf("t.type%d", n),
		Schema:      uint32(n) + 1,
		Time:        base.Add(time.Duration(n) * (time.Second + time.Nanosecond)),
		Actor:       fmt.Sprintf("actor%d", n),
		Session:     fmt.Sprintf("session%d", n),
		Project:     fmt.Sprintf("p%d", n%2),
		Correlation: store.ID{0xc0, n},
		Causation:   store.ID{0xca, n},
		Data:        []byte{0x82, 0xa1, 'n', n, 0x00, 0xff, 0xc1, n},
	}
}

func (s *suite) testAtomicity(t *testing.T) {
	st, _ := s.fresh(t)
	appendOne(t, st, "a", store.Any, ev("t.a", "1"), ev("t.a", "2"))
	update(t, st, func(tx store.Tx) error {
		return putAll(tx, map[string]string{"proj_task/k1": "v1", "proj_task/k2": "v2", "gone/x": "y"})
	})
	before, buckets := all(t, st), dump(t, st, "proj_task", "gone", "new")
	lost := []store.Event{ev("t.a", "3"), ev("t.a", "4"), ev("t.a", "5")}
	err := st.Update(func(tx store.Tx) error {
		if _, err := tx.Append("a", store.Exact(2), lost[0]); err != nil {
			return err
		}
		if _, err := tx.Append("new", store.NoStream, lost[1:]...); err != nil {
			return err
		}
		if err := putAll(tx, map[string]string{"proj_task/k1": "changed", "new/k": "v"}); err != nil {
			return err
		}
		if err := tx.Delete("proj_task", []byte("k2")); err != nil {
			return err
		}
		if err := tx.DeleteBucket("gone"); err != nil {
			return err
		}
		if n, _ := tx.Head(); n != 5 {
			t.Errorf("inside the Update the head is %d, want 5", n)
		}
		return errFail
	})
	if !errors.Is(err, errFail) {
		t.Fatalf("Update = %v, want fn's error", err)
	}
	sameRecords(t, all(t, st), before)
	if got := dump(t, st, "proj_task", "gone", "new"); !maps.Equal(got, buckets) {
		t.Errorf("buckets after a failed Update: %v, want %v", got, buckets)
	}
	view(t, st, func(tx store.Tx) error {
		va, _ := tx.StreamVersion("a")
		vn, _ := tx.StreamVersion("new")
		if va != 2 || vn != 0 {
			t.Errorf("stream versions a %d, new %d after a failed Update; want 2, 0", va, vn)
		}
		for _, e := range lost {
			if seq := tx.SeqOf(e.ID); seq != 0 {
				t.Errorf("SeqOf(%s) = %d after a failed Update, want 0", e.ID, seq)
			}
		}
		return nil
	})
	// The ids of the failed Update are free, and the sequence goes on
	// from the head it had.
	got := appendOne(t, st, "a", store.Exact(2), lost[0])
	recs := all(t, st)
	if !slices.Equal(got.Seqs, []uint64{3}) || got.Version != 3 || recs[2].Prev != recs[1].Hash {
		t.Errorf("the append after a failed Update: %+v, prev %x; want seq 3, version 3, chained to seq 2", got, recs[2].Prev)
	}
}

// putAll puts "bucket/key" -> value pairs.
func putAll(tx store.Tx, kv map[string]string) error {
	for bk, v := range kv {
		b, k, _ := strings.Cut(bk, "/")
		if err := tx.Put(b, []byte(k), []byte(v)); err != nil {
			return err
		}
	}
	return nil
}

// dump returns the keys and values of buckets as "bucket/key" -> value.
func dump(t testing.TB, st store.Store, buckets ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	view(t, st, func(tx store.Tx) error {
		for _, b := range buckets {
			err := tx.Scan(b, nil, func(k, v []byte) error {
				out[b+"/"+string(k)] = string(v)
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	return out
}

// goldenHashes are the chain hashes of the records goldenAppend makes,
// as package eventlog's canonical encoding gives them (SHA-256 over the
// previous hash and the envelope): the same events chain the same on
// every backend.
var goldenHashes = []string{
	"de95239db28ea129d83f4671ad094507c229b9049fb1459e415aadfcf44b9bda",
	"9ba67c38ecf68c4c4cd991e7d90a0e1867ae1923414131f5d7ae150e28597267",
	"2fb9d424883c6f1039e2b56945f474f01ca47d4096b5ed0afb660628a0e99a55",
	"04e11de1ca95dfe881ea6cb1680760535441631b405482fa5c88676a1ded6d93",
	"85218604ea7f0f8cbc62759bc0e409af30a1c02cf7acfb8a1f0ede131dd7d2b1",
	"ffb274ebd3acfd9c8ee694e7450fa9ee783db68b346ec892dacff72248b4b5f6",
}

// goldenAppend appends events full(1..6) to three streams in four
// Updates.
func goldenAppend(t testing.TB, st store.Store) {
	t.Helper()
	appendOne(t, st, "project/p0", store.NoStream, full(1), full(2))
	appendOne(t, st, "task/p0/T-1", store.NoStream, full(3))
	appendOne(t, st, "project/p0", store.Exact(2), full(4), full(5))
	appendOne(t, st, "task/p1/T-1", store.Any, full(6))
}

func (s *suite) testChain(t *testing.T) {
	st, _ := s.fresh(t)
	goldenAppend(t, st)
	recs := all(t, st)
	t.Run("Links", func(t *testing.T) {
		var prev store.Hash
		for _, r := range recs {
			if r.Prev != prev || r.Hash == (store.Hash{}) || r.Hash == prev {
				t.Errorf("seq %d: prev %x, hash %x; want prev %x and a new hash", r.Seq, r.Prev, r.Hash, prev)
			}
			prev = r.Hash
		}
		if n, h := head(t, st); n != 6 || h != prev {
			t.Errorf("Head = %d %x, want 6 %x", n, h, prev)
		}
	})
	t.Run("RoundTrip", func(t *testing.T) {
		streams := []string{"project/p0", "project/p0", "task/p0/T-1", "project/p0", "project/p0", "task/p1/T-1"}
		versions := []uint64{1, 2, 1, 3, 4, 1}
		view(t, st, func(tx store.Tx) error {
			for i, want := range recs {
				w := *want
				w.Event = full(byte(i + 1))
				w.Seq, w.Stream, w.Version = uint64(i+1), streams[i], versions[i]
				got, err := tx.Record(uint64(i + 1))
				if err != nil {
					return err
				}
				if d := diff(got, &w); d != "" {
					t.Errorf("Record(%d): %s", i+1, d)
				}
				if d := diff(want, &w); d != "" {
					t.Errorf("ReadRange: %s", d)
				}
			}
			return nil
		})
	})
	t.Run("Deterministic", func(t *testing.T) {
		other, _ := s.fresh(t)
		goldenAppend(t, other)
		again := all(t, other)
		for i := range recs {
			if again[i].Hash != recs[i].Hash {
				t.Fatalf("seq %d: the same events hash to %x in one store and %x in another", i+1, recs[i].Hash, again[i].Hash)
			}
		}
		for i, r := range recs {
			if i < len(goldenHashes) && hex.EncodeToString(r.Hash[:]) != goldenHashes[i] {
				t.Errorf("seq %d: hash %x, want %s (the canonical encoding of package eventlog)", r.Seq, r.Hash, goldenHashes[i])
			}
		}
		if len(goldenHashes) != len(recs) {
			for _, r := range recs {
				t.Logf("%x", r.Hash)
			}
			t.Errorf("%d golden hashes, want %d", len(goldenHashes), len(recs))
		}
	})
}
