package store

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Options configure Driver.Open and the optional driver operations.
type Options struct {
	// ReadOnly opens the store for reading; writes fail with ErrReadOnly.
	ReadOnly bool
	// Create makes Open create the store when it is missing. Without it,
	// a missing store is ErrNotExist.
	Create bool
	// Timeout bounds the wait for the store's lock; 0 means the driver's
	// default. Past it Open fails with ErrBusy.
	Timeout time.Duration
	// NoSync skips durable commits: for tests and throwaway files only.
	NoSync bool
	// Now is the clock for events appended without a time; nil: time.Now.
	Now func() time.Time
	// Progress, when set, hears how long work goes (Verify, Compact):
	// items done so far, of total; first 0, last total.
	Progress func(done, total uint64)
}

// Driver opens stores of one kind. A backend registers one with Register
// (usually in an init function, as database/sql drivers do), and the
// caller picks it by the data source name it opens.
type Driver interface {
	// Open opens the store dsn names. Errors: ErrNotExist, ErrBusy,
	// ErrNewerFormat, a *CorruptionError, or the system's error.
	Open(dsn string, o Options) (Store, error)
}

// CompactReport is what Compact did: the store's size before and after.
type CompactReport struct {
	Before, After int64
	Verified      VerifyReport // Verify's report of the new store
}

// Compacter is a Driver that can rewrite a store without its free space.
type Compacter interface {
	// Compact rewrites the store dsn names, verifies the copy and puts it
	// in place; the old store stays as it was on any failure.
	Compact(dsn string, o Options) (CompactReport, error)
}

// SalvageReport is what Salvage found in a damaged store.
type SalvageReport struct {
	// HeadSeq is the head the store names; 0 when it could not be read
	// (the records are then kept as far as the chain runs).
	HeadSeq uint64
	// Kept is how many records were handed over: seqs 1..Kept, every one
	// with its CRC and hash right, each continuing the chain of the one
	// before it. KeptHash is the hash of the last.
	Kept     uint64
	KeptHash Hash
	// LostFrom..LostTo are the seqs known to exist (up to the head, or
	// the highest seq found) that are not kept; both 0 when none is lost.
	LostFrom, LostTo uint64
	// Stranded counts the lost records that still verify on their own:
	// a gap before them, they cannot continue the chain with their hashes.
	Stranded int
	// PastHead counts the records after the head that continue the chain
	// from it: a commit whose head was lost, or one that never completed.
	// They are not kept.
	PastHead int
	// Reason says why the chain stops at Kept when records are lost.
	Reason string
	// Damage lists what the reads found damaged, once each.
	Damage []string
	// ScannedPages is set when the backend's structure did not give every
	// record and its raw storage was searched for them.
	ScannedPages bool
}

// Lost is how many records were lost.
func (r SalvageReport) Lost() uint64 {
	if r.LostFrom == 0 {
		return 0
	}
	return r.LostTo - r.LostFrom + 1
}

// Salvager is a Driver that can read what still verifies of a damaged
// store.
type Salvager interface {
	// Salvage calls fn with records 1..Kept in seq order: the longest
	// prefix of the store whose records verify and chain from seq 1. It
	// writes nothing. Damage is in the report, not an error; it returns
	// ErrNotExist, ErrBusy, or fn's error.
	Salvage(dsn string, o Options, fn func(*Record) error) (SalvageReport, error)
}

// PathDriver is the name of the driver for a data source name that is a
// path rather than a URL: the embedded bbolt file.
const PathDriver = "bbolt"

var (
	driversMu sync.RWMutex
	drivers   = map[string]Driver{}
)

// Register makes a driver available by name: the scheme of the URLs it
// opens ("postgres" for postgres://...), or PathDriver for paths. It
// panics if d is nil or name is taken, as database/sql.Register does.
func Register(name string, d Driver) {
	driversMu.Lock()
	defer driversMu.Unlock()
	if d == nil {
		panic("store: Register driver is nil")
	}
	if _, dup := drivers[name]; dup {
		panic("store: Register called twice for driver " + name)
	}
	drivers[name] = d
}

// Drivers returns the names of the registered drivers, sorted.
func Drivers() []string {
	driversMu.RLock()
	defer driversMu.RUnlock()
	names := make([]string, 0, len(drivers))
	for n := range drivers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// DriverName returns the name of the driver for dsn: its scheme when it
// is a URL ("postgres://..." -> "postgres"), PathDriver for a path.
func DriverName(dsn string) string {
	scheme, _, ok := strings.Cut(dsn, "://")
	if !ok || scheme == "" || strings.ContainsAny(scheme, `/\.`) {
		return PathDriver
	}
	return strings.ToLower(scheme)
}

// Lookup returns the registered driver for dsn (DriverName). Without one
// it returns ErrNoDriver, naming the scheme.
func Lookup(dsn string) (Driver, error) {
	name := DriverName(dsn)
	driversMu.RLock()
	d := drivers[name]
	driversMu.RUnlock()
	if d != nil {
		return d, nil
	}
	if name == PathDriver {
		return nil, fmt.Errorf("%w for a path (the bbolt driver, package eventlog, is not built in)", ErrNoDriver)
	}
	return nil, fmt.Errorf("%w for %s:// (not built in)", ErrNoDriver, name)
}

// Open opens dsn with its registered driver (Lookup).
func Open(dsn string, o Options) (Store, error) {
	d, err := Lookup(dsn)
	if err != nil {
		return nil, err
	}
	return d.Open(dsn, o)
}
