package eventlog

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// splitFixture appends n records over projects p0..p(projects-1) and
// records of no project, in an order that mixes them.
func splitFixture(t *testing.T, n, projects int) *Log {
	t.Helper()
	l := mustOpen(t)
	for i := range n {
		e := evID(uint64(i+1), "e", fmt.Sprint(i))
		if i%7 != 0 {
			e.Project = fmt.Sprintf("p%d", (i*5)%projects)
		}
		mustAppend(t, l, fmt.Sprintf("s%d", i%11), Any, e)
	}
	return l
}

// splitSizes are the batch lengths and channel depths the ReplaySplit
// tests run with: ReplaySplit's own, and small ones, so that the
// fixture's records make many batches and fill the channels.
var splitSizes = []struct{ batchLen, ahead int }{{splitBatchLen, splitAhead}, {16, 2}}

// collectSplit replays l on workers goroutines, in batches of batchLen
// with ahead of them on a channel, routing by project, and returns the
// copies of the records each worker was handed, and the projects in the
// order route saw them.
func collectSplit(t *testing.T, l *Log, workers, batchLen, ahead int) ([][]*Record, []string, error) {
	t.Helper()
	got := make([][]*Record, workers)
	var routed []string
	owner := map[string]int{}
	var mu sync.Mutex // only to make the race detector sure of the test's own slices
	err := l.View(func(tx *Tx) error {
		return tx.replaySplit(1, 0, workers, batchLen, ahead, func(project []byte) int {
			routed = append(routed, string(project))
			w, ok := owner[string(project)]
			if !ok {
				w = len(owner) % workers
				owner[string(project)] = w
			}
			return w
		}, func(w int, r *Record) error {
			c := *r
			c.Data = bytes.Clone(r.Data)
			mu.Lock()
			got[w] = append(got[w], &c)
			mu.Unlock()
			return nil
		})
	})
	return got, routed, err
}

// ReplaySplit hands every record to the worker its project's route
// names, decoded as Replay decodes it, each worker's in seq order.
func TestTx_ReplaySplit(t *testing.T) {
	const n = 2000 // several small batches per worker
	l := splitFixture(t, n, 5)
	want := collectReplay(t, l, 1, 0)
	for _, workers := range []int{1, 2, 3, 8} {
		for _, size := range splitSizes {
			t.Run(fmt.Sprintf("OK/%d/%d", workers, size.batchLen), func(t *testing.T) {
				got, routed, err := collectSplit(t, l, workers, size.batchLen, size.ahead)
				if err != nil {
					t.Fatal(err)
				}
				for i, r := range want {
					if routed[i] != r.Project {
						t.Fatalf("seq %d: routed as project %q, want %q", r.Seq, routed[i], r.Project)
					}
				}
				seen := 0
				workerOf := map[string]int{}
				for w, rs := range got {
					for i, r := range rs {
						if i > 0 && r.Seq <= rs[i-1].Seq {
							t.Fatalf("worker %d: seq %d after %d", w, r.Seq, rs[i-1].Seq)
						}
						if d := sameRecord(r, want[r.Seq-1]); d != "" {
							t.Fatalf("seq %d: %s", r.Seq, d)
						}
						if o, ok := workerOf[r.Project]; ok && o != w {
							t.Fatalf("project %q on workers %d and %d", r.Project, o, w)
						}
						workerOf[r.Project] = w
						seen++
					}
				}
				if seen != n {
					t.Fatalf("the workers were handed %d records, want %d", seen, n)
				}
			})
		}
	}

	t.Run("ErrStop", func(t *testing.T) {
		err := l.View(func(tx *Tx) error {
			return tx.ReplaySplit(1, 0, 2, func([]byte) int { return 0 }, func(_ int, r *Record) error {
				if r.Seq == 600 {
					return ErrStop
				}
				return nil
			})
		})
		if err != nil {
			t.Fatalf("ReplaySplit with ErrStop: %v", err)
		}
	})

	for _, size := range splitSizes {
		t.Run(fmt.Sprintf("EarliestError/%d", size.batchLen), func(t *testing.T) {
			boom := errors.New("boom")
			err := l.View(func(tx *Tx) error {
				return tx.replaySplit(1, 0, 3, size.batchLen, size.ahead, func(p []byte) int { return len(p) % 3 }, func(_ int, r *Record) error {
					if r.Seq == 1500 || r.Seq == 900 {
						return fmt.Errorf("at %d: %w", r.Seq, boom)
					}
					return nil
				})
			})
			if !errors.Is(err, boom) || err.Error() != "at 900: boom" {
				t.Fatalf("ReplaySplit = %v, want the error at seq 900", err)
			}
		})
	}

	t.Run("RouteOutOfRange", func(t *testing.T) {
		got := 0
		err := l.View(func(tx *Tx) error {
			return tx.ReplaySplit(1, 0, 2, func([]byte) int { return 7 }, func(w int, _ *Record) error {
				if w != 0 {
					return fmt.Errorf("worker %d", w)
				}
				got++
				return nil
			})
		})
		if err != nil || got != n {
			t.Fatalf("ReplaySplit = %v with %d records, want all %d on worker 0", err, got, n)
		}
	})
}

// A damaged record fails ReplaySplit as it fails Replay: the corruption
// of the earliest damaged record, whichever worker decodes it.
func TestTx_ReplaySplit_Corruption(t *testing.T) {
	splitAll := func(path string) error {
		l, err := Open(path, Options{ReadOnly: true})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer l.Close()
		return l.View(func(tx *Tx) error {
			return tx.ReplaySplit(1, 0, 3, func(p []byte) int { return len(p) }, func(int, *Record) error { return nil })
		})
	}
	for _, tt := range []struct {
		name   string
		damage func(tx *bolt.Tx) error
		at     uint64
	}{
		{"FlippedByte", func(tx *bolt.Tx) error {
			b := rawRecord(tx, 4)
			b[len(b)/2] ^= 0x10
			return tx.Bucket(bucketLog).Put(seqKey(4), b)
		}, 4},
		{"Truncated", func(tx *bolt.Tx) error { // its project cannot be read either
			return tx.Bucket(bucketLog).Put(seqKey(3), rawRecord(tx, 3)[:5])
		}, 3},
		{"StoredUnderOtherSeq", func(tx *bolt.Tx) error {
			return tx.Bucket(bucketLog).Put(seqKey(6), rawRecord(tx, 5))
		}, 6},
		{"Missing", func(tx *bolt.Tx) error { return tx.Bucket(bucketLog).Delete(seqKey(7)) }, 7},
		{"TwoDamaged", func(tx *bolt.Tx) error {
			for _, seq := range []uint64{8, 5} {
				b := rawRecord(tx, seq)
				b[len(b)-1] ^= 1
				if err := tx.Bucket(bucketLog).Put(seqKey(seq), b); err != nil {
					return err
				}
			}
			return nil
		}, 5},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := newLogFile(t, fixtureN)
			rawUpdate(t, path, tt.damage)
			err := splitAll(path)
			var ce *CorruptionError
			if !errors.As(err, &ce) || ce.Seq != tt.at {
				t.Fatalf("ReplaySplit: err = %v, want corruption at seq %d", err, tt.at)
			}
		})
	}
}
