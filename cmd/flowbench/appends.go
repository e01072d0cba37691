package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/internal/workload"
	bolt "go.etcd.io/bbolt"
)

// appendRows measures durable single-event appends three ways, in turns:
// the event log, a raw bbolt single-put commit of a value of the same
// size (the physical limit of one bbolt commit), and SQLite.
func (b *bench) appendRows() ([]Row, error) {
	l, err := b.openLog("append-single.db")
	if err != nil {
		return nil, err
	}
	defer l.Close()
	rawPath := filepath.Join(b.dir, "append-raw.db")
	b.cleanup(rawPath)
	raw, err := openRawBolt(rawPath)
	if err != nil {
		return nil, err
	}
	defer raw.Close()
	sqPath := filepath.Join(b.dir, "append-sqlite.db")
	b.cleanup(sqPath)
	sq, err := newSQLiteAppender(sqPath)
	if err != nil {
		return nil, err
	}
	defer sq.Close()
	ev, value, n := syntheticEvent(), workload.Payload(), b.size.appendOps
	m, err := interleave(b.ctx, b.size.appendRounds,
		perOp(n, time.Microsecond, func(int) error { _, err := l.Append(workload.StorageStream, eventlog.Any, ev); return err }),
		perOp(n, time.Microsecond, func(int) error { return raw.put(value) }),
		perOp(n, time.Microsecond, func(int) error { return sq.append(workload.StorageStream, ev) }))
	if err != nil {
		return nil, err
	}
	return []Row{
		newRow("append_single", m[0], m[1], "µs", atMost("ratio", 1.3)),
		newRow("sqlite_append_single", m[2], m[0], "µs", nil),
	}, nil
}

// openLog creates a new durable event log in the run's directory.
func (b *bench) openLog(name string) (*eventlog.Log, error) {
	path := filepath.Join(b.dir, name)
	b.cleanup(path)
	return eventlog.Open(path, eventlog.Options{Create: true})
}

// rawBolt is a bbolt file with one bucket of sequential keys, committed
// durably one put at a time.
type rawBolt struct {
	db  *bolt.DB
	seq uint64
}

var rawBucket = []byte("log")

func openRawBolt(path string) (*rawBolt, error) {
	db, err := bolt.Open(path, 0o644, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		return nil, err
	}
	err = db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucketIfNotExists(rawBucket); return err })
	if err != nil {
		db.Close()
		return nil, err
	}
	return &rawBolt{db: db}, nil
}

func (r *rawBolt) Close() error { return r.db.Close() }

// put commits value under the next key, with fsync.
func (r *rawBolt) put(value []byte) error {
	r.seq++
	return r.db.Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(rawBucket)
		bk.FillPercent = 1.0
		return bk.Put(binary.BigEndian.AppendUint64(nil, r.seq), value)
	})
}

// groupRow measures 8 goroutines appending single events durably at once
// (group commit folds them into shared commits) against one goroutine
// doing the same, in events/s.
func (b *bench) groupRow() ([]Row, error) {
	group, err := b.openLog("append-group.db")
	if err != nil {
		return nil, err
	}
	defer group.Close()
	serial, err := b.openLog("append-serial.db")
	if err != nil {
		return nil, err
	}
	defer serial.Close()
	m, err := interleave(b.ctx, b.size.groupRounds,
		rate(b.size.groupEvents, func() error { return appendConcurrently(group, 8, b.size.groupEvents) }),
		rate(b.size.serialEvents, func() error { return appendConcurrently(serial, 1, b.size.serialEvents) }))
	if err != nil {
		return nil, err
	}
	return []Row{newRow("append_group8", m[0], m[1], "events/s", atLeast("ratio", 5))}, nil
}

// appendConcurrently has writers goroutines append n single events in all,
// each to its own stream.
func appendConcurrently(l *eventlog.Log, writers, n int) error {
	ev := syntheticEvent()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		stream := fmt.Sprint("task/w", w)
		wg.Go(func() {
			for next.Add(1) <= int64(n) && errs[w] == nil {
				_, errs[w] = l.Append(stream, eventlog.Any, ev)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// bytesRows measures the size on disk of events with 200-byte payloads in
// an event log file against the same records in SQLite (the file's size,
// and the bytes the file system allocated for it), and of the generated
// file (log, projections and snapshots, as gen left it) against its
// events in SQLite.
func (b *bench) bytesRows() ([]Row, error) {
	logPath := filepath.Join(b.dir, "bytes.db")
	sqlPath := filepath.Join(b.dir, "bytes-sqlite.db")
	b.cleanup(logPath)
	b.cleanup(sqlPath)
	n := float64(b.size.bytesEvents)
	if err := fillLog(logPath, b.size.bytesEvents); err != nil {
		return nil, err
	}
	if _, err := copyToSQLite(b.ctx, logPath, sqlPath); err != nil {
		return nil, err
	}
	if err := checkpointSQLite(sqlPath); err != nil {
		return nil, err
	}
	sizes, err := sizesOf(fileSize, logPath, sqlPath)
	if err != nil {
		return nil, err
	}
	alloc, err := sizesOf(allocated, logPath, sqlPath)
	if err != nil {
		return nil, err
	}
	gen := float64(b.genInfo.Size) / float64(b.genInfo.Events)
	return []Row{
		newRow("bytes_per_event", float64(sizes[0])/n, float64(sizes[1])/n, "B", atMost("value", 600)),
		newRow("bytes_per_event_alloc", float64(alloc[0])/n, float64(alloc[1])/n, "B", nil),
		newRow("bytes_per_event_gen", gen, float64(b.genSQLiteSize)/float64(b.genEvents), "B", nil),
	}, nil
}

// sizesOf measures each path with size.
func sizesOf(size func(string) (int64, error), paths ...string) ([]int64, error) {
	out := make([]int64, len(paths))
	for i, p := range paths {
		var err error
		if out[i], err = size(p); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// fillLog appends n synthetic events to a new log at path without fsync,
// as workload.Commits lays them out (the eventlog package's read
// benchmark does the same).
func fillLog(path string, n int) error {
	l, err := eventlog.Open(path, eventlog.Options{Create: true, NoSync: true})
	if err != nil {
		return err
	}
	defer l.Close()
	run := make([]eventlog.Event, workload.RunEvents)
	for i := range run {
		run[i] = syntheticEvent()
	}
	for commit := range workload.Commits(n) {
		err := l.Update(func(tx *eventlog.Tx) error {
			for _, r := range commit {
				if _, err := tx.Append(r.Stream, eventlog.Any, run[:r.Events]...); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func fileSize(path string) (int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}
