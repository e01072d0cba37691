package eventlog

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestLog_Update_GroupCommit(t *testing.T) {
	t.Run("OK/Concurrent", func(t *testing.T) {
		for _, maxBatch := range []int{0, 1, 3} {
			t.Run(fmt.Sprintf("MaxBatch%d", maxBatch), func(t *testing.T) {
				testConcurrentAppends(t, maxBatch)
			})
		}
	})

	t.Run("OK/FailingCallIsolated", func(t *testing.T) {
		l := mustOpen(t)
		const callers = 12
		errBad := errors.New("bad call")
		runs := make([]atomic.Int32, callers)
		errs := make([]error, callers)
		results := make([]Appended, callers)

		// The first Update holds the write transaction until every other
		// caller has queued, so that those all land in one batch.
		release := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			err := l.Update(func(tx *Tx) error {
				<-release
				_, err := tx.Append("first", NoStream, ev("a", "0"))
				return err
			})
			if err != nil {
				t.Errorf("first Update: %v", err)
			}
		})
		waitPending(t, l, 0)
		for i := range callers {
			wg.Go(func() {
				errs[i] = l.Update(func(tx *Tx) error {
					runs[i].Add(1)
					got, err := tx.Append(fmt.Sprint("s", i), NoStream, ev("a", fmt.Sprint(i)))
					if err != nil {
						return err
					}
					if err := tx.Put("proj", []byte(fmt.Sprint(i)), []byte("v")); err != nil {
						return err
					}
					if i%4 == 1 { // calls 1, 5, 9 fail after writing
						return fmt.Errorf("call %d: %w", i, errBad)
					}
					results[i] = got
					return nil
				})
			})
		}
		waitPending(t, l, callers)
		close(release)
		wg.Wait()

		for i := range callers {
			stream := fmt.Sprint("s", i)
			recs := mustCollect(t, func(fn func(*Record) error) error { return l.ReadStream(stream, 0, fn) })
			kv := mustGet(t, l, "proj", fmt.Sprint(i))
			if i%4 == 1 {
				if !errors.Is(errs[i], errBad) {
					t.Errorf("call %d: err = %v, want its own error", i, errs[i])
				}
				if len(recs) != 0 || kv != nil {
					t.Errorf("call %d failed but kept %d events and value %q", i, len(recs), kv)
				}
				if n := runs[i].Load(); n != 1 {
					t.Errorf("failing call %d ran %d times, want 1", i, n)
				}
				continue
			}
			if errs[i] != nil {
				t.Errorf("call %d: %v, want nil: another call's failure took it down", i, errs[i])
				continue
			}
			if len(recs) != 1 || string(kv) != "v" || recs[0].Seq != results[i].Seqs[0] {
				t.Errorf("call %d: %d events, value %q; want its event at seq %v and its value", i, len(recs), kv, results[i].Seqs)
			}
		}
		if got := seqsOf(readAll(t, l)); !equalSeqs(got, seqRange(1, callers-3+1)) {
			t.Fatalf("seqs = %v, want 1..%d", got, callers-3+1)
		}
	})

	t.Run("OK/PanickingCallIsolated", func(t *testing.T) {
		l := mustOpen(t)
		release := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() { _ = l.Update(func(*Tx) error { <-release; return nil }) })
		waitPending(t, l, 0)
		const callers = 4
		errs := make([]error, callers)
		for i := range callers {
			wg.Go(func() {
				errs[i] = l.Update(func(tx *Tx) error {
					if _, err := tx.Append(fmt.Sprint("s", i), NoStream, ev("a", "x")); err != nil {
						return err
					}
					if i == 2 {
						var m map[string]int
						//lint:ignore SA5000 the callback panics on purpose: a bug in the caller's code
						m["boom"]++
					}
					return nil
				})
			})
		}
		waitPending(t, l, callers)
		close(release)
		wg.Wait()
		for i, err := range errs {
			n := len(mustCollect(t, func(fn func(*Record) error) error { return l.ReadStream(fmt.Sprint("s", i), 0, fn) }))
			switch {
			case i == 2 && (err == nil || n != 0 || errors.Is(err, ErrCorrupt)):
				t.Errorf("panicking call: err = %v, %d events kept; want an error (not corruption) and none", err, n)
			case i != 2 && (err != nil || n != 1):
				t.Errorf("call %d: err = %v, %d events kept; want nil and its event", i, err, n)
			}
		}
	})

	t.Run("ErrConflict/SameBatch", func(t *testing.T) {
		l := mustOpen(t)
		release := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			if err := l.Update(func(*Tx) error { <-release; return nil }); err != nil {
				t.Errorf("first Update: %v", err)
			}
		})
		waitPending(t, l, 0)
		const callers = 6
		errs := make([]error, callers)
		for i := range callers {
			wg.Go(func() {
				_, errs[i] = l.Append("shared", NoStream, ev("a", fmt.Sprint(i)))
			})
		}
		waitPending(t, l, callers)
		close(release)
		wg.Wait()
		ok := 0
		for i, err := range errs {
			var vc *VersionConflict
			switch {
			case err == nil:
				ok++
			case errors.As(err, &vc) && vc.Expected == 0 && vc.Actual == 1:
			default:
				t.Errorf("call %d: err = %v, want nil or a version conflict", i, err)
			}
		}
		if ok != 1 || mustHead(t, l) != 1 {
			t.Fatalf("%d appends with NoStream succeeded, head %d; want exactly 1", ok, mustHead(t, l))
		}
	})

	t.Run("OK/GatherCountsQueued", func(t *testing.T) {
		// A commit of 1 with 3 calls queued during it: the next commit
		// gathers for 4 (the 1 and the 3), not for 1, so that writers in
		// a loop do not settle into a large batch and a small one.
		l := mustOpen(t)
		release := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() { _ = l.Update(func(*Tx) error { <-release; return nil }) })
		waitPending(t, l, 0)
		want := make(chan int, 3)
		for range 3 {
			wg.Go(func() {
				_ = l.Update(func(*Tx) error {
					l.mu.Lock()
					want <- l.lastBatch
					l.mu.Unlock()
					return nil
				})
			})
		}
		waitPending(t, l, 3)
		close(release)
		wg.Wait()
		for range 3 {
			if got := <-want; got != 4 {
				t.Fatalf("the commit after a batch of 1 with 3 queued gathered for %d calls, want 4", got)
			}
		}
	})

	t.Run("OK/MaxBatch", func(t *testing.T) {
		l := mustOpen(t, Options{NoSync: true, MaxBatch: 2})
		release := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() { _ = l.Update(func(*Tx) error { <-release; return nil }) })
		waitPending(t, l, 0)
		var mu sync.Mutex
		txs := map[*Tx]int{} // Tx seen by each commit attempt, to count batches
		for range 5 {
			wg.Go(func() {
				err := l.Update(func(tx *Tx) error {
					mu.Lock()
					txs[tx]++
					mu.Unlock()
					return nil
				})
				if err != nil {
					t.Errorf("Update: %v", err)
				}
			})
		}
		waitPending(t, l, 5)
		close(release)
		wg.Wait()
		for _, n := range txs {
			if n > 2 {
				t.Errorf("a commit ran %d calls, want at most MaxBatch=2", n)
			}
		}
		if len(txs) != 3 {
			t.Errorf("5 queued calls took %d commits, want 3", len(txs))
		}
	})
}

// testConcurrentAppends has goroutines append to their own streams and to
// one shared stream at once, then checks that seqs are distinct and gap
// free and that every acknowledged event is stored where it was reported.
func testConcurrentAppends(t *testing.T, maxBatch int) {
	l := mustOpen(t, Options{NoSync: true, MaxBatch: maxBatch})
	const writers, perWriter = 8, 40
	var (
		mu    sync.Mutex
		acked = map[uint64]ID{}
		wg    sync.WaitGroup
	)
	for w := range writers {
		wg.Go(func() {
			var version uint64 // of the writer's own stream
			for i := range perWriter {
				stream, exp := fmt.Sprint("w", w), Exact(version)
				if i%5 == 0 {
					stream, exp = "shared", Any
				}
				e := evID(uint64(w*perWriter+i+1), "a", fmt.Sprint(w, "/", i))
				got, err := l.Append(stream, exp, e)
				if err != nil {
					t.Errorf("writer %d append %d: %v", w, i, err)
					return
				}
				if stream != "shared" {
					version = got.Version
				}
				mu.Lock()
				acked[got.Seqs[0]] = e.ID
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	recs := readAll(t, l)
	if len(recs) != writers*perWriter || len(acked) != writers*perWriter {
		t.Fatalf("%d records, %d distinct acknowledged seqs; want %d", len(recs), len(acked), writers*perWriter)
	}
	for i, r := range recs {
		if r.Seq != uint64(i+1) {
			t.Fatalf("record %d has seq %d: not gap-free", i, r.Seq)
		}
		if acked[r.Seq] != r.ID {
			t.Errorf("seq %d holds %s, the append was acknowledged for %s", r.Seq, r.ID, acked[r.Seq])
		}
	}
	shared := mustCollect(t, func(fn func(*Record) error) error { return l.ReadStream("shared", 0, fn) })
	if len(shared) != writers*perWriter/5 {
		t.Fatalf("shared stream has %d events, want %d", len(shared), writers*perWriter/5)
	}
	if !slices.IsSortedFunc(shared, func(a, b *Record) int { return int(a.Seq) - int(b.Seq) }) {
		t.Fatal("shared stream versions are not in seq order")
	}
}

// waitPending waits until n Update calls are queued behind the leader.
func waitPending(t *testing.T, l *Log, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.mu.Lock()
		got, leading := len(l.pending), l.leading
		l.mu.Unlock()
		if leading && got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d calls pending after 10s, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}
