package flow

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/flowctl/flowctl/flow/store"
)

// RecoverReport is what Recover did.
type RecoverReport struct {
	From string `json:"from"`
	Into string `json:"into"`
	// Kept events were copied, seqs 1..Kept: the new file's head.
	Kept     uint64 `json:"kept"`
	HeadHash string `json:"head_hash"`
	// SourceHeadSeq is the head the damaged file's meta names; 0 when it
	// could not be read.
	SourceHeadSeq uint64 `json:"source_head_seq"`
	// Lost events are seqs LostFrom..LostTo, known to exist and not
	// copied; Stranded of them still verify on their own, but a gap
	// precedes them. Reason says why the copy stops at Kept.
	Lost     uint64 `json:"lost"`
	LostFrom uint64 `json:"lost_from,omitempty"`
	LostTo   uint64 `json:"lost_to,omitempty"`
	Stranded int    `json:"stranded"`
	Reason   string `json:"reason,omitempty"`
	// PastHead events follow the damaged file's head and chain on from
	// it (a commit whose meta page was lost, or one that never completed):
	// not copied, as the file itself does not show them.
	PastHead int `json:"past_head"`
	// Damage is what the reads of the damaged file found, in words.
	Damage []string `json:"damage"`
	// ScannedPages: the file's pages were searched for records that its
	// page tree could not give.
	ScannedPages bool `json:"scanned_pages"`
}

// Recover writes a new file at into from every record of the file at
// from that still verifies (the driver's Salvage, store.Salvager): the events of seqs
// 1..Kept, byte for byte, with their hashes, appended and folded as
// Import does, so the projections are rebuilt; snapshots, derived data,
// are not copied. Events after a gap cannot keep their hashes, so they
// are lost and counted; the report says which seqs. The new file is
// verified (head hash included) before Recover returns; on any failure
// it is removed. The damaged file is only read. into must not exist
// (ErrExists).
func Recover(from, into string, opts Options) (RecoverReport, error) {
	out := RecoverReport{From: from, Into: into, Damage: []string{}}
	f, err := createNew(into)
	if err != nil {
		return out, err
	}
	f.Close()
	var events []importEvent
	rep, err := salvage(from, store.Options{Timeout: opts.LockTimeout}, func(r *store.Record) error {
		events = append(events, importEvent{at: importAt{seq: r.Seq}, stream: r.Stream, version: r.Version, event: r.Event})
		return nil
	})
	if err == nil {
		out.fill(rep)
		err = writeRecovered(into, opts, events, out.HeadHash)
	}
	if err != nil {
		os.Remove(into)
	}
	return out, err
}

// createNew creates the empty file at path, and its directory, refusing
// one that exists.
func createNew(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("%w: %s: recover writes a new file; give a path that does not exist", ErrExists, path)
	}
	return f, err
}

// salvage reads what verifies of the store at dsn with its driver's
// Salvage (store.Salvager); a backend without one is ErrInvalid.
func salvage(dsn string, o store.Options, fn func(*store.Record) error) (store.SalvageReport, error) {
	d, err := store.Lookup(dsn)
	if err != nil {
		return store.SalvageReport{}, err
	}
	s, ok := d.(store.Salvager)
	if !ok {
		return store.SalvageReport{}, fmt.Errorf("%w: the %s store has no salvage", ErrInvalid, store.DriverName(dsn))
	}
	return s.Salvage(dsn, o, fn)
}

func (out *RecoverReport) fill(rep store.SalvageReport) {
	out.Kept, out.HeadHash = rep.Kept, hex.EncodeToString(rep.KeptHash[:])
	out.SourceHeadSeq = rep.HeadSeq
	out.Lost, out.LostFrom, out.LostTo = rep.Lost(), rep.LostFrom, rep.LostTo
	out.Stranded, out.Reason, out.ScannedPages = rep.Stranded, rep.Reason, rep.ScannedPages
	out.PastHead = rep.PastHead
	out.Damage = append(out.Damage, rep.Damage...)
}

// writeRecovered imports events into the new file at into and verifies
// it, its head hash being head.
func writeRecovered(into string, opts Options, events []importEvent, head string) (err error) {
	opts.Create, opts.ReadOnly = true, false
	e, err := Open(into, opts)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, e.Close()) }()
	if _, err := e.importEvents(events); err != nil {
		return err
	}
	v, err := e.Verify()
	if err != nil {
		return err
	}
	if v.HeadSeq != uint64(len(events)) || (len(events) > 0 && v.HeadHash != head) {
		return fmt.Errorf("the new file's head %s@%d is not the salvaged one %s@%d", v.HeadHash, v.HeadSeq, head, len(events))
	}
	return nil
}
