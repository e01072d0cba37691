package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/pgstore"
	"github.com/spf13/cobra"
)

// migrateResult is migrate's JSON output.
type migrateResult struct {
	From   string `json:"from"` // database URLs without their password
	To     string `json:"to"`
	Events uint64 `json:"events"`
	Head   string `json:"head"` // HASH@SEQ, the source's, verified in the target
}

func (a *app) migrateCommand() *cobra.Command {
	var to, from string
	cmd := &cobra.Command{
		Use:   "migrate --to URL|PATH [--from PATH|URL]",
		Short: "Copy every event into an empty store elsewhere (a file into PostgreSQL, or back), verified",
		Long: "migrate copies the events of the store --from names (default: --db, FLOW_DB or the file found\n" +
			"from here) into the empty store --to names, a database URL or a new file, as\n" +
			"'export | import -' would, with its progress on stderr (N/M events). Then it verifies the\n" +
			"copy and that it holds the source's head hash at its seq (as verify --expect-head does).\n" +
			"A target that holds events is refused (exit 4), and so is the source itself (exit 2); the\n" +
			"import is all or nothing, so a failed migrate leaves the target as it was (a new file is\n" +
			"removed).",
		Example: "  flowctl migrate --to 'postgres://flow@db.example/flow?sslmode=require'\n" +
			"  flowctl migrate --from 'postgres://flow@db.example/flow' --to backup.db",
		Args: cobra.NoArgs,
	}
	cmd.Flags().StringVar(&to, "to", "", "the empty store to copy into: a database URL or the path of a new file")
	cmd.Flags().StringVar(&from, "from", "", "the store to copy (default: --db, FLOW_DB or the file found from here)")
	cmd.RunE = a.action(func(cmd *cobra.Command, _ []string) error {
		if to == "" {
			return usageError{errors.New("migrate needs --to: the database URL or new file to copy into")}
		}
		return a.runMigrate(from, to)
	})
	return cmd
}

// shown is dsn as output shows it: a URL without its password.
func shown(dsn string) string {
	if store.DriverName(dsn) == store.PathDriver {
		return dsn
	}
	return pgstore.Redact(dsn)
}

// migration is one run of migrate: its progress is drawn from a
// goroutine of its own, and the engines' warnings take the same lock.
type migration struct {
	a  *app
	mu sync.Mutex
}

// options are the engines' options, with warnings under m's lock.
func (m *migration) options(readOnly bool) (flow.Options, error) {
	opts, err := m.a.openOptions(readOnly)
	opts.Warn = func(msg string) {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.a.warn(msg)
	}
	return opts, err
}

func (a *app) runMigrate(from, to string) (err error) {
	m := &migration{a: a}
	src, err := a.migrateSource(from)
	if err != nil {
		return err
	}
	if store.DriverName(to) == store.PathDriver {
		to = a.abs(to)
	}
	if to == src {
		return usageError{fmt.Errorf("--to names the store migrate copies from (%s)", shown(src))}
	}
	a.work = "-" // the engines draw no bar: migrate draws its own
	opts, err := m.options(true)
	if err != nil {
		return err
	}
	in, err := flow.Open(src, opts)
	if errors.Is(err, store.ErrNotExist) {
		err = withHint(err, "--from (or --db) names the store to copy")
	}
	if err != nil {
		return err
	}
	defer closeEngine(in, &err)
	head, err := headOf(in)
	if err != nil {
		return err
	}
	out, made, err := m.openTarget(to)
	if err != nil {
		return err
	}
	err = m.copyEvents(in, out, head.Seq)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		made.undo()
		return err
	}
	if err := m.verifyCopy(to, head); err != nil {
		return err
	}
	res := migrateResult{From: shown(src), To: shown(to), Events: head.Seq, Head: head.String()}
	return a.printer().one(res, func(w io.Writer) {
		fmt.Fprintf(w, "migrated %s from %s to %s\n", plural(res.Events, "event"), res.From, res.To)
		fmt.Fprintf(w, "verified: head %s\n", res.Head)
	})
}

// migrateSource is the store migrate copies: --from, else the one every
// command opens.
func (a *app) migrateSource(from string) (string, error) {
	switch {
	case from == "":
		return a.dbPath()
	case store.DriverName(from) == store.PathDriver:
		return a.abs(from), nil
	}
	return from, nil
}

// headOf returns the seq and hash of the last event of e; the zero Head
// when it has none.
func headOf(e *flow.Engine) (flow.Head, error) {
	var h flow.Head
	err := e.EventsBack(flow.Filter{Limit: 1}, func(ev flow.Event) error {
		h = flow.Head{Seq: ev.Seq, Hash: ev.Hash}
		return store.ErrStop
	})
	if errors.Is(err, store.ErrStop) {
		err = nil
	}
	return h, err
}

// openTarget opens (creating it when there is none) the store migrate
// copies into, and refuses one that holds events. made is the file it
// created, for undo.
func (m *migration) openTarget(to string) (eng *flow.Engine, made *madePaths, err error) {
	opts, err := m.options(false)
	if err != nil {
		return nil, nil, err
	}
	opts.Create = true
	if store.DriverName(to) == store.PathDriver {
		if _, err := os.Lstat(to); errors.Is(err, fs.ErrNotExist) {
			if made, err = makeFile(to); err != nil {
				return nil, nil, err
			}
		}
	}
	eng, err = flow.Open(to, opts)
	if err == nil {
		var h flow.Head
		if h, err = headOf(eng); err == nil && h.Seq > 0 {
			err = withHint(fmt.Errorf("%w: %s holds %s: migrate copies into an empty store",
				flow.ErrExists, shown(to), plural(h.Seq, "event")),
				"name a new database, a new schema (?search_path=NAME) or a new file with --to")
		}
		if err != nil {
			eng.Close()
		}
	}
	if err != nil {
		made.undo()
		return nil, nil, err
	}
	return eng, made, nil
}

// copyEvents exports in into out through a pipe, showing total events'
// progress on stderr.
func (m *migration) copyEvents(in, out *flow.Engine, total uint64) error {
	pr, pw := io.Pipe()
	lines := &lineCounter{w: pw}
	stop := m.progress(&lines.n, total)
	go func() {
		_, err := in.Export(lines, 0)
		pw.CloseWithError(err)
	}()
	_, err := out.Import(pr)
	pr.CloseWithError(errors.New("the import stopped"))
	stop(err == nil)
	return err
}

// verifyCopy verifies the store at to and that it holds head.
func (m *migration) verifyCopy(to string, head flow.Head) error {
	opts, err := m.options(true)
	if err != nil {
		return err
	}
	e, err := flow.Open(to, opts)
	if err != nil {
		return err
	}
	defer e.Close()
	if _, err := e.Verify(); err != nil {
		return err
	}
	if head.Seq == 0 {
		return nil
	}
	return e.CheckHead(head)
}

// lineCounter counts the lines written through it: the events of an
// export.
type lineCounter struct {
	w io.Writer
	n atomic.Uint64
}

func (c *lineCounter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(uint64(bytes.Count(p[:n], []byte{'\n'})))
	return n, err
}

// progress shows how many of total events were copied (done) on stderr,
// every progressEvery, until stop: a bar on a terminal, else a line
// "N/M events" each tenth of the way. -q shows nothing. stop(true) shows
// the last count.
func (m *migration) progress(done *atomic.Uint64, total uint64) (stop func(ok bool)) {
	a := m.a
	if a.g.quiet || total == 0 {
		return func(bool) {}
	}
	bar := a.progressFunc("migrating", "events")
	step, next := max(total/10, 1), uint64(0)
	show := func(n uint64) {
		m.mu.Lock()
		defer m.mu.Unlock()
		switch {
		case bar != nil:
			bar(min(n, total), total)
		case n >= next || n == total:
			fmt.Fprintf(a.stderr, "migrate: %d/%d events\n", n, total)
			next = (n/step + 1) * step
		}
	}
	quit, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				if n := done.Load(); n > 0 && n < total {
					show(n)
				}
			}
		}
	}()
	return func(ok bool) {
		close(quit)
		<-ended
		if ok {
			show(total)
		} else {
			m.mu.Lock()
			a.clearProgress()
			m.mu.Unlock()
		}
	}
}

// progressEvery is how often migrate looks at its progress.
const progressEvery = 200 * time.Millisecond
