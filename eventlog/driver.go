package eventlog

import (
	"os"
	"path/filepath"

	"github.com/flowctl/flowctl/flow/store"
	bolt "go.etcd.io/bbolt"
)

// The seam: a Log is a store.Store through Log.Store, a Tx a store.Tx as
// it is, and Driver opens one by path for the registry (doc.go, "The
// seam").
var (
	_ store.Tx         = (*Tx)(nil)
	_ store.Store      = logStore{}
	_ store.Verifier   = logStore{}
	_ store.FreeSpacer = logStore{}
	_ store.Driver     = Driver{}
	_ store.Compacter  = Driver{}
	_ store.Salvager   = Driver{}
)

func init() { store.Register(store.PathDriver, Driver{}) }

// Store returns l seen through the engine's seam. Closing it closes l.
func (l *Log) Store() store.Store { return logStore{l} }

// logStore is a Log whose transactions are store.Tx.
type logStore struct{ l *Log }

// View is Log.View, without a second closure around fn.
func (s logStore) View(fn func(store.Tx) error) error {
	return s.l.view(func(btx *bolt.Tx) error { return fn(newTx(s.l, btx)) })
}

func (s logStore) Update(fn func(store.Tx) error) error {
	return s.l.Update(func(tx *Tx) error { return fn(tx) })
}

func (s logStore) Close() error                        { return s.l.Close() }
func (s logStore) FreeBytes() (free, size int64)       { return s.l.FreeBytes() }
func (s logStore) Verify() (store.VerifyReport, error) { return s.l.Verify() }

// VerifyWith is Log.VerifyWith.
func (s logStore) VerifyWith(checked func(), each func(*store.Record) error) (store.VerifyReport, error) {
	return s.l.VerifyWith(checked, each)
}

// Driver is the store.Driver of bbolt files, registered as
// store.PathDriver: a data source name is a file's path.
type Driver struct{}

// Open opens the log at path (see Open). With o.Create it also makes the
// file's directory.
func (Driver) Open(path string, o store.Options) (store.Store, error) {
	if o.Create && !o.ReadOnly {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
	}
	l, err := Open(path, options(o))
	if err != nil {
		return nil, err
	}
	return l.Store(), nil
}

// Compact is Compact for the registry.
func (Driver) Compact(path string, o store.Options) (store.CompactReport, error) {
	return Compact(path, options(o))
}

// Salvage is Salvage for the registry.
func (Driver) Salvage(path string, o store.Options, fn func(*Record) error) (store.SalvageReport, error) {
	return Salvage(path, options(o), fn)
}

func options(o store.Options) Options {
	return Options{ReadOnly: o.ReadOnly, Create: o.Create, Timeout: o.Timeout, NoSync: o.NoSync, Now: o.Now, Progress: o.Progress}
}
