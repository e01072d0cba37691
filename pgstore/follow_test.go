package pgstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/internal/pgtest"
	"github.com/flowctl/flowctl/pgstore"
)

// The tests of flow.Follow on PostgreSQL: LISTEN/NOTIFY as a wake-up, the
// poll fallback, and the start of New, which the bbolt file must keep too.

// noFallback is a fallback poll no test waits for: what arrives within
// deliverWait arrived by a notification.
const noFallback = 30 * time.Second

// deliverWait bounds the wait for an event to be delivered: far less than
// noFallback, generous for a loaded machine.
const deliverWait = 10 * time.Second

// flowStore makes a store with project p through the engine and returns
// its DSN, which names the application appName, so that the test finds
// its connections in pg_stat_activity.
func flowStore(t *testing.T, appName string) string {
	t.Helper()
	u, err := url.Parse(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("application_name", appName)
	u.RawQuery = q.Encode()
	dsn := u.String()
	withEngine(t, dsn, true, func(e *flow.Engine) error {
		_, err := e.CreateProject(flow.NewProject{Name: "p"})
		return err
	})
	return dsn
}

func withEngine(t testing.TB, dsn string, create bool, fn func(e *flow.Engine) error) {
	t.Helper()
	e, err := flow.Open(dsn, flow.Options{Create: create, NoSync: true, Actor: "ann", LockTimeout: 20 * time.Second})
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

// note appends a note and returns its seq. Safe from any goroutine; it
// reports a failure with t.Error.
func note(t testing.TB, dsn, text string) uint64 {
	e, err := flow.Open(dsn, flow.Options{NoSync: true, Actor: "ann", LockTimeout: 20 * time.Second})
	if err != nil {
		t.Error(err)
		return 0
	}
	defer e.Close()
	n, err := e.AddNote(flow.NewNote{Project: "p", Text: text})
	if err != nil {
		t.Error(err)
		return 0
	}
	return n.Seq
}

// following is a flow.Follow running in the background.
type following struct {
	mu     sync.Mutex
	seqs   []uint64
	got    chan uint64 // each seq delivered, as it is
	ready  chan uint64 // FollowOptions.Ready's after
	cancel context.CancelFunc
	done   chan error
}

func follow(t *testing.T, dsn string, opts flow.FollowOptions) *following {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	fw := &following{got: make(chan uint64, 100000), ready: make(chan uint64, 1), cancel: cancel, done: make(chan error, 1)}
	opts.Ready = func(after uint64) { fw.ready <- after }
	go func() {
		fw.done <- flow.Follow(ctx, dsn, opts, flow.Filter{}, func(ev flow.Event) error {
			fw.mu.Lock()
			fw.seqs = append(fw.seqs, ev.Seq)
			fw.mu.Unlock()
			fw.got <- ev.Seq
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-fw.done; !errors.Is(err, context.Canceled) {
			t.Errorf("Follow returned %v, want context.Canceled", err)
		}
	})
	return fw
}

// waitReady returns the seq Follow starts after.
func (fw *following) waitReady(t *testing.T) uint64 {
	t.Helper()
	select {
	case after := <-fw.ready:
		return after
	case err := <-fw.done:
		t.Fatalf("Follow returned %v before it was ready", err)
	case <-time.After(deliverWait):
		t.Fatalf("Follow not ready after %v", deliverWait)
	}
	return 0
}

// next waits for the next seq delivered and returns how long it took.
func (fw *following) next(t *testing.T, want uint64) time.Duration {
	t.Helper()
	start := time.Now()
	select {
	case seq := <-fw.got:
		if seq != want {
			t.Fatalf("delivered seq %d, want %d", seq, want)
		}
		return time.Since(start)
	case err := <-fw.done:
		t.Fatalf("Follow returned %v, want seq %d", err, want)
	case <-time.After(deliverWait):
		t.Fatalf("seq %d not delivered within %v (the fallback poll is %v)", want, deliverWait, noFallback)
	}
	return 0
}

func (fw *following) delivered() []uint64 {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	return slices.Clone(fw.seqs)
}

// listenerPID waits until exactly one connection of appName listens and
// returns its backend's pid.
func listenerPID(t *testing.T, appName string) int {
	t.Helper()
	conn := mustConnect(t, pgtest.URL(t))
	deadline := time.Now().Add(deliverWait)
	for {
		var pids []int
		rows, err := conn.Query(context.Background(),
			`SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query = 'LISTEN flow_events'`, appName)
		if err == nil {
			for rows.Next() {
				var pid int
				if err = rows.Scan(&pid); err != nil {
					break
				}
				pids = append(pids, pid)
			}
			rows.Close()
			err = rows.Err()
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(pids) == 1 {
			return pids[0]
		}
		if len(pids) > 1 || time.Now().After(deadline) {
			t.Fatalf("connections of %s listening: %v, want one", appName, pids)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func appName() string {
	var b [6]byte
	rand.Read(b[:])
	return "flowtest_" + hex.EncodeToString(b[:])
}

// TestFollow_NotifyWakes: a follower on PostgreSQL delivers an append
// long before its fallback poll (so by the notification), also after its
// listening connection is killed (pg_terminate_backend): the notifications
// lost meanwhile are covered by the read after the new connection, and
// the new connection is woken again.
func TestFollow_NotifyWakes(t *testing.T) {
	app := appName()
	dsn := flowStore(t, app)
	fw := follow(t, dsn, flow.FollowOptions{New: true, Fallback: noFallback})
	after := fw.waitReady(t)
	listenerPID(t, app)
	var worst time.Duration
	for i := range 5 {
		seq := note(t, dsn, fmt.Sprint("note ", i))
		if seq != after+uint64(i)+1 {
			t.Fatalf("note %d at seq %d, want %d", i, seq, after+uint64(i)+1)
		}
		worst = max(worst, fw.next(t, seq))
	}
	t.Logf("5 appends delivered by notification, the slowest %v after its commit (fallback %v)", worst, noFallback)

	conn := mustConnect(t, pgtest.URL(t))
	for round := range 3 {
		pid := listenerPID(t, app)
		var ok bool
		if err := conn.QueryRow(context.Background(), `SELECT pg_terminate_backend($1)`, pid).Scan(&ok); err != nil || !ok {
			t.Fatalf("pg_terminate_backend(%d) = %v, %v", pid, ok, err)
		}
		// Appended while the follower has no listening connection, or
		// about when it connects again: the read after the new LISTEN
		// finds it.
		seq := note(t, dsn, fmt.Sprint("while killed ", round))
		took := fw.next(t, seq)
		t.Logf("round %d: the append after the kill delivered %v after its commit", round, took)
		if newPID := listenerPID(t, app); newPID == pid {
			t.Fatalf("the listener's pid %d is the killed one's", pid)
		}
		seq = note(t, dsn, fmt.Sprint("after ", round))
		fw.next(t, seq)
	}
	fw.cancel()
	if got := fw.delivered(); !slices.Equal(got, span(after+1, after+11)) {
		t.Errorf("delivered %v, want %d..%d", got, after+1, after+11)
	}
}

// TestFollow_BulkNotifies: a bulk append (COPY) wakes a follower as an
// append does: it is delivered long before the fallback poll.
func TestFollow_BulkNotifies(t *testing.T) {
	app := appName()
	dsn := flowStore(t, app)
	fw := follow(t, dsn, flow.FollowOptions{New: true, Fallback: noFallback})
	after := fw.waitReady(t)
	st, err := pgstore.Driver{}.Open(dsn, store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	err = st.Update(func(tx store.Tx) error {
		r, err := tx.Record(after)
		if err != nil {
			return err
		}
		bulk, ok := tx.(store.BulkAppender)
		if !ok {
			t.Skip("pgstore's Tx is not a BulkAppender")
		}
		ev := r.Event
		ev.ID = store.ID{}
		_, err = bulk.AppendBulk([]store.BulkEvent{{Stream: r.Stream + "-copy", Version: 1, Event: ev}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	fw.next(t, after+1)
}

// TestFollow_FallbackPoll: an append that notifies nobody is still
// delivered, by the fallback poll.
func TestFollow_FallbackPoll(t *testing.T) {
	app := appName()
	dsn := flowStore(t, app)
	fw := follow(t, dsn, flow.FollowOptions{New: true, Fallback: 100 * time.Millisecond})
	after := fw.waitReady(t)
	defer pgstore.Silence()()
	withEngine(t, dsn, false, func(e *flow.Engine) error {
		_, err := e.AddTask(flow.NewTask{Project: "p", Title: "unannounced"})
		return err
	})
	fw.next(t, after+1)
}

// TestFollow_NewStartsAtCall: Follow's New, called while another
// goroutine appends as fast as it can, fixes its start at the call: it
// delivers every event after the seq Ready names, each once and in
// order, and that seq is at least the head acknowledged before the call.
// On both backends.
func TestFollow_NewStartsAtCall(t *testing.T) {
	t.Run("bbolt", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "flow.db")
		withEngine(t, path, true, func(e *flow.Engine) error {
			_, err := e.CreateProject(flow.NewProject{Name: "p"})
			return err
		})
		newStartsAtCall(t, path, flow.FollowOptions{New: true, Interval: 20 * time.Millisecond})
	})
	t.Run("postgres", func(t *testing.T) {
		newStartsAtCall(t, flowStore(t, appName()), flow.FollowOptions{New: true, Fallback: noFallback})
	})
}

func newStartsAtCall(t *testing.T, dsn string, opts flow.FollowOptions) {
	for round := range 4 {
		var acked atomic.Uint64
		stop := make(chan struct{})
		writing := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				acked.Store(note(t, dsn, fmt.Sprintf("round %d note %d", round, i)))
				if i == 2 {
					close(writing)
				}
			}
		}()
		<-writing
		time.Sleep(time.Duration(round) * 7 * time.Millisecond)
		before := acked.Load()
		fw := follow(t, dsn, opts)
		after := fw.waitReady(t)
		time.Sleep(50 * time.Millisecond)
		close(stop)
		<-done
		last := acked.Load()
		if after < before || after > last {
			t.Fatalf("round %d: Follow starts after seq %d; %d was acknowledged before the call, %d at the end", round, after, before, last)
		}
		for seq := after + 1; seq <= last; seq++ {
			fw.next(t, seq)
		}
		fw.cancel()
		if err := <-fw.done; !errors.Is(err, context.Canceled) {
			t.Fatalf("Follow returned %v", err)
		}
		fw.done <- context.Canceled // for the cleanup
		if got := fw.delivered(); !slices.Equal(got, span(after+1, last)) {
			t.Fatalf("round %d: delivered %v, want %d..%d", round, got, after+1, last)
		}
		t.Logf("round %d: %d acknowledged before the call, start after %d, %d delivered", round, before, after, last-after)
	}
}

func span(from, to uint64) []uint64 {
	var out []uint64
	for s := from; s <= to; s++ {
		out = append(out, s)
	}
	return out
}

// TestFollow_ErrNotExist: following a store that is not there fails with
// store.ErrNotExist, from the start or from the catching up, and never
// names the password.
func TestFollow_ErrNotExist(t *testing.T) {
	const pw = "pw-Never-Printed-9"
	u, err := url.Parse(pgtest.DSN(t)) // a schema nobody created
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), pw)
	noSchema := u.String()
	u.Path = "/no_such_database"
	noDB := u.String()
	for _, dsn := range []string{noSchema, noDB} {
		for _, isNew := range []bool{true, false} {
			ctx, cancel := context.WithTimeout(context.Background(), deliverWait)
			err := flow.Follow(ctx, dsn, flow.FollowOptions{New: isNew, Fallback: noFallback}, flow.Filter{}, func(flow.Event) error { return nil })
			cancel()
			if !errors.Is(err, store.ErrNotExist) || strings.Contains(err.Error(), pw) {
				t.Errorf("Follow(%s, New: %v) = %v, want ErrNotExist without the password", pgstore.Redact(dsn), isNew, err)
			}
		}
	}
}
