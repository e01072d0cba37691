package flow

import (
	"fmt"
	"maps"
	"slices"

	"github.com/flowctl/flowctl/flow/internal/history"
	"github.com/flowctl/flowctl/flow/internal/logidx"
	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/internal/snapstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// ProjectionFormat is the format of the engine's stored projection
// records (projstore.Format): 1, sealed with a CRC32C of key and value; 2,
// the status index holds titles too, for completion; 3, plan counts; 4,
// packed values; 5, the children index. It is kept apart
// from projection.Version, which every snapshot carries too.
const ProjectionFormat = projstore.Format

// source is what queries read (projstore.Source).
type source = projstore.Source

// logIndexStep is the number of events syncProjections lists in one
// transaction (0: logidx.Step); tests make it small.
var logIndexStep uint64

// syncProjections rebuilds the projections (and the log index) of a
// writable engine whose stored projections are not this binary's; when
// only the log index is of another format (or missing), or behind the
// head (an older flowctl appended), it lists the log again, or what was
// left out, in bounded steps (logidx.Sync): memory bounded by a step,
// not the file, and a kill between steps leaves an index the next
// writable open continues.
func (e *Engine) syncProjections() error {
	if e.opts.ReadOnly {
		return nil
	}
	var current, stale bool
	if err := e.log.View(func(tx store.Tx) error {
		var err error
		if current, err = projstore.Current(tx); !current || err != nil {
			return err
		}
		through, ok, err := logidx.Through(tx)
		head, _ := tx.Head()
		stale = !ok || through != head
		return err
	}); err != nil {
		return err
	}
	switch {
	case !current:
		_, err := e.Rebuild()
		return err
	case stale:
		if err := logidx.Sync(e.log, logIndexStep); err != nil {
			return err
		}
		e.suggestCompact()
	}
	return nil
}

// compactHint is how much of the file must lie in free pages, at least
// and as a share of the file, for suggestCompact to warn; tests lower it.
var compactHint = struct {
	bytes int64
	share float64
}{64 << 20, 0.2}

// suggestCompact warns when listing the log index again has left much of
// the file in free pages: the old index's pages, which bbolt keeps in a
// free list it writes with every commit (on a 10M-event file `task add`
// took 118 ms instead of 16 until the file was compacted).
func (e *Engine) suggestCompact() {
	f, ok := e.log.(store.FreeSpacer)
	if !ok {
		return
	}
	free, size := f.FreeBytes()
	if free < compactHint.bytes || float64(free) < compactHint.share*float64(size) {
		return
	}
	e.warn("the log index was listed again and left %.1f MB of the file's %.1f MB in free pages; 'flowctl compact' gives them back",
		float64(free)/1e6, float64(size)/1e6)
}

// RebuildReport says what a rebuild did.
type RebuildReport = projstore.Report

// Rebuild drops the projections and folds the whole log into new ones,
// lists it again in the log index (logidx), and re-makes the snapshots
// of another fold version than this binary's (snapstore.Remake), in one
// transaction.
func (e *Engine) Rebuild() (RebuildReport, error) {
	e.snaps.Reset() // projections written without the snapshot cache's journal
	var rep RebuildReport
	err := e.update(func(tx store.Tx) error {
		// The log index first: its lists are garbage before the replay
		// below holds the projections in memory.
		if err := logidx.Rebuild(tx); err != nil {
			return err
		}
		mem, r, err := projstore.Replay(tx, e.warn, e.opts.Progress)
		if err != nil {
			return err
		}
		rep = r
		// The rollback and digest log indexes are derived from the log too: dropped here.
		// The rollback index is filled again by the next command (and
		// read around until).
		for _, b := range append(slices.Clone(projstore.Buckets), history.BucketRollbacks, projstore.BucketDigestLog) {
			if err := tx.DeleteBucket(b); err != nil {
				return err
			}
		}
		if err := projstore.WriteMemory(tx, mem); err != nil {
			return err
		}
		if err := indexDigestLogs(tx, mem); err != nil {
			return err
		}
		// The snapshots an older fold version made are skipped by every
		// read: made again at their seqs, in this fold.
		_, err = snapstore.Remake(tx)
		return err
	})
	return rep, err
}

// indexDigestLogs writes the digest log index of every project of mem
// (a rebuild's): read around, as it is until a command writes to the
// project, every prime and project report would read all of the
// project's events (on a 1M-event file, 550 MiB of the file mapped and
// seconds for a prime of a 100k-event project).
func indexDigestLogs(tx store.Tx, mem *projection.Memory) error {
	for _, project := range slices.Sorted(maps.Keys(mem.Projects)) {
		if err := projstore.IndexDigestLog(tx, project); err != nil {
			return err
		}
	}
	return nil
}

// RebuildProject drops project's projections (its entities, status index
// entries and rollback index) and folds its events, read through the
// project index, into new ones, in one transaction: the rest of the file
// is left alone. When the stored projections were built by another fold
// version, it rebuilds them all (Rebuild). ErrNotFound when the project
// has no events.
func (e *Engine) RebuildProject(project string) (RebuildReport, error) {
	e.snaps.Reset() // projections written without the snapshot cache's journal
	var rep RebuildReport
	var whole bool
	err := e.update(func(tx store.Tx) error {
		current, err := projstore.Current(tx)
		if err != nil || !current {
			whole = err == nil
			return err
		}
		var total uint64
		if p, err := projstore.NewTx(tx).Project(project); err != nil {
			return err
		} else if p != nil {
			total = p.Events
		}
		mem, r, err := projstore.ReplayProject(tx, project, total, e.warn, e.opts.Progress)
		if err != nil {
			return err
		}
		if rep = r; r.Events == 0 {
			return fmt.Errorf("%w: project %q has no events", ErrNotFound, project)
		}
		if err := projstore.DropProject(tx, project); err != nil {
			return err
		}
		if err := history.DropIndex(tx, project); err != nil {
			return err
		}
		return projstore.WriteProject(tx, mem)
	})
	if whole {
		return e.Rebuild()
	}
	return rep, err
}

// Replay folds the whole log into memory as Rebuild does, projects on a
// goroutine per CPU (projstore.Replay), in a read transaction, and writes
// nothing: the fold of a rebuild alone, which flowbench measures on one
// core and on all of them (its replay_parallel row).
func (e *Engine) Replay() (RebuildReport, error) {
	var rep RebuildReport
	err := e.view(func(tx store.Tx) error {
		var err error
		_, rep, err = e.replay(tx)
		return err
	})
	return rep, err
}

// replay folds the whole log into memory, warning once per event type
// the fold does not know.
func (e *Engine) replay(tx store.Tx) (*projection.Memory, RebuildReport, error) {
	return projstore.Replay(tx, e.warn, nil)
}

// compareProjections replays the log and compares the result, byte for
// byte, with the stored projections, then the log index (logidx) when it
// is current. The first difference is returned as a *store.CorruptionError
// naming the entity or key.
func (e *Engine) compareProjections(tx store.Tx) error {
	mem, _, err := e.replay(tx)
	if err != nil {
		return err
	}
	if err := projstore.Compare(tx, mem); err != nil {
		return err
	}
	if current, err := logidx.Current(tx); err != nil || !current {
		return err
	}
	return logidx.Compare(tx)
}
