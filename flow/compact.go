package flow

import (
	"fmt"

	"github.com/flowctl/flowctl/flow/store"
)

// CompactReport is what Compact did.
type CompactReport struct {
	Path        string `json:"path"`
	BeforeBytes int64  `json:"before_bytes"`
	AfterBytes  int64  `json:"after_bytes"`
	HeadSeq     uint64 `json:"head_seq"` // the head of the verified new file
}

// Compact rewrites the file at path without its free pages, which bbolt
// keeps for itself forever (a rebuild, replaced snapshots and merged
// indexes free pages; every commit then also writes their list). Every
// bucket, the log and the derived data alike, is copied key by key into
// a new file beside it, which is synced and verified before it is renamed
// over the old one; on any failure the old file stays as it was. The
// exclusive lock is held throughout (opts.LockTimeout to get it), so no
// write is lost, and a process waiting for the lock opens the new file.
// It needs as much free space as the new file takes.
//
// It is the driver's (store.Compacter): a backend without it returns
// ErrInvalid.
func Compact(path string, opts Options) (CompactReport, error) {
	d, err := store.Lookup(path)
	if err != nil {
		return CompactReport{Path: path}, err
	}
	c, ok := d.(store.Compacter)
	if !ok {
		return CompactReport{Path: path}, fmt.Errorf("%w: the %s store has no compact", ErrInvalid, store.DriverName(path))
	}
	rep, err := c.Compact(path, store.Options{Timeout: opts.LockTimeout, NoSync: opts.NoSync, Now: opts.Now, Progress: opts.Progress})
	return CompactReport{Path: path, BeforeBytes: rep.Before, AfterBytes: rep.After, HeadSeq: rep.Verified.HeadSeq}, err
}
