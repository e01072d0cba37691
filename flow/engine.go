package flow

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/flowctl/flowctl/flow/internal/hooks"
	"github.com/flowctl/flowctl/flow/internal/logidx"
	"github.com/flowctl/flowctl/flow/internal/snapstore"
	"github.com/flowctl/flowctl/flow/store"
)

// DefaultDir and DefaultFile name the file that Locate looks for.
const (
	DefaultDir  = ".flow"
	DefaultFile = "flow.db"
)

// Options configure Open.
type Options struct {
	ReadOnly    bool          // open with a shared lock; writes fail
	Create      bool          // create the file (and its directory) if missing
	LockTimeout time.Duration // bound on waiting for the file lock; 0: 5s
	Actor       string        // recorded on every event this engine appends
	Session     string
	NoSync      bool             // skip fsync: tests and benchmarks only
	Now         func() time.Time // clock for new events; nil: time.Now
	// Warn receives warnings, such as an event of a type this binary does
	// not know being skipped by the fold. nil: warnings are dropped.
	Warn func(msg string)
	// SnapshotEvery is the fewest events of a project between its last
	// snapshot and an automatic one (large snapshots are spaced further,
	// see SnapshotBytesPerEvent): 0 means DefaultSnapshotEvery, a negative
	// value none.
	SnapshotEvery int
	// Progress, when set, hears how long work goes: a rebuild of the
	// projections, an import, an export, a verify or a compact (items
	// done so far, of total; first 0, last total; a verify and a compact
	// report the walk of the log that checks every record).
	Progress func(done, total uint64)
	// Cache is the read cache; several engines (one per operation, say)
	// may share one. nil: the engine makes its own.
	Cache *Cache
	// Hooks, when set, runs the hooks around every command (see Hooks);
	// the engine then closes its file while they run: one operation at
	// a time.
	Hooks *Hooks
}

// Engine is flowctl's one public entry point: commands, queries and audit
// over one store. It is safe for concurrent use; concurrent writes share
// commits.
type Engine struct {
	path   string
	opts   Options
	driver store.Driver // opens path; nil for an engine made by New
	log    store.Store  // nil while released between pages of a long read
	cache  *Cache
	at     *at              // set on a point-in-time view (At)
	tx     store.Tx         // set on the view of a Batch: every read and write joins it
	batch  *batch           // set on the view of a Batch: what its end does
	idx    *logidx.Writer   // set on the view of a Batch: its commands' log index entries, written once at its end
	held   *heldHead        // the head while the file is held; shared with views
	snaps  *snapstore.Cache // what the newest snapshots this engine stored hold; shared with views
	hooks  *hooks.Set       // the hooks its commands run, found at the first (hookSet)
}

// Open opens the engine on the store at path: a file's path, or a URL
// naming another backend (postgres://...). The driver of its kind must be
// registered (package store), as database/sql's must: a program imports
// the backend, e.g. _ "github.com/flowctl/flowctl/eventlog" for files.
// It returns store.ErrNoDriver when none is, and the driver's errors
// (store.ErrNotExist, store.ErrBusy, ...).
func Open(path string, opts Options) (*Engine, error) {
	d, err := store.Lookup(path)
	if err != nil {
		return nil, err
	}
	e := newEngine(path, opts)
	e.driver = d
	if err := e.acquire(); err != nil {
		return nil, err
	}
	return e.start()
}

// New runs the engine on st, a store the caller opened; the engine owns
// it from then on and closes it in Close. opts.ReadOnly must say whether
// st was opened read-only; Create, LockTimeout, NoSync and Progress are
// the caller's business when opening st. A read-only engine made by New
// keeps st open through long reads, which an Open one closes between
// pages.
func New(st store.Store, opts Options) (*Engine, error) {
	e := newEngine("", opts)
	e.log = st
	return e.start()
}

func newEngine(path string, opts Options) *Engine {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	opts.Session = opts.Hooks.Session(opts.Session)
	e := &Engine{path: path, opts: opts, cache: opts.Cache, held: &heldHead{}, snaps: &snapstore.Cache{}}
	if e.cache == nil {
		e.cache = NewCache(DefaultCacheSize)
	}
	return e
}

// start brings the projections of a new engine up to date.
func (e *Engine) start() (*Engine, error) {
	if err := e.syncProjections(); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// storeOptions are the driver's options for this engine.
func (e *Engine) storeOptions() store.Options {
	return store.Options{
		ReadOnly: e.opts.ReadOnly,
		Create:   e.opts.Create,
		Timeout:  e.opts.LockTimeout,
		NoSync:   e.opts.NoSync,
		Now:      e.opts.Now,
		Progress: e.opts.Progress,
	}
}

func (e *Engine) acquire() error {
	if e.log != nil {
		return nil
	}
	if e.driver == nil {
		return store.ErrClosed
	}
	st, err := e.driver.Open(e.path, e.storeOptions())
	if err != nil {
		return err
	}
	e.log = st
	return nil
}

// release closes the file between pages of a long read, so that a slow
// reader (a pager, a pipe) never holds the lock that writers wait for.
func (e *Engine) release() error {
	// A view shares its engine's file; New's store cannot be reopened.
	if e.log == nil || !e.opts.ReadOnly || e.at != nil || e.driver == nil {
		return nil
	}
	e.held.forget()
	err := e.log.Close()
	e.log = nil
	return err
}

// Close releases the file. In a test binary it also checks that no
// caller changed an entity the cache shares (see Cache).
func (e *Engine) Close() error {
	if e.log == nil {
		return nil
	}
	e.held.forget()
	err := e.log.Close()
	e.log = nil
	e.cache.lru.Check()
	return err
}

// snapshotEvery returns the snapshot interval, 0 for none.
func (e *Engine) snapshotEvery() uint64 {
	switch {
	case e.opts.SnapshotEvery < 0:
		return 0
	case e.opts.SnapshotEvery == 0:
		return DefaultSnapshotEvery
	}
	return uint64(e.opts.SnapshotEvery)
}

// warn reports a warning through Options.Warn.
func (e *Engine) warn(format string, args ...any) {
	if e.opts.Warn != nil {
		e.opts.Warn(fmt.Sprintf(format, args...))
	}
}

// Path returns the path (or URL) of the store Open opened; "" for New.
func (e *Engine) Path() string { return e.path }

// Locate finds the file the way git finds .git: dir/.flow/flow.db in dir or
// the nearest parent that has one. It returns ErrNotFound naming dir when
// there is none.
func Locate(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		p := filepath.Join(d, DefaultDir, DefaultFile)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("%w: no %s in %s or any parent directory", ErrNotFound,
				filepath.Join(DefaultDir, DefaultFile), abs)
		}
	}
}
