package projstore_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/internal/workload"
	"github.com/flowctl/flowctl/internal/workload/flowrun"
	"github.com/flowctl/flowctl/projection"
	"pgregory.net/rapid"
)

// history writes a random multi-project history to a new file under dir:
// the workload's ops in random batches, with whole-project and one-task
// rollbacks among them.
func history(t *rapid.T, dir string) string {
	path := filepath.Join(dir, "flow.db")
	clock := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	e, err := flow.Open(path, flow.Options{Create: true, NoSync: true, Actor: "a", Session: "s",
		Now: func() time.Time { clock = clock.Add(time.Second); return clock }})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	projects := rapid.IntRange(1, 24).Draw(t, "projects") // more than routeSlots: some share a slot
	g := workload.New(workload.Options{Projects: projects, Seed: rapid.Uint64().Draw(t, "seed"),
		CheckpointEvery: rapid.IntRange(10, 200).Draw(t, "checkpointEvery")})
	if err := flowrun.Batch(e, g.Fill(nil, projects)); err != nil {
		t.Fatal(err)
	}
	for range rapid.IntRange(0, 8).Draw(t, "rounds") {
		if err := flowrun.Batch(e, g.Fill(nil, rapid.IntRange(1, 150).Draw(t, "ops"))); err != nil {
			t.Fatal(err)
		}
		if !rapid.Bool().Draw(t, "rollback") {
			continue
		}
		// Rolling back makes the workload's ids out of step with the
		// file's: stop the workload after one.
		p := workload.ProjectName(rapid.IntRange(0, projects-1).Draw(t, "project"))
		in := flow.RollbackInput{Project: p, Reason: "test", To: flow.Point{Seq: rapid.Uint64Range(1, g.Ops()).Draw(t, "to")}}
		if rapid.Bool().Draw(t, "task") {
			in.Task = "T-1"
		}
		if _, err := e.Rollback(in); err != nil && !isRefusal(err) {
			t.Fatalf("Rollback(%+v): %v", in, err)
		}
		break
	}
	return path
}

// isRefusal reports whether err is a rollback the engine refuses for its
// input (a point before the project or task existed, say).
func isRefusal(err error) bool {
	return err != nil && !errors.Is(err, store.ErrCorrupt)
}

// A replay on several goroutines makes the state a replay on one makes,
// entity for entity, and the stored projections byte for byte.
func TestReplayOn_ParallelIsSerial(t *testing.T) {
	dir := t.TempDir()
	n := 0
	rapid.Check(t, func(t *rapid.T) {
		n++
		sub := filepath.Join(dir, fmt.Sprint(n))
		path := history(t, mkdir(t, sub))
		l, err := eventlog.Open(path, eventlog.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		workers := rapid.IntRange(2, 5).Draw(t, "workers")
		err = l.View(func(tx *eventlog.Tx) error {
			serial, srep, err := projstore.ReplayOn(tx, 1, t.Logf, nil)
			if err != nil {
				return err
			}
			// Through the log's own split (eventlog.Tx.ReplaySplit), and
			// through Replay alone, as a backend without it replays.
			for _, via := range []store.Tx{tx, plainTx{tx}} {
				par, prep, err := projstore.ReplayOn(via, workers, t.Logf, nil)
				if err != nil {
					return err
				}
				if srep != prep {
					t.Fatalf("reports (%T): serial %+v, parallel %+v", via, srep, prep)
				}
				sameMemory(t, serial, par)
				if err := projstore.Compare(tx, par); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}

// plainTx is a store.Tx with no methods but the interface's: a backend
// that cannot split a replay itself.
type plainTx struct{ store.Tx }

func sameMemory(t *rapid.T, want, got *projection.Memory) {
	for _, c := range []struct {
		name      string
		want, got any
	}{
		{"projects", want.Projects, got.Projects}, {"plans", want.Plans, got.Plans},
		{"tasks", want.Tasks, got.Tasks}, {"approvals", want.Approvals, got.Approvals},
		{"execs", want.Execs, got.Execs}, {"checkpoints", want.Checkpoints, got.Checkpoints},
	} {
		if !reflect.DeepEqual(c.want, c.got) {
			t.Fatalf("%s differ between the serial and the parallel replay", c.name)
		}
	}
}

func mkdir(t *rapid.T, dir string) string {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A parallel replay skips the events of types or schemas the fold does
// not know as a serial one does: the same count, and one warning per
// type, in the order of their first events.
func TestReplayOn_SkipsUnknownAsSerial(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flow.db")
	e, err := flow.Open(path, flow.Options{Create: true, NoSync: true, Actor: "a", Session: "s"})
	if err != nil {
		t.Fatal(err)
	}
	g := workload.New(workload.Options{Projects: 3, Seed: 7})
	if err := flowrun.Batch(e, g.Fill(nil, 300)); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := eventlog.Open(path, eventlog.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i, u := range []struct {
		project, typ string
		schema       uint32
	}{
		{workload.ProjectName(2), "future.thing", 1}, {workload.ProjectName(0), "task.created", 99},
		{workload.ProjectName(1), "future.thing", 2}, {workload.ProjectName(0), "future.other", 1},
	} {
		ev := eventlog.Event{Type: u.typ, Schema: u.schema, Time: time.Unix(int64(i), 0), Project: u.project, Data: []byte{0x80}}
		if _, err := l.Append(fmt.Sprintf("future:%d", i), eventlog.Any, ev); err != nil {
			t.Fatal(err)
		}
	}
	replay := func(tx store.Tx, workers int) ([]string, projstore.Report) {
		var warned []string
		warn := func(format string, args ...any) { warned = append(warned, fmt.Sprintf(format, args...)) }
		_, rep, err := projstore.ReplayOn(tx, workers, warn, nil)
		if err != nil {
			t.Fatal(err)
		}
		return warned, rep
	}
	err = l.View(func(tx *eventlog.Tx) error {
		wantWarned, wantRep := replay(tx, 1)
		if wantRep.Skipped != 4 || len(wantWarned) != 3 {
			t.Fatalf("serial replay: %+v, warnings %q", wantRep, wantWarned)
		}
		for _, workers := range []int{2, 3} {
			gotWarned, gotRep := replay(tx, workers)
			if gotRep != wantRep || !reflect.DeepEqual(gotWarned, wantWarned) {
				t.Fatalf("on %d workers: %+v, warnings %q; serial: %+v, %q", workers, gotRep, gotWarned, wantRep, wantWarned)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The size a replay reserves for its state, from the stored projections,
// is at least what the replay makes; with no projections, nothing.
func TestSizeHint(t *testing.T) {
	errLooked := errors.New("looked")
	path := filepath.Join(t.TempDir(), "flow.db")
	e, err := flow.Open(path, flow.Options{Create: true, NoSync: true, Actor: "a", Session: "s"})
	if err != nil {
		t.Fatal(err)
	}
	g := workload.New(workload.Options{Projects: 3, Seed: 3})
	if err := flowrun.Batch(e, g.Fill(nil, 400)); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := eventlog.Open(path, eventlog.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	err = l.Update(func(tx *eventlog.Tx) error {
		mem, _, err := projstore.ReplayOn(tx, 1, t.Logf, nil)
		if err != nil {
			return err
		}
		projects, n := projstore.SizeHint(tx)
		if projects != len(mem.Projects) || n.Tasks < len(mem.Tasks) || n.Plans < len(mem.Plans) ||
			n.Approvals < len(mem.Approvals) || n.Execs < len(mem.Execs) || n.Checkpoints < len(mem.Checkpoints) || n.Tasks == 0 {
			t.Fatalf("SizeHint = %d, %+v; the replay made %d projects, %d tasks, %d execs", projects, n, len(mem.Projects), len(mem.Tasks), len(mem.Execs))
		}
		if err := tx.DeleteBucket(projstore.BucketProjects); err != nil {
			return err
		}
		if projects, n := projstore.SizeHint(tx); projects != 0 || n != (projection.Counters{}) {
			t.Fatalf("SizeHint without projections = %d, %+v, want none", projects, n)
		}
		return errLooked // roll back
	})
	if !errors.Is(err, errLooked) {
		t.Fatal(err)
	}
}
