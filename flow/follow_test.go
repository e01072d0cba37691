package flow

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/projection"
)

// followInterval keeps the follow tests fast.
const followInterval = 20 * time.Millisecond

// followFile makes a file with project p and task T-1 (seqs 1 and 2) and
// closes it: Follow opens it per poll, so no engine may hold it open.
func followFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "flow.db")
	followWrite(t, path, func(e *Engine) error {
		if _, err := e.CreateProject(NewProject{Name: "p"}); err != nil {
			return err
		}
		_, err := e.AddTask(NewTask{Project: "p", Title: "first"})
		return err
	})
	return path
}

// followWrite opens the file for writing, runs fn and closes it.
func followWrite(t *testing.T, path string, fn func(e *Engine) error) {
	t.Helper()
	e, err := Open(path, Options{Create: true, NoSync: true, Actor: "ann", LockTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = fn(e)
	if cerr := e.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

func followNote(t *testing.T, path, text string) {
	t.Helper()
	followWrite(t, path, func(e *Engine) error {
		_, err := e.AddNote(NewNote{Project: "p", Text: text})
		return err
	})
}

// follower runs Follow in the background and keeps what it delivers.
type followRun struct {
	mu     sync.Mutex
	events []Event
	cancel context.CancelFunc
	done   chan error
}

func startFollow(t *testing.T, path string, opts FollowOptions, f Filter) *followRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &followRun{cancel: cancel, done: make(chan error, 1)}
	opts.Interval = followInterval
	go func() {
		r.done <- Follow(ctx, path, opts, f, func(ev Event) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.events = append(r.events, ev)
			return nil
		})
	}()
	t.Cleanup(func() { cancel(); <-r.done })
	return r
}

// wait waits until n events were delivered and returns their seqs.
func (r *followRun) wait(t *testing.T, n int) []uint64 {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r.mu.Lock()
		got := seqs(r.events)
		r.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case err := <-r.done:
			r.done <- err // for the cleanup
			t.Fatalf("Follow returned %v after %d events, want %d", err, len(got), n)
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("Follow delivered %v, want %d events", got, n)
		}
	}
}

// stop cancels Follow and checks that it returned context.Canceled.
func (r *followRun) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	if err := <-r.done; !errors.Is(err, context.Canceled) {
		t.Errorf("Follow returned %v after cancel, want context.Canceled", err)
	}
	r.done <- nil // for the cleanup
}

func wantFollowed(t *testing.T, got []uint64, want ...uint64) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("followed seqs %v, want %v", got, want)
	}
}

func TestFollow(t *testing.T) {
	t.Parallel()

	t.Run("OtherProcess", func(t *testing.T) {
		t.Parallel()
		path := followFile(t)
		r := startFollow(t, path, FollowOptions{}, Filter{})
		wantFollowed(t, r.wait(t, 2), 1, 2)
		runChildProcess(t, path, "retitle", "FLOW_TEST_TITLE=second")
		runChildProcess(t, path, "start")
		got := r.wait(t, 4)
		r.stop(t)
		wantFollowed(t, got, 1, 2, 3, 4)
		if r.events[2].Type != projection.TypeTaskUpdated || r.events[2].Actor != "child" || r.events[3].Type != projection.TypeTaskStatusChanged {
			t.Errorf("events 3 and 4: %s by %s, %s", r.events[2].Type, r.events[2].Actor, r.events[3].Type)
		}
	})

	t.Run("New", func(t *testing.T) {
		t.Parallel()
		path := followFile(t)
		r := startFollow(t, path, FollowOptions{New: true}, Filter{SinceSeq: 1})
		// The first poll may come after some of these notes; the later ones
		// must all come, without a gap, and seqs 1 and 2 never.
		for i := 0; len(r.wait(t, 0)) == 0; i++ {
			followNote(t, path, fmt.Sprint("tick ", i))
			time.Sleep(followInterval)
		}
		followNote(t, path, "last")
		head := followHead(t, path)
		got := r.wait(t, 1)
		for got[len(got)-1] != head {
			got = r.wait(t, len(got)+1)
		}
		r.stop(t)
		if got[0] <= 2 {
			t.Errorf("followed seq %d, which was there before Follow started", got[0])
		}
		for i := 1; i < len(got); i++ {
			if got[i] != got[i-1]+1 {
				t.Errorf("followed seqs %v have a gap", got)
			}
		}
	})

	t.Run("SinceAndLimit", func(t *testing.T) {
		t.Parallel()
		path := followFile(t)
		followNote(t, path, "three")
		followNote(t, path, "four") // seq 4
		r := startFollow(t, path, FollowOptions{}, Filter{SinceSeq: 2, Limit: 2})
		wantFollowed(t, r.wait(t, 2), 3, 4)
		followNote(t, path, "five")
		followNote(t, path, "six")
		got := r.wait(t, 4)
		r.stop(t)
		wantFollowed(t, got, 3, 4, 5, 6) // Limit applies to what was there only
	})

	t.Run("StreamFilter", func(t *testing.T) {
		t.Parallel()
		path := followFile(t)
		stream := projection.TaskStream("p", "T-1")
		r := startFollow(t, path, FollowOptions{}, Filter{Stream: stream})
		wantFollowed(t, r.wait(t, 1), 2)
		for i := range 3 {
			followNote(t, path, "on the project")
			followWrite(t, path, func(e *Engine) error {
				_, err := e.AddNote(NewNote{Project: "p", Task: "T-1", Text: fmt.Sprint("on T-1 ", i)})
				return err
			})
			r.wait(t, 2+i)
		}
		r.stop(t)
		wantFollowed(t, seqs(r.events), 2, 4, 6, 8)
		for i, ev := range r.events {
			if ev.Stream != stream || ev.Version != uint64(i+1) {
				t.Errorf("event %d: %s@%d, want %s@%d", i, ev.Stream, ev.Version, stream, i+1)
			}
		}
	})

	t.Run("WaitsOutAWriter", func(t *testing.T) {
		t.Parallel()
		path := followFile(t)
		r := startFollow(t, path, FollowOptions{}, Filter{})
		r.wait(t, 2)
		// Hold the lock for many polls, then write and let go.
		followWrite(t, path, func(e *Engine) error {
			time.Sleep(10 * followInterval)
			_, err := e.AddNote(NewNote{Project: "p", Text: "held"})
			return err
		})
		got := r.wait(t, 3)
		r.stop(t)
		wantFollowed(t, got, 1, 2, 3)
	})

	t.Run("FnError", func(t *testing.T) {
		t.Parallel()
		path := followFile(t)
		stop := errors.New("enough")
		err := Follow(context.Background(), path, FollowOptions{Interval: followInterval}, Filter{},
			func(ev Event) error { return stop })
		if !errors.Is(err, stop) {
			t.Errorf("Follow = %v, want fn's error", err)
		}
	})

	t.Run("ErrNotExist", func(t *testing.T) {
		t.Parallel()
		err := Follow(context.Background(), filepath.Join(t.TempDir(), "none.db"), FollowOptions{}, Filter{},
			func(Event) error { return nil })
		if !errors.Is(err, eventlog.ErrNotExist) || ErrorCode(err) != CodeNotFound {
			t.Errorf("Follow on no file = %v, want ErrNotExist", err)
		}
	})

	t.Run("ErrInvalid", func(t *testing.T) {
		t.Parallel()
		path := followFile(t)
		for _, f := range []Filter{{UntilSeq: 3}, {Until: time.Now()}} {
			if err := Follow(context.Background(), path, FollowOptions{}, f, func(Event) error { return nil }); !errors.Is(err, ErrInvalid) {
				t.Errorf("Follow(%+v) = %v, want ErrInvalid", f, err)
			}
		}
	})

	t.Run("Cancelled", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := Follow(ctx, followFile(t), FollowOptions{}, Filter{}, func(Event) error { return nil }); !errors.Is(err, context.Canceled) {
			t.Errorf("Follow with a cancelled context = %v", err)
		}
	})
}

func followHead(t *testing.T, path string) uint64 {
	t.Helper()
	e, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	head, err := e.headSeq()
	if err != nil {
		t.Fatal(err)
	}
	return head
}
