package main

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/internal/workload"
	"github.com/flowctl/flowctl/projection"
)

// taskRead is one read: a task of a project, at a seq where it exists.
type taskRead struct {
	seq           uint64
	project, task string
}

// drawReads picks n random seqs of the file at path whose event changed a
// task, and that task: a read at the seq finds it.
func drawReads(path string, n int) ([]taskRead, error) {
	l, err := eventlog.Open(path, eventlog.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer l.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	var out []taskRead
	err = l.View(func(tx *eventlog.Tx) error {
		head, _ := tx.Head()
		for tries := 0; len(out) < n && tries < 100*n; tries++ {
			seq := 1 + rng.Uint64N(head)
			r, err := tx.Record(seq)
			if err != nil {
				return err
			}
			if kind, project, id, ok := projection.ParseStream(r.Stream); ok && kind == projection.KindTask {
				out = append(out, taskRead{seq: seq, project: project, task: id})
			}
		}
		return nil
	})
	if err == nil && len(out) < n {
		err = fmt.Errorf("%s: found %d task events, want %d", path, len(out), n)
	}
	return out, err
}

// openReader opens the generated file read-only, with a cache of size
// entities (1: every read of a task other than the last one misses).
func (b *bench) openReader(size int) (*flow.Engine, error) {
	return flow.Open(b.gen, flow.Options{ReadOnly: true, Actor: "bench", Session: "bench", Cache: flow.NewCache(size)})
}

// pointInTimeRow measures reading a task at a random seq of the generated
// file (a view at that seq: the nearest snapshot at or below it plus the
// events between) against reading the same task at the head from the
// stored projections, the cache bypassed.
func (b *bench) pointInTimeRow() ([]Row, error) {
	reads, err := drawReads(b.gen, b.size.pitReads)
	if err != nil {
		return nil, err
	}
	e, err := b.openReader(1)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	n := len(reads)
	m, err := interleave(b.ctx, b.size.pitRounds,
		perOp(n, time.Millisecond, func(i int) error { return readAt(e, reads[i]) }),
		perOp(n, time.Millisecond, func(i int) error { _, err := e.Task(reads[i].project, reads[i].task); return err }))
	if err != nil {
		return nil, err
	}
	return []Row{newRow("point_in_time", m[0], m[1], "ms", atMost("value", 2))}, nil
}

// readAt reads r's task as it stood at r's seq and checks that it is the
// version the event at that seq made.
func readAt(e *flow.Engine, r taskRead) error {
	t, err := e.At(r.project, flow.Point{Seq: r.seq}).Task(r.project, r.task)
	if err == nil && t.Seq != r.seq {
		err = fmt.Errorf("%s %s at seq %d: the view shows its seq %d", r.project, r.task, r.seq, t.Seq)
	}
	return err
}

// cacheHitRow measures Engine.Task reads that hit the engine's cache
// against the same reads through an engine whose cache holds one entity,
// so that each of them reads the stored projection and decodes it.
func (b *bench) cacheHitRow() ([]Row, error) {
	hit, err := b.openReader(flow.DefaultCacheSize)
	if err != nil {
		return nil, err
	}
	defer hit.Close()
	miss, err := b.openReader(1)
	if err != nil {
		return nil, err
	}
	defer miss.Close()
	project := workload.ProjectName(0)
	ids, err := taskIDs(hit, project, 64)
	if err != nil {
		return nil, err
	}
	read := func(e *flow.Engine) func(i int) error {
		return func(i int) error {
			_, err := e.Task(project, ids[i%len(ids)])
			return err
		}
	}
	if _, err := timed(len(ids), read(hit)); err != nil { // fill the cache
		return nil, err
	}
	m, err := interleave(b.ctx, b.size.cacheRounds,
		perOp(b.size.cacheHits, time.Nanosecond, read(hit)),
		perOp(b.size.cacheMisses, time.Nanosecond, read(miss)))
	if err != nil {
		return nil, err
	}
	return []Row{newRow("cache_hit", m[0], m[1], "ns", atMost("value", 200))}, nil
}

// taskIDs returns the ids of the first tasks of project, up to max.
func taskIDs(e *flow.Engine, project string, max int) ([]string, error) {
	p, err := e.Project(project)
	if err != nil {
		return nil, err
	}
	if p.Counters.Tasks == 0 {
		return nil, fmt.Errorf("project %s has no tasks", project)
	}
	ids := make([]string, min(max, p.Counters.Tasks))
	for i := range ids {
		ids[i] = projection.ShortID(projection.PrefixTask, i+1)
	}
	return ids, nil
}
