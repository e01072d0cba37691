package main

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"time"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
	bolt "go.etcd.io/bbolt"
)

// foldKnown folds r into mem, skipping events the fold does not know, as
// the engine's replay does.
func foldKnown(mem *projection.Memory, r *eventlog.Record) error {
	if err := projection.Apply(mem, r); err != nil && !errors.Is(err, projection.ErrUnknown) {
		return err
	}
	return nil
}

// replayRows measures reading the generated file five ways against a raw
// bbolt cursor scan of its log bucket, and the same in SQLite:
//
//	replay             decode + fold (the engine's rebuild, minus writing):
//	                   Log.Replay, which checks each record's CRC, not its hash
//	read_decode        decode only, the same way
//	read_checked       decode with the hash checked too (Log.ReadRange, the
//	                   audit read of flowctl log and export)
//	sqlite_read_decode select every row and decode it into a record
//	sqlite_replay      the same, folded as replay folds
func (b *bench) replayRows() ([]Row, error) {
	sqlitePath := filepath.Join(b.dir, "gen-sqlite.db")
	b.cleanup(sqlitePath)
	if _, err := copyToSQLite(b.ctx, b.gen, sqlitePath); err != nil {
		return nil, fmt.Errorf("copying the generated file to SQLite: %w", err)
	}
	if err := checkpointSQLite(sqlitePath); err != nil {
		return nil, err
	}
	var err error
	if b.genSQLiteSize, err = fileSize(sqlitePath); err != nil {
		return nil, err
	}
	r, err := openReplayers(b.gen, sqlitePath)
	if err != nil {
		return nil, err
	}
	defer r.close()
	n := int(b.genEvents)
	m, err := interleave(b.ctx, b.size.replayRounds,
		rate(n, r.scan), rate(n, r.decode), rate(n, r.replay), rate(n, r.sqliteDecode), rate(n, r.sqliteReplay),
		rate(n, r.checked), rate(n, oneCore(r.replay)))
	if err != nil {
		return nil, err
	}
	b.replayRate, b.checkedRate = m[2], m[5]
	parallel, err := b.parallelReplayRow(n)
	if err != nil {
		return nil, err
	}
	return []Row{
		newRow("replay", m[2], m[0], "events/s", atLeast("value", 1_000_000)),
		newRow("replay_1core", m[6], m[2], "events/s", atLeast("value", 1_000_000)),
		parallel,
		newRow("read_decode", m[1], m[0], "events/s", nil),
		newRow("read_checked", m[5], m[1], "events/s", nil),
		newRow("sqlite_read_decode", m[3], m[1], "events/s", nil),
		newRow("sqlite_replay", m[4], m[2], "events/s", nil),
	}, nil
}

// parallelReplayRow measures the engine's whole-file replay (Engine.Replay:
// the fold of a rebuild, projects on a goroutine per CPU) on every core
// against the same on one (GOMAXPROCS 1), in turns: issue 15's speedup,
// at least 1.7 on two cores. A machine of one core has no target. Each
// run starts from a collected heap (settledRate), so that the two are
// not compared across whatever collections the run before left them.
func (b *bench) parallelReplayRow(events int) (Row, error) {
	e, err := flow.Open(b.gen, flow.Options{ReadOnly: true, Actor: "bench", Session: "bench"})
	if err != nil {
		return Row{}, err
	}
	defer e.Close()
	replay := func() error {
		rep, err := e.Replay()
		if err == nil && rep.Events != uint64(events) {
			err = fmt.Errorf("the replay folded %d events, want %d", rep.Events, events)
		}
		return err
	}
	m, err := interleave(b.ctx, b.size.replayRounds, settledRate(events, replay), settledRate(events, oneCore(replay)))
	if err != nil {
		return Row{}, err
	}
	var target *goal
	if runtime.NumCPU() >= 2 {
		target = atLeast("ratio", 1.7)
	}
	return newRow("replay_parallel", m[0], m[1], "events/s", target), nil
}

// replayers hold the generated file open three ways, all read-only.
type replayers struct {
	log    *eventlog.Log
	raw    *bolt.DB
	sqlite *sql.DB
	events int
}

func openReplayers(genPath, sqlitePath string) (*replayers, error) {
	r := &replayers{}
	var err error
	if r.log, err = eventlog.Open(genPath, eventlog.Options{ReadOnly: true}); err != nil {
		return nil, err
	}
	if r.raw, err = bolt.Open(genPath, 0o644, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second}); err == nil {
		r.sqlite, err = sql.Open("sqlite", "file:"+sqlitePath+"?mode=ro")
	}
	if err != nil {
		r.close()
		return nil, err
	}
	head, _, err := r.log.Head()
	r.events = int(head)
	return r, err
}

func (r *replayers) close() {
	if r.sqlite != nil {
		r.sqlite.Close()
	}
	if r.raw != nil {
		r.raw.Close()
	}
	if r.log != nil {
		r.log.Close()
	}
}

// count checks that a pass saw every event.
func (r *replayers) count(what string, n int, err error) error {
	if err == nil && n != r.events {
		err = fmt.Errorf("%s saw %d events, want %d", what, n, r.events)
	}
	return err
}

// scan walks the log bucket with a bbolt cursor, touching every value.
func (r *replayers) scan() error {
	n := 0
	err := r.raw.View(func(tx *bolt.Tx) error {
		bk := tx.Bucket([]byte("log"))
		if bk == nil {
			return errors.New("no log bucket")
		}
		c := bk.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if len(v) > 0 {
				n++
			}
		}
		return nil
	})
	return r.count("bbolt scan", n, err)
}

func (r *replayers) decode() error {
	n := 0
	err := r.log.Replay(1, 0, func(*eventlog.Record) error { n++; return nil })
	return r.count("read", n, err)
}

func (r *replayers) checked() error {
	n := 0
	err := r.log.ReadRange(1, 0, func(*eventlog.Record) error { n++; return nil })
	return r.count("checked read", n, err)
}

func (r *replayers) replay() error {
	mem, n := projection.NewMemory(), 0
	err := r.log.Replay(1, 0, func(rec *eventlog.Record) error { n++; return foldKnown(mem, rec) })
	return r.count("replay", n, err)
}

// oneCore runs f with GOMAXPROCS 1: the garbage collector then shares
// the replay's one core instead of working beside it.
func oneCore(f func() error) func() error {
	return func() error {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
		return f()
	}
}

func (r *replayers) sqliteDecode() error {
	n, err := scanSQLite(r.sqlite, func(*eventlog.Record) error { return nil })
	return r.count("sqlite read", n, err)
}

func (r *replayers) sqliteReplay() error {
	n, err := sqliteReplay(r.sqlite)
	return r.count("sqlite replay", n, err)
}

// rebuildRow measures the engine's full rebuild (replay, then writing
// every projection in one transaction) of the generated file, once,
// against the replay rate measured before.
func (b *bench) rebuildRow() ([]Row, error) {
	e, err := flow.Open(b.gen, flow.Options{NoSync: true, Actor: "bench", Session: "bench"})
	if err != nil {
		return nil, err
	}
	defer e.Close()
	start := time.Now()
	rep, err := e.Rebuild()
	if err != nil {
		return nil, err
	}
	v := float64(rep.Events) / time.Since(start).Seconds()
	return []Row{newRow("rebuild", v, b.replayRate, "events/s", nil)}, nil
}
