package history

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// The engine's tests (flow) check these functions on the logs its
// commands write: TestProperty_EntityAtEqualsWholeStateAt,
// TestProjectRollbacks_DamagedIndexIsNotTrusted, TestCheckPlacement and
// the resolvePoint tests. These check them on logs written by hand.

// mustOpen opens a new log in t's temporary directory.
func mustOpen(tb testing.TB) store.Store {
	tb.Helper()
	l, err := eventlog.Open(filepath.Join(tb.TempDir(), "log.db"), eventlog.Options{Create: true, NoSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	s := l.Store()
	tb.Cleanup(func() { s.Close() })
	return s
}

// appendAll appends events, one by one, to the streams given.
func appendAll(tb testing.TB, s store.Store, streams []string, events []store.Event) {
	tb.Helper()
	err := s.Update(func(tx store.Tx) error {
		for i, ev := range events {
			if _, err := tx.Append(streams[i], store.Any, ev); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}

func TestSeqAtTime(t *testing.T) {
	t.Parallel()
	s := mustOpen(t)
	t0 := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	var streams []string
	var events []store.Event
	for i := range 4 { // seqs 1..4 at t0, t0+1s, t0+2s, t0+3s
		streams = append(streams, "misc")
		events = append(events, store.Event{Type: "x.y", Time: t0.Add(time.Duration(i) * time.Second), Project: "p"})
	}
	appendAll(t, s, streams, events)
	for _, tt := range []struct {
		name string
		at   time.Time
		want uint64
	}{
		{"BeforeEverything", t0.Add(-time.Nanosecond), 0},
		{"AtTheFirst", t0, 1},
		{"Between", t0.Add(1500 * time.Millisecond), 2},
		{"AtTheLast", t0.Add(3 * time.Second), 4},
		{"AfterEverything", t0.Add(time.Hour), 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got uint64
			err := s.View(func(tx store.Tx) (err error) {
				got, err = SeqAtTime(tx, 4, tt.at)
				return err
			})
			if err != nil || got != tt.want {
				t.Fatalf("SeqAtTime(%s) = %d, %v; want %d", tt.at, got, err, tt.want)
			}
		})
	}
}

// TestProjectRollbacks reads rollbacks of the whole project through the
// index, without it, behind the log, and with a mark of another log.
func TestProjectRollbacks(t *testing.T) {
	t.Parallel()
	s := mustOpen(t)
	proj, task := projection.ProjectStream("p"), projection.TaskStream("p", "T-1")
	ev := func(typ string) store.Event { return store.Event{Type: typ, Project: "p"} }
	// seqs: 1 project, 2 task, 3 rollback, 4 task, 5 rollback of the
	// task (on its stream: not the project's), 6 rollback.
	appendAll(t, s, []string{proj, task, proj, task, task, proj}, []store.Event{
		ev(projection.TypeProjectCreated), ev(projection.TypeTaskCreated), ev(projection.TypeRollbackApplied),
		ev(projection.TypeTaskUpdated), ev(projection.TypeRollbackApplied), ev(projection.TypeRollbackApplied),
	})
	read := func(t *testing.T, after, upTo uint64) (seqs []uint64, warned bool) {
		t.Helper()
		err := s.View(func(tx store.Tx) error {
			rs, err := ProjectRollbacks(tx, "p", after, upTo, func(string, ...any) { warned = true })
			for _, r := range rs {
				seqs = append(seqs, r.Seq)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return seqs, warned
	}
	check := func(t *testing.T, wantWarned bool) {
		t.Helper()
		for _, w := range []struct {
			after, upTo uint64
			want        []uint64
		}{{0, 6, []uint64{3, 6}}, {3, 6, []uint64{6}}, {0, 5, []uint64{3}}, {3, 5, nil}, {6, 6, nil}} {
			got, warned := read(t, w.after, w.upTo)
			warn := wantWarned && w.upTo > w.after // an empty window reads nothing
			if !slices.Equal(got, w.want) || warned != warn {
				t.Errorf("rollbacks in (%d, %d] = %v, warned %v; want %v, warned %v", w.after, w.upTo, got, warned, w.want, warn)
			}
		}
	}
	update := func(t *testing.T, fn func(tx store.Tx) error) {
		t.Helper()
		if err := s.Update(fn); err != nil {
			t.Fatal(err)
		}
	}
	checkIndex := func(t *testing.T) error { return s.View(CheckIndex) }

	t.Run("NoIndex", func(t *testing.T) { check(t, false) })
	t.Run("Indexed", func(t *testing.T) {
		update(t, func(tx store.Tx) error { return IndexRollbacks(tx, "p") })
		if err := checkIndex(t); err != nil {
			t.Fatalf("CheckIndex = %v", err)
		}
		check(t, false)
	})
	t.Run("Behind", func(t *testing.T) {
		update(t, func(tx store.Tx) error {
			if err := DropIndex(tx, "p"); err != nil {
				return err
			}
			return tx.Put(BucketRollbacks, Key("p", 0), Mark{Version: 1, Seq: 1}.Bytes())
		})
		if err := checkIndex(t); err != nil {
			t.Fatalf("CheckIndex = %v", err)
		}
		check(t, false)
	})
	t.Run("MarkOfAnotherLog", func(t *testing.T) {
		update(t, func(tx store.Tx) error {
			return tx.Put(BucketRollbacks, Key("p", 0), Mark{Version: 2, Seq: 2, Entries: 1}.Bytes())
		})
		if err := checkIndex(t); !errors.Is(err, store.ErrCorrupt) {
			t.Fatalf("CheckIndex = %v, want corruption", err)
		}
		check(t, true)
		update(t, func(tx store.Tx) error { return IndexRollbacks(tx, "p") }) // drops it and indexes again
		if err := checkIndex(t); err != nil {
			t.Fatalf("CheckIndex after IndexRollbacks = %v", err)
		}
		check(t, false)
	})
}

func TestCheckPlacement_Error(t *testing.T) {
	t.Parallel()
	r := &store.Record{Seq: 7, Stream: "misc", Event: store.Event{Type: projection.TypeNoteAdded, Project: "p"}}
	err := CheckPlacement(projection.NewMemory(), r)
	var pe *PlacementError
	if !errors.As(err, &pe) || pe.Seq != 7 || pe.Type != projection.TypeNoteAdded {
		t.Fatalf("CheckPlacement = %v, want a *PlacementError of seq 7", err)
	}
}

func TestMergeBySeq(t *testing.T) {
	t.Parallel()
	recs := func(seqs ...uint64) []*store.Record {
		var out []*store.Record
		for _, s := range seqs {
			out = append(out, &store.Record{Seq: s})
		}
		return out
	}
	var got []uint64
	for _, r := range mergeBySeq(recs(1, 4, 5), recs(2, 3, 6)) {
		got = append(got, r.Seq)
	}
	if want := []uint64{1, 2, 3, 4, 5, 6}; !slices.Equal(got, want) {
		t.Errorf("mergeBySeq = %v, want %v", got, want)
	}
}

// TestEntriesOf_MatchesMem: the summaries a view at a point lists are
// projstore.Mem's, entity for entity (entriesOf mirrors the status
// index's rule), for every kind and only the project asked for.
func TestEntriesOf_MatchesMem(t *testing.T) {
	mem := projection.NewMemory()
	for _, p := range []string{"p", "q"} {
		mem.PutPlan(&projection.Plan{Project: p, ID: "P-1", Title: "plan " + p, Status: "open"})
		mem.PutTask(&projection.Task{Project: p, ID: "T-1", Title: "one", Status: projection.StatusTodo})
		mem.PutTask(&projection.Task{Project: p, ID: "T-10", Title: "ten", Status: projection.StatusDone})
		mem.PutApproval(&projection.Approval{Project: p, ID: "A-1", Message: "ok?", Status: projection.ApprovalPending})
		ok, failed := &projection.Exec{Project: p}, &projection.Exec{Project: p}
		ok.ID, ok.Success, failed.ID = "X-1", true, "X-2"
		mem.PutExec(ok)
		mem.PutExec(failed)
	}
	sorted := func(s []projstore.IndexEntry) []projstore.IndexEntry { projstore.SortEntries(s); return s }
	for _, b := range []string{projstore.BucketPlans, projstore.BucketTasks, projstore.BucketApprovals, projstore.BucketExecs} {
		want, err := projstore.Mem{Memory: mem}.Summaries(b, "p")
		if err != nil {
			t.Fatal(err)
		}
		if got := entriesOf(mem, b, "p"); len(want) == 0 || !slices.Equal(sorted(got), sorted(want)) {
			t.Errorf("%s: entriesOf = %v, Mem lists %v", b, got, want)
		}
	}
}
