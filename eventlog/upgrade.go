package eventlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"

	bolt "go.etcd.io/bbolt"
)

// UpgradeOptions configure Upgrade.
type UpgradeOptions struct {
	// Options open the file (Timeout, NoSync); Progress hears the
	// verification of the new file.
	Options
	// Backup is where the old file is kept; "" means the file's path
	// followed by ".v<format>.bak" (flow.db.v1.bak). It must not exist.
	Backup string
	// Rewriting, when set, hears the rewrite: records copied so far, of
	// the head seq; first 0, last the head seq.
	Rewriting func(done, total uint64)
}

// UpgradeReport is what Upgrade did.
type UpgradeReport struct {
	Path          string
	From, To      int // the file's format before and after; From == To: it was current, nothing was done
	HeadSeq       uint64
	HeadHash      Hash
	Before, After int64  // the file's size before and after
	Backup        string // where the old file is kept
}

// Upgrade rewrites the log at path, of an older format, in FormatVersion
// (doc.go, "File format"): every record re-encoded, with the same hash;
// the index of ids in the new form; the other buckets, the caller's too,
// copied as they are. It writes the new file beside the old one, syncs
// it, verifies it (Verify, and that its head seq and hash are the old
// file's), keeps the old file as opts.Backup (a hard link, or a copy
// where links fail) and renames the new one over path. On any failure
// before that rename the file is left as it was. It holds the file's
// exclusive lock from start to end, like Compact, and needs free space
// for the copy. A file already in FormatVersion is left alone: the
// report says From == To.
//
// It returns what Open returns, fs.ErrExist (wrapped) if the backup
// exists, a *CorruptionError if a record does not verify, or an I/O
// error.
func Upgrade(path string, opts UpgradeOptions) (UpgradeReport, error) {
	o := opts.Options
	o.ReadOnly, o.Create = false, false
	src, err := Open(path, o)
	if err != nil {
		return UpgradeReport{Path: path}, err
	}
	defer src.Close()
	rep := UpgradeReport{Path: src.path, From: int(src.format), To: int(src.format)}
	err = src.view(func(btx *bolt.Tx) error {
		rep.HeadSeq, rep.HeadHash = newTx(src, btx).Head()
		return nil
	})
	if err != nil || src.format == FormatVersion {
		return rep, err
	}
	rep.Backup = opts.Backup
	if rep.Backup == "" {
		rep.Backup = fmt.Sprintf("%s.v%d.bak", src.path, src.format)
	}
	if _, err := os.Lstat(rep.Backup); !errors.Is(err, fs.ErrNotExist) {
		return rep, fmt.Errorf("%w: the backup %s exists (move it away or name another with --backup)", fs.ErrExist, rep.Backup)
	}
	fi, err := os.Stat(src.path)
	if err != nil {
		return rep, err
	}
	rep.Before = fi.Size()
	tmp, err := upgradeInto(src, fi.Mode().Perm(), opts.Rewriting)
	if err != nil {
		return rep, err
	}
	keep := false
	defer func() {
		if !keep {
			os.Remove(tmp)
		}
	}()
	got, err := verifyCopy(tmp, o)
	if err != nil {
		return rep, fmt.Errorf("upgrading %s: the new file does not verify: %w", src.path, err)
	}
	if got.HeadSeq != rep.HeadSeq || got.HeadHash != rep.HeadHash {
		return rep, &CorruptionError{Seq: got.HeadSeq, Reason: fmt.Sprintf("the upgraded file ends at seq %d, hash %x; the old one at seq %d, hash %x",
			got.HeadSeq, got.HeadHash, rep.HeadSeq, rep.HeadHash)}
	}
	if fi, err = os.Stat(tmp); err != nil {
		return rep, err
	}
	rep.After = fi.Size()
	if err := keepBackup(src.path, rep.Backup); err != nil {
		return rep, fmt.Errorf("upgrading %s: keeping the old file: %w", src.path, err)
	}
	if err := os.Rename(tmp, src.path); err != nil {
		return rep, err
	}
	keep = true
	rep.To = FormatVersion
	return rep, src.syncDir()
}

// keepBackup makes backup name the file at path: a hard link, or a copy
// (synced) where the file system or the directory refuses links.
func keepBackup(path, backup string) error {
	if err := os.Link(path, backup); err == nil {
		return syncDirOf(backup)
	}
	in, err := os.Open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(backup, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err = errors.Join(err, out.Sync(), out.Close()); err != nil {
		os.Remove(backup)
		return err
	}
	return syncDirOf(backup)
}

func syncDirOf(path string) error {
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// upgradeInto writes src in FormatVersion into a new file beside it, named
// like Compact's copies (a killed upgrade's copy is removed by the next
// writable Open), and returns its path.
func upgradeInto(src *Log, perm os.FileMode, progress func(done, total uint64)) (string, error) {
	return writeBeside(src, perm, "upgrading", func(dst *bolt.DB) error { return upgradeBolt(dst, src, progress) })
}

// upgradeBolt copies src's buckets into dst in key order, through an
// upgrader, in one read transaction of src; a damaged page of src is a
// *CorruptionError.
func upgradeBolt(dst *bolt.DB, src *Log, progress func(done, total uint64)) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer recoverCorruption(&err)
	if progress == nil {
		progress = func(uint64, uint64) {}
	}
	return src.db.View(func(stx *bolt.Tx) error {
		head, _ := newTx(src, stx).Head()
		u := &upgrader{dst: dst, from: src.format, to: FormatVersion, head: head, progress: progress}
		progress(0, head)
		err := stx.ForEach(func(name []byte, b *bolt.Bucket) error {
			return u.bucket([][]byte{name}, b)
		})
		if err != nil {
			if u.tx != nil {
				u.tx.Rollback()
			}
			return err
		}
		if u.tx != nil {
			if err := u.tx.Commit(); err != nil {
				return err
			}
		}
		progress(head, head)
		return nil
	})
}

// upgrader writes the copy: it commits dst every compactTxSize bytes, and
// turns the values of meta, log and ids into the new format's.
type upgrader struct {
	dst      *bolt.DB
	tx       *bolt.Tx
	size     int
	from, to format
	head     uint64
	prev     Hash // the hash of the last record copied
	progress func(done, total uint64)
}

// bucket copies the bucket at path (top-level first), its nested
// buckets too, and their sequences.
func (u *upgrader) bucket(path [][]byte, b *bolt.Bucket) error {
	if err := u.create(path, b.Sequence()); err != nil {
		return err
	}
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v == nil {
			if child := b.Bucket(k); child != nil {
				if err := u.bucket(append(path[:len(path):len(path)], k), child); err != nil {
					return err
				}
				continue
			}
		}
		v, err := u.value(path, k, v)
		if err != nil {
			return err
		}
		if err := u.put(path, k, v); err != nil {
			return err
		}
	}
	return nil
}

// value is v, the value of k in the bucket at path, in the new format.
func (u *upgrader) value(path [][]byte, k, v []byte) ([]byte, error) {
	if len(path) != 1 {
		return v, nil
	}
	switch name := path[0]; {
	case bytes.Equal(name, bucketMeta) && bytes.Equal(k, metaFormat):
		return binary.BigEndian.AppendUint32(nil, uint32(u.to)), nil
	case bytes.Equal(name, bucketMeta) && bytes.Equal(k, metaMinReader):
		return binary.BigEndian.AppendUint32(nil, uint32(u.to.minReader())), nil
	case bytes.Equal(name, bucketLog):
		return u.record(k, v)
	case bytes.Equal(name, bucketIDs):
		seq, ok := u.from.parseIDValue(v)
		if !ok {
			return nil, corruptf(0, "id index entry for %x is malformed", k)
		}
		return u.to.idValue(seq), nil
	}
	return v, nil
}

// record re-encodes the record v stored under key k: it must verify and
// follow the record before it, and keeps its hash.
func (u *upgrader) record(k, v []byte) ([]byte, error) {
	if len(k) != 8 {
		return nil, corruptf(0, "log key %x is not a seq", k)
	}
	seq := binary.BigEndian.Uint64(k)
	r, err := u.from.decode(seq, v, u.prev)
	switch {
	case err != nil:
		return nil, err
	case r.Prev != u.prev:
		return nil, corruptf(seq, "hash chain broken: prev hash does not match the hash of seq %d", seq-1)
	}
	hash := r.Hash
	out := u.to.encode(r)
	if r.Hash != hash {
		return nil, corruptf(seq, "the record re-encoded has another hash") // a bug, never damage
	}
	u.prev = hash
	if seq%progressStep == 0 {
		u.progress(min(seq, u.head), u.head)
	}
	return out, nil
}

// create makes the bucket at path in dst.
func (u *upgrader) create(path [][]byte, seq uint64) error {
	if err := u.begin(0); err != nil {
		return err
	}
	var b *bolt.Bucket
	var err error
	if len(path) == 1 {
		b, err = u.tx.CreateBucket(path[0])
	} else {
		b, err = u.parent(path).CreateBucket(path[len(path)-1])
	}
	if err != nil {
		return err
	}
	return b.SetSequence(seq)
}

// put sets k to v in the bucket at path, every page filled: the keys
// come in order.
func (u *upgrader) put(path [][]byte, k, v []byte) error {
	if err := u.begin(len(k) + len(v)); err != nil {
		return err
	}
	b := u.tx.Bucket(path[0])
	for _, name := range path[1:] {
		b = b.Bucket(name)
	}
	b.FillPercent = 1.0
	return b.Put(k, v)
}

// parent is the bucket that holds the bucket at path (two levels or more).
func (u *upgrader) parent(path [][]byte) *bolt.Bucket {
	b := u.tx.Bucket(path[0])
	for _, name := range path[1 : len(path)-1] {
		b = b.Bucket(name)
	}
	return b
}

// begin makes sure a transaction of dst is open with room for n more
// bytes, committing the current one when it is full.
func (u *upgrader) begin(n int) error {
	if u.tx != nil && u.size+n > compactTxSize {
		if err := u.tx.Commit(); err != nil {
			u.tx = nil
			return err
		}
		u.tx = nil
	}
	if u.tx == nil {
		tx, err := u.dst.Begin(true)
		if err != nil {
			return err
		}
		u.tx, u.size = tx, 0
	}
	u.size += n
	return nil
}
