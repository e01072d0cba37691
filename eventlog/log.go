package eventlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// FormatVersion is the file format this package writes in new files
// (and Upgrade makes of older ones). MinReaderVersion is the oldest format
// reader that can still read files it writes. Files of format 1 are
// still read and written in format 1 (doc.go, "File format").
const (
	FormatVersion    = 2
	MinReaderVersion = 2
)

// DefaultTimeout bounds how long Open waits for the file lock.
const DefaultTimeout = 5 * time.Second

// DefaultMaxBatch is the largest number of Update calls committed in one
// bbolt transaction by group commit.
const DefaultMaxBatch = 256

// Bucket names. Changing one is a format change.
var (
	bucketMeta      = []byte("meta")
	bucketLog       = []byte("log")
	bucketStreamIdx = []byte("stream_idx")
	bucketIDs       = []byte("ids")
	bucketProjIdx   = []byte("project_idx")
	bucketTail      = []byte("index_tail")

	logBuckets = [][]byte{bucketMeta, bucketLog, bucketStreamIdx, bucketIDs, bucketProjIdx, bucketTail}

	// reservedBuckets are refused to callers (Tx.Put): the log's own and
	// "streams", which held the stream heads before they were read from
	// stream_idx, so that no file has a caller's bucket of that name.
	reservedBuckets = append([][]byte{[]byte("streams")}, logBuckets...)
)

// Keys in the meta bucket.
var (
	metaFormat    = []byte("format")
	metaMinReader = []byte("min_reader")
	metaCreated   = []byte("created")
	metaHeadSeq   = []byte("head_seq")
	metaHeadHash  = []byte("head_hash")
)

// allocSize is how far ahead of its pages bbolt grows the file (each
// growth is a truncate and an fsync). bbolt's default, 16 MiB, made the
// file up to 16 MiB larger than its data: 839 bytes per event at 20,000
// events where the pages hold 568. At 1 MiB a log of single-event commits
// grows once every ~1,700 appends.
const allocSize = 1 << 20

// Options configure Open.
type Options struct {
	// ReadOnly opens the file with a shared lock; writes fail with ErrReadOnly.
	ReadOnly bool
	// Create makes Open create and initialize the file when it is missing
	// or empty. Without it, a missing file is ErrNotExist and an empty one
	// is corrupt.
	Create bool
	// Timeout bounds the wait for the file lock; 0 means DefaultTimeout.
	// Past it Open fails with ErrBusy.
	Timeout time.Duration
	// NoSync skips fsync on commit, and the truncate and fsync with which
	// bbolt grows the file ahead of its pages. A crash can then lose
	// acknowledged events: for tests and throwaway benchmark files only.
	NoSync bool
	// MaxBatch caps how many concurrent Update calls share one commit;
	// 0 means DefaultMaxBatch, 1 disables group commit.
	MaxBatch int
	// Now is the clock used for events appended without a time; nil means
	// time.Now.
	Now func() time.Time
	// Progress, when set, hears how Verify goes (and so Compact, which
	// verifies its copy): records checked so far, of the head seq; first
	// 0, last the head seq.
	Progress func(done, total uint64)

	// createFormat is the format of a file Open creates; 0 means
	// FormatVersion. Tests set it to make format-1 files.
	createFormat format
}

// Log is an append-only event log in one bbolt file. It is safe for
// concurrent use by several goroutines; concurrent Update calls are
// committed together (group commit).
type Log struct {
	db     *bolt.DB
	opts   Options
	path   string // kept: bbolt forgets its path on Close
	format format // the file's format: how its records are encoded

	mu         sync.Mutex
	pending    []*call
	leading    bool
	lastBatch  int           // calls in the previous commit
	lastCommit time.Duration // how long the previous commit took
	arrived    chan struct{} // a call was queued: wakes gather

	// trimming is KeepTrimmed's pager while it runs: the scans of the
	// transactions begun meanwhile trim as they go (scanTrimStep).
	trimming atomic.Pointer[pager]
}

// Open opens the log at path, creating it if opts.Create is set.
//
// It returns ErrNotExist, ErrBusy (lock timeout), ErrNewerFormat, a
// *CorruptionError for a file that is not a valid log, or an *fs.PathError
// from the operating system.
func Open(path string, opts Options) (*Log, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = DefaultMaxBatch
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := checkFile(path, opts); err != nil {
		return nil, err
	}
	db, err := openBolt(path, opts)
	if err != nil {
		return nil, openError(path, err)
	}
	db.AllocSize = allocSize
	l := &Log{db: db, opts: opts, path: db.Path(), arrived: make(chan struct{}, 1)}
	if err := l.checkMeta(); err != nil {
		db.Close()
		return nil, err
	}
	if !opts.ReadOnly {
		removeStaleCopies(l.path)
	}
	return l, nil
}

// openBolt opens the bbolt file. A truncated file makes bbolt touch
// mapped pages past its end; with panic-on-fault the SIGBUS becomes a
// panic, and the panic a *CorruptionError, instead of a crash.
func openBolt(path string, opts Options) (db *bolt.DB, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer recoverCorruption(&err)
	return bolt.Open(path, 0o644, &bolt.Options{
		ReadOnly: opts.ReadOnly,
		Timeout:  opts.Timeout,
		NoSync:   opts.NoSync || forceNoSync,
		// Without fsync a crash may lose commits anyway; growing the file
		// ahead (a truncate and an fsync per allocSize) buys nothing.
		NoGrowSync: opts.NoSync,
		OpenFile:   lockingOpener(!opts.ReadOnly, opts.Timeout),
	})
}

// checkFile refuses a missing file without Create and an empty one
// (which bbolt would silently initialize) unless Create is set.
func checkFile(path string, opts Options) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if opts.Create && !opts.ReadOnly {
			return nil
		}
		return fmt.Errorf("%w: %s", ErrNotExist, path)
	case err != nil:
		return err
	case fi.IsDir():
		return fmt.Errorf("%w: %s is a directory", ErrInvalid, path)
	case fi.Size() == 0 && !(opts.Create && !opts.ReadOnly):
		return &CorruptionError{Reason: fmt.Sprintf("%s is an empty file, not a flowctl log", path)}
	}
	return nil
}

func openError(path string, err error) error {
	switch {
	case errors.Is(err, ErrBusy), errors.Is(err, bolterrors.ErrTimeout):
		return fmt.Errorf("%w: %s is locked by another process", ErrBusy, path)
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS),
		errors.Is(err, syscall.ENOSPC), errors.Is(err, fs.ErrNotExist):
		return err
	case errors.Is(err, ErrCorrupt):
		return err
	case errors.Is(err, bolterrors.ErrInvalid), errors.Is(err, bolterrors.ErrChecksum),
		errors.Is(err, bolterrors.ErrVersionMismatch):
		return &CorruptionError{Reason: fmt.Sprintf("%s is not a flowctl file (neither of its meta pages is valid)", path)}
	case strings.Contains(err.Error(), "file size too small"): // bbolt has no sentinel for it
		return &CorruptionError{Reason: fmt.Sprintf("%s is not a flowctl file (too small for its meta pages)", path)}
	}
	var perr *fs.PathError
	if errors.As(err, &perr) {
		return err
	}
	return &CorruptionError{Reason: fmt.Sprintf("opening %s: %v", path, err)}
}

// checkMeta validates the format of an existing file (and, for a
// writable open, that it is whole where writes go: opencheck.go), or
// initializes a new one. It reads before it writes so that opening an
// existing file never costs a commit.
func (l *Log) checkMeta() error {
	fresh := false
	err := l.view(func(tx *bolt.Tx) error {
		if err := checkSize(tx, l.path); err != nil {
			return err
		}
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			empty := true
			_ = tx.ForEach(func([]byte, *bolt.Bucket) error { empty = false; return nil })
			if !empty {
				return &CorruptionError{Reason: "file has no meta bucket: not a flowctl log"}
			}
			fresh = true
			return nil
		}
		var err error
		if l.format, err = checkFormat(meta, l.opts.ReadOnly, tx); err != nil || l.opts.ReadOnly {
			return err
		}
		return checkHead(tx, l.format)
	})
	switch {
	case err != nil || (!fresh && l.opts.ReadOnly):
		return err
	case !fresh:
		return checkMetaPages(l.path, l.db.Info().PageSize)
	}
	if l.opts.ReadOnly || !l.opts.Create {
		return &CorruptionError{Reason: "file is an empty bbolt database, not a flowctl log"}
	}
	l.format = l.opts.createFormat
	if l.format == 0 {
		l.format = FormatVersion
	}
	if err := l.db.Update(l.initialize); err != nil {
		return err
	}
	return l.syncDir()
}

// syncDir makes a new file's directory entry durable: bbolt syncs the
// file, not the directory that names it.
func (l *Log) syncDir() error {
	if l.opts.NoSync || forceNoSync {
		return nil
	}
	d, err := os.Open(filepath.Dir(l.path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// checkSize refuses a file shorter than bbolt's meta page says it is
// (truncated), before any page past the end is touched.
func checkSize(tx *bolt.Tx, path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if tx.Size() > fi.Size() {
		return &CorruptionError{Reason: fmt.Sprintf("file is truncated: %d bytes, its pages need %d", fi.Size(), tx.Size())}
	}
	return nil
}

// checkFormat checks meta's format versions and the log's buckets, and
// returns the format to read the file's records in: its own, or, for a
// newer file whose min_reader allows this binary (read-only), the newest
// this binary knows.
func checkFormat(meta *bolt.Bucket, readOnly bool, tx *bolt.Tx) (format, error) {
	f, ok1 := getUint32(meta, metaFormat)
	minReader, ok2 := getUint32(meta, metaMinReader)
	if !ok1 || !ok2 || f < 1 {
		return 0, &CorruptionError{Reason: "meta bucket has no valid format version"}
	}
	if minReader > FormatVersion || (!readOnly && f > FormatVersion) {
		return 0, fmt.Errorf("%w: file format %d (readable by %d and newer), this binary writes format %d; upgrade flowctl",
			ErrNewerFormat, f, minReader, FormatVersion)
	}
	for _, name := range logBuckets {
		if tx.Bucket(name) == nil {
			return 0, &CorruptionError{Reason: fmt.Sprintf("bucket %q is missing", name)}
		}
	}
	if v := meta.Get(metaHeadSeq); len(v) != 8 {
		return 0, &CorruptionError{Reason: "meta head seq is missing or malformed"}
	}
	if v := meta.Get(metaHeadHash); len(v) != len(Hash{}) {
		return 0, &CorruptionError{Reason: "meta head hash is missing or malformed"}
	}
	return format(min(f, FormatVersion)), nil
}

func (l *Log) initialize(tx *bolt.Tx) error {
	for _, name := range logBuckets {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	meta := tx.Bucket(bucketMeta)
	puts := [][2][]byte{
		{metaFormat, binary.BigEndian.AppendUint32(nil, uint32(l.format))},
		{metaMinReader, binary.BigEndian.AppendUint32(nil, uint32(l.format.minReader()))},
		{metaCreated, binary.BigEndian.AppendUint64(nil, uint64(l.opts.Now().UnixNano()))},
		{metaHeadSeq, make([]byte, 8)},
		{metaHeadHash, make([]byte, len(Hash{}))},
	}
	for _, kv := range puts {
		if err := meta.Put(kv[0], kv[1]); err != nil {
			return err
		}
	}
	return nil
}

func getUint32(b *bolt.Bucket, key []byte) (uint32, bool) {
	v := b.Get(key)
	if len(v) != 4 {
		return 0, false
	}
	return binary.BigEndian.Uint32(v), true
}

// Close releases the file and its lock. It waits for a commit in flight;
// Update calls still queued then fail with ErrClosed.
func (l *Log) Close() error {
	return l.db.Close()
}

// minReader is the min_reader a file of format f says: format 1 files
// are read by every reader, format 2 ones only by those that know it.
func (f format) minReader() format {
	if f == formatV1 {
		return formatV1
	}
	return MinReaderVersion
}

// Format returns the file's format version: FormatVersion, or an older
// one that Upgrade rewrites.
func (l *Log) Format() int { return int(l.format) }

// Path returns the file's path.
func (l *Log) Path() string { return l.path }

// FreeBytes returns how many of the file's bytes lie in free pages (those
// bbolt's free list holds, and those freed by the last write but still
// read by an open transaction) as of the last write transaction, and the
// file's size. A log opened read-only has not read its free list: 0.
func (l *Log) FreeBytes() (free, size int64) {
	if fi, err := os.Stat(l.path); err == nil {
		size = fi.Size()
	}
	return int64(l.db.Stats().FreeAlloc), size
}

// ReadOnly reports whether the log was opened read-only.
func (l *Log) ReadOnly() bool { return l.opts.ReadOnly }

// view runs fn in a bbolt read transaction and turns a panic from a
// damaged page into a *CorruptionError.
func (l *Log) view(fn func(*bolt.Tx) error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer recoverCorruption(&err)
	return closedError(l.db.View(fn))
}

// closedError turns bbolt's error for a closed database into ErrClosed.
func closedError(err error) error {
	if err != nil && errors.Is(err, bolterrors.ErrDatabaseNotOpen) {
		return fmt.Errorf("%w: %v", ErrClosed, err)
	}
	return err
}

// recoverCorruption turns a panic of bbolt on a damaged page into a
// *CorruptionError. It must be deferred directly.
func recoverCorruption(err *error) {
	if r := recover(); r != nil {
		*err = damageError(r)
	}
}
