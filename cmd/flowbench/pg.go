package main

import (
	"bufio"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/internal/workload"
	"github.com/flowctl/flowctl/pgstore"
	"github.com/jackc/pgx/v5"
)

// EnvPG names the variable that gives the PostgreSQL server of the pg
// rows when --pg does not (as for the tests: internal/pgtest).
const EnvPG = "FLOWCTL_PG_URL"

// Issue 17's rows: the PostgreSQL backend beside the bbolt file, each
// figure measured in turns with the same on a file. The stores live in
// schemas of their own (flowbench_PID_NAME), dropped at the end. The
// server's durability is its own (a throwaway cluster runs with fsync
// off), the file's is fsync'd: the append rows compare what a command
// waits for on each, not disks.
func (b *bench) pgRows() ([]Row, error) {
	if b.pg == "" {
		return nil, nil
	}
	p := &pgBench{b: b, base: b.pg}
	defer p.dropSchemas()
	var rows []Row
	for _, f := range []func() ([]Row, error){p.appendRows, p.concurrentRows, p.bulkRows} {
		got, err := f()
		if err != nil {
			return nil, err
		}
		rows = append(rows, got...)
	}
	return rows, nil
}

// pgBench is the state of the pg rows.
type pgBench struct {
	b       *bench
	base    string
	schemas []string
}

// dsn returns the URL of a new, empty schema named after name.
func (p *pgBench) dsn(name string) (string, error) {
	u, err := url.Parse(p.base)
	if err != nil {
		return "", fmt.Errorf("--pg: %v", pgstore.Redact(p.base))
	}
	schema := fmt.Sprintf("flowbench_%d_%s", os.Getpid(), name)
	if err := p.exec("DROP SCHEMA IF EXISTS " + pgx.Identifier{schema}.Sanitize() + " CASCADE"); err != nil {
		return "", err
	}
	p.schemas = append(p.schemas, schema)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// exec runs sql on the server, outside any store.
func (p *pgBench) exec(sql string) error {
	ctx, cancel := context.WithTimeout(p.b.ctx, time.Minute)
	defer cancel()
	c, err := pgx.Connect(ctx, p.base)
	if err != nil {
		return fmt.Errorf("connecting to %s: %v", pgstore.Redact(p.base), err)
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, sql)
	return err
}

func (p *pgBench) dropSchemas() {
	for _, s := range p.schemas {
		p.exec("DROP SCHEMA IF EXISTS " + pgx.Identifier{s}.Sanitize() + " CASCADE")
	}
}

// stores opens a new store on the server and a new file, both empty.
func (p *pgBench) stores(name string) (pg, file store.Store, err error) {
	dsn, err := p.dsn(name)
	if err != nil {
		return nil, nil, err
	}
	pg, err = pgstore.Driver{}.Open(dsn, store.Options{Create: true})
	if err != nil {
		return nil, nil, err
	}
	path := filepath.Join(p.b.dir, "pg-"+name+".db")
	p.b.cleanup(path)
	file, err = store.Open(path, store.Options{Create: true})
	if err != nil {
		pg.Close()
		return nil, nil, err
	}
	return pg, file, nil
}

// appendOne appends the synthetic event to stream in an Update of its own.
func appendOne(st store.Store, stream string) error {
	ev := syntheticEvent()
	return st.Update(func(tx store.Tx) error {
		_, err := tx.Append(stream, store.Any, ev)
		return err
	})
}

// appendRows: one event an Update, as a command appends.
func (p *pgBench) appendRows() ([]Row, error) {
	pg, file, err := p.stores("append")
	if err != nil {
		return nil, err
	}
	defer pg.Close()
	defer file.Close()
	n := p.b.size.appendOps
	m, err := interleave(p.b.ctx, p.b.size.appendRounds,
		perOp(n, time.Microsecond, func(int) error { return appendOne(pg, workload.StorageStream) }),
		perOp(n, time.Microsecond, func(int) error { return appendOne(file, workload.StorageStream) }))
	if err != nil {
		return nil, err
	}
	return []Row{newRow("pg_append_single", m[0], m[1], "µs", nil)}, nil
}

// concurrentRows: 8 and 64 writers appending single events at once, each
// to its own stream, in events/s: on the server each writer is a store
// of its own (a process's connection), on the file goroutines share the
// store (a file is opened once per process).
func (p *pgBench) concurrentRows() ([]Row, error) {
	var rows []Row
	for _, writers := range []int{8, 64} {
		name := fmt.Sprintf("writers%d", writers)
		pg, file, err := p.stores(name)
		if err != nil {
			return nil, err
		}
		pgs := []store.Store{pg}
		dsn := p.lastDSN()
		for len(pgs) < writers {
			st, err := pgstore.Driver{}.Open(dsn, store.Options{})
			if err != nil {
				closeAll(pgs)
				file.Close()
				return nil, err
			}
			pgs = append(pgs, st)
		}
		events := p.b.size.groupEvents
		m, err := interleave(p.b.ctx, p.b.size.groupRounds,
			rate(events, func() error { return appendWriters(pgs, writers, events) }),
			rate(events, func() error { return appendWriters([]store.Store{file}, writers, events) }))
		closeAll(pgs)
		file.Close()
		if err != nil {
			return nil, err
		}
		rows = append(rows, newRow(fmt.Sprintf("pg_append_%d_writers", writers), m[0], m[1], "events/s", nil))
	}
	return rows, nil
}

// lastDSN is the URL of the schema dsn made last.
func (p *pgBench) lastDSN() string {
	u, _ := url.Parse(p.base)
	q := u.Query()
	q.Set("search_path", p.schemas[len(p.schemas)-1])
	u.RawQuery = q.Encode()
	return u.String()
}

func closeAll(sts []store.Store) {
	for _, st := range sts {
		st.Close()
	}
}

// appendWriters has writers goroutines append n single events in all,
// writer w through sts[w % len(sts)], each to a stream of its own.
func appendWriters(sts []store.Store, writers, n int) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w := range writers {
		st, stream := sts[w%len(sts)], fmt.Sprint("task/w", w)
		wg.Go(func() {
			for next.Add(1) <= int64(n) && errs[w] == nil {
				errs[w] = appendOne(st, stream)
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

// bulkRows: an export of the generated file's first project (its first
// importEvents events with --quick) imported by flowctl into a new schema
// and into a new file, events/s; then the replay of the stores it made
// (every record read and checked), events/s; then flowctl status and task
// show on them, ms.
func (p *pgBench) bulkRows() ([]Row, error) {
	b := p.b
	project := workload.ProjectName(0)
	export := filepath.Join(b.dir, "pg-export.jsonl")
	b.cleanup(export)
	n, err := p.writeExport(export, project)
	if err != nil {
		return nil, err
	}
	file := filepath.Join(b.dir, "pg-import.db")
	var dsn string
	round := 0
	imp := func(target func() (string, error)) measurement {
		return func() (float64, error) {
			db, err := target()
			if err != nil {
				return 0, err
			}
			d, _, err := b.runFlowctl([]string{"--db", db, "import", "-q", export}, nil)
			return float64(n) / d.Seconds(), err
		}
	}
	m, err := interleave(b.ctx, b.size.bulkRounds,
		imp(func() (string, error) {
			round++
			var err error
			dsn, err = p.dsn(fmt.Sprint("import", round))
			return dsn, err
		}),
		imp(func() (string, error) { b.cleanup(file); return file, nil }))
	if err != nil {
		return nil, err
	}
	rows := []Row{newRow("pg_import", m[0], m[1], "events/s", atLeast("ratio", 0.5))}

	replay := func(dsn string) measurement {
		return rate(n, func() error {
			st, err := store.Open(dsn, store.Options{ReadOnly: true})
			if err != nil {
				return err
			}
			defer st.Close()
			return st.View(func(tx store.Tx) error {
				return tx.Replay(1, 0, func(*store.Record) error { return nil })
			})
		})
	}
	m, err = interleave(b.ctx, b.size.replayRounds, replay(dsn), replay(file))
	if err != nil {
		return nil, err
	}
	rows = append(rows, newRow("pg_replay", m[0], m[1], "events/s", nil))

	cli := func(db string, args ...string) *proc {
		return b.proc(append([]string{"--db", db, "--project", project}, args...)...)
	}
	ps := []*proc{cli(dsn, "status"), cli(file, "status"), cli(dsn, "task", "show", "T-1"), cli(file, "task", "show", "T-1")}
	m, err = interleave(b.ctx, b.size.cliRuns, measurements(ps)...)
	if err != nil {
		return nil, err
	}
	return append(rows,
		newRow("pg_cli_status", m[0], m[1], "ms", nil).withRSS(ps[0].rss, 0),
		newRow("pg_cli_task_show", m[2], m[3], "ms", nil).withRSS(ps[2].rss, 0)), nil
}

// writeExport exports project of the generated file to path, its first
// importEvents events when the size says so, and returns how many.
func (p *pgBench) writeExport(path, project string) (int, error) {
	b := p.b
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w := &headLines{w: bufio.NewWriter(f), max: b.size.importEvents}
	if _, _, err := b.runFlowctl([]string{"--db", b.gen, "export", "--project", project}, w); err != nil {
		return 0, err
	}
	return w.n, w.w.Flush()
}

// headLines writes the first max lines written to it (0: all) and counts
// them.
type headLines struct {
	w   *bufio.Writer
	max int
	n   int
}

func (h *headLines) Write(b []byte) (int, error) {
	for i := 0; i < len(b); {
		if h.max > 0 && h.n >= h.max {
			return len(b), nil
		}
		j := i
		for j < len(b) && b[j] != '\n' {
			j++
		}
		if j < len(b) {
			j++
			h.n++
		}
		if _, err := h.w.Write(b[i:j]); err != nil {
			return 0, err
		}
		i = j
	}
	return len(b), nil
}
