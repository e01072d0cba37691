package eventlog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/flowctl/flowctl/flow/store"
	bolt "go.etcd.io/bbolt"
)

// CompactReport is what Compact did: the file's size before and after.
type CompactReport = store.CompactReport

// compactTxSize is how many bytes of keys and values Compact copies per
// transaction of the new file.
const compactTxSize = 64 << 20

// Compact rewrites the log at path without its free pages: bbolt never
// gives a file's free pages back to the file system, so a file whose
// buckets were emptied and refilled (a rebuild, snapshots replaced)
// keeps its largest size, and every commit writes the list of its free
// pages. Compact copies every bucket, key and value, in key order, into
// a new file beside it, syncs it, verifies it (Verify), and renames it
// over path; the old file is left as it was when anything fails. It
// holds the file's exclusive lock from start to end, so no write is
// lost: a process that was waiting for the lock opens the new file
// (lockingOpener checks that the file it locked is still the one path
// names). It needs free space for the copy. The copies of Compacts that
// were killed are removed by the next writable Open, this one's too.
func Compact(path string, opts Options) (CompactReport, error) {
	var rep CompactReport
	opts.ReadOnly, opts.Create = false, false
	src, err := Open(path, opts)
	if err != nil {
		return rep, err
	}
	defer src.Close()
	fi, err := os.Stat(src.path)
	if err != nil {
		return rep, err
	}
	rep.Before = fi.Size()
	tmp, err := compactInto(src, fi.Mode().Perm())
	if err != nil {
		return rep, err
	}
	keep := false
	defer func() {
		if !keep {
			os.Remove(tmp)
		}
	}()
	if rep.Verified, err = verifyCopy(tmp, opts); err != nil {
		return rep, err
	}
	if fi, err = os.Stat(tmp); err != nil {
		return rep, err
	}
	rep.After = fi.Size()
	if err := os.Rename(tmp, src.path); err != nil {
		return rep, err
	}
	keep = true
	return rep, src.syncDir()
}

// compactInto copies src into a new file beside it and returns its path.
func compactInto(src *Log, perm os.FileMode) (string, error) {
	return writeBeside(src, perm, "compacting", func(dst *bolt.DB) error { return copyBolt(dst, src.db) })
}

// writeBeside writes a new file beside src's with fill and returns its
// path. The copy is named with compactSuffix, so that the next writable
// Open removes the copy of a killed Compact or Upgrade; it is written
// without fsync and synced once at the end; on failure it is removed.
func writeBeside(src *Log, perm os.FileMode, doing string, fill func(dst *bolt.DB) error) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(src.path), filepath.Base(src.path)+compactSuffix+"*")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	f.Close()
	err = func() error {
		if err := os.Chmod(tmp, perm); err != nil {
			return err
		}
		dst, err := bolt.Open(tmp, perm, &bolt.Options{NoSync: true})
		if err != nil {
			return err
		}
		dst.AllocSize = allocSize
		if err := fill(dst); err != nil {
			dst.Close()
			return err
		}
		// NoSync skipped every commit's sync: one now, for all of them.
		return errors.Join(dst.Sync(), dst.Close())
	}()
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("%s %s: %w", doing, src.path, err)
	}
	return tmp, nil
}

// verifyCopy opens the log at path on its own and verifies it.
func verifyCopy(path string, opts Options) (Report, error) {
	opts.ReadOnly, opts.Create = true, false
	l, err := Open(path, opts)
	if err != nil {
		return Report{}, err
	}
	defer l.Close()
	return l.Verify()
}

// copyBolt is bolt.Compact, a bbolt panic on a damaged page of src
// turned into a *CorruptionError.
func copyBolt(dst, src *bolt.DB) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer recoverCorruption(&err)
	return bolt.Compact(dst, src, compactTxSize)
}

// compactSuffix follows the name of Compact's copy of a file, beside it.
const compactSuffix = ".compact-"

// removeStaleCopies removes the copies that killed Compacts left beside
// path. Only a Compact holding the file's exclusive lock writes one, and
// it removes or renames it before it lets the lock go: whoever holds
// that lock sees only stale ones. Best effort: a copy that cannot be
// removed costs space, not data.
func removeStaleCopies(path string) {
	dir, base := filepath.Split(path)
	entries, err := os.ReadDir(filepath.Clean(dir))
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), base+compactSuffix) && e.Type().IsRegular() {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
