package flow

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/flowctl/flowctl/flow/internal/logidx"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// stageSuffix follows the name of an import's copy of a file, beside it.
// It extends the suffix of Compact's copies (eventlog's ".compact-"), so
// that the next writable open removes the copy of an import that was
// killed, as it removes Compact's: only a process holding the file's
// exclusive lock writes either, and it removes or renames its copy before
// it lets the lock go.
const stageSuffix = ".compact-import-"

// importStaged appends an import of more than one batch (first, then the
// rest of in) all or nothing with bounded memory: into a copy of the file,
// in transactions of a batch each without fsync, the copy synced and
// renamed over the file once every event is in. The engine's exclusive
// lock on the file is held from the copy to the rename, so no write of
// another process is lost, and one waiting for the lock opens the new
// file (the backend checks that the file it locked is the one the path
// names). On any failure the copy is removed and the file is as it was.
// Batches are parsed on a goroutine of their own while the previous one
// is appended. Into an empty file (bulkImport) the batches append the
// log with AppendBulk while a folder folds the batches already committed
// into the projections beside them, an epoch at a time (importBulk).
//
// A store that is not a file (New's, a view) takes every batch in one
// transaction instead: all or nothing, memory unbounded.
func (e *Engine) importStaged(first []importEvent, in *importReader) (ImportResult, error) {
	batches := parseAhead(first, in)
	defer batches.stop()
	fi, err := os.Stat(e.path)
	if e.driver == nil || e.tx != nil || e.at != nil || err != nil || !fi.Mode().IsRegular() {
		return e.importWhole(batches)
	}
	if err := e.acquire(); err != nil {
		return ImportResult{}, err
	}
	if e.opts.ReadOnly {
		return ImportResult{}, store.ErrReadOnly
	}
	tmp, err := copyBeside(e.path, fi.Mode().Perm())
	if err != nil {
		return ImportResult{}, err
	}
	res, err := e.importInto(tmp, batches, in)
	if err == nil {
		err = e.replaceWith(tmp)
	}
	if err != nil {
		os.Remove(tmp)
		return ImportResult{}, err
	}
	return res, nil
}

// importWhole appends every batch in one transaction: on a database
// server, into an empty store, with AppendBulk (importBulkWhole).
func (e *Engine) importWhole(batches *parsedBatches) (ImportResult, error) {
	var all []importEvent
	for {
		b, ok, err := batches.next()
		if err != nil {
			return ImportResult{}, err
		}
		if !ok {
			break
		}
		all = append(all, b...)
	}
	if e.onDatabase() {
		if res, ok, err := e.importBulkWhole(all); ok || err != nil {
			return res, err
		}
	}
	return e.importEvents(all)
}

// importInto appends the batches to the file at path, one transaction
// each, without fsync, and syncs the file at the end.
func (e *Engine) importInto(path string, batches *parsedBatches, in *importReader) (ImportResult, error) {
	opts := e.opts
	opts.ReadOnly, opts.Create, opts.NoSync, opts.Progress = false, false, true, nil
	staged, err := Open(path, opts)
	if err != nil {
		return ImportResult{}, err
	}
	var res ImportResult
	unknown := map[string]int{}
	bulk, err := staged.bulkImport()
	behind := syncBehind(path)
	progress := func() {
		behind.kick()
		if e.opts.Progress != nil {
			e.opts.Progress(uint64(res.Read), max(in.estimate(res.Read), uint64(res.Read)+1))
		}
	}
	switch {
	case err != nil:
	case bulk != nil:
		err = staged.importBulk(batches, bulk, &res, progress)
		for typ, n := range bulk.unknown {
			unknown[typ] += n
		}
	default:
		err = func() error {
			for {
				b, ok, err := batches.next()
				if err != nil || !ok {
					return err
				}
				if err := staged.appendImported(b, &res, unknown, false); err != nil {
					return err
				}
				progress()
			}
		}()
	}
	behind.stop()
	if err = errors.Join(err, staged.Close()); err == nil {
		err = syncFile(path)
	}
	if err != nil {
		return ImportResult{}, err
	}
	e.progress(res.Read, res.Read)
	e.warnUnknown(unknown)
	return res, nil
}

// replaceWith renames the file at tmp over the engine's file, which the
// engine holds locked until then, and lets its store go: the next read
// opens the new file. What the cache holds stays right, as the new file
// is the old one with events after its head.
func (e *Engine) replaceWith(tmp string) error {
	if err := os.Rename(tmp, e.path); err != nil {
		return err
	}
	e.held.forget()
	err := e.log.Close()
	e.log = nil
	return errors.Join(err, syncDir(filepath.Dir(e.path)))
}

// copyBeside copies the file at path into a new file beside it, named
// with stageSuffix, and returns the copy's path. The caller holds the
// file's exclusive lock, so the file is a committed state.
func copyBeside(path string, perm os.FileMode) (string, error) {
	src, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer src.Close()
	dst, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+stageSuffix+"*")
	if err != nil {
		return "", err
	}
	_, err = io.Copy(dst, src)
	err = errors.Join(err, dst.Chmod(perm), dst.Close())
	if err != nil {
		os.Remove(dst.Name())
		return "", fmt.Errorf("copying %s to import into: %w", path, err)
	}
	return dst.Name(), nil
}

// behindSyncer syncs a staged file on a goroutine of its own while the
// import writes more of it (syncBehind).
type behindSyncer struct {
	kicks chan struct{}
	done  chan struct{}
}

// syncBehind starts syncing the file at path each time it is kicked, so
// that the sync at the end (syncFile) finds little left to write: an
// import writes the whole file into the page cache without a sync, and
// the sync of a few hundred MB at its end took the disk's time with no
// core busy (0.9 s for the 460 MB of a 1M-event import). A sync it
// cannot make is left to the one at the end, which reports it.
func syncBehind(path string) *behindSyncer {
	s := &behindSyncer{kicks: make(chan struct{}, 1), done: make(chan struct{})}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		close(s.done)
		return s
	}
	go func() {
		defer close(s.done)
		defer f.Close()
		for range s.kicks {
			_ = f.Sync()
		}
	}()
	return s
}

// kick asks for a sync, unless one is asked for already.
func (s *behindSyncer) kick() {
	select {
	case s.kicks <- struct{}{}:
	default:
	}
}

// stop ends the syncing and waits for the sync under way.
func (s *behindSyncer) stop() {
	close(s.kicks)
	<-s.done
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// parsedBatches hands out the batches of an import, parsed ahead on a
// goroutine: one batch waits while the caller appends the one before.
type parsedBatches struct {
	ch    chan parsedBatch
	quit  chan struct{}
	reuse chan []importEvent // batches handed back (done)
}

type parsedBatch struct {
	events []importEvent
	err    error
}

// parseAhead starts parsing in's batches after first.
func parseAhead(first []importEvent, in *importReader) *parsedBatches {
	p := &parsedBatches{ch: make(chan parsedBatch, 1), quit: make(chan struct{}), reuse: make(chan []importEvent, 2)}
	in.reuse = p.reuse
	go func() {
		defer close(p.ch)
		b := parsedBatch{events: first}
		for {
			select {
			case p.ch <- b:
			case <-p.quit:
				return
			}
			if b.err != nil || in.done {
				return
			}
			b.events, b.err = in.next()
		}
	}()
	return p
}

// next returns the next batch; false when there is none.
func (p *parsedBatches) next() ([]importEvent, bool, error) {
	b, ok := <-p.ch
	return b.events, ok, b.err
}

// done hands back a batch that next returned, once nothing holds its
// events any more, for the parser to read a later batch into: an import
// then allocates a few batches, not one for each.
func (p *parsedBatches) done(b []importEvent) {
	clear(b[:cap(b)]) // what it held goes when its last user does
	select {
	case p.reuse <- b:
	default:
	}
}

// stop ends the parsing, whether or not every batch was taken.
func (p *parsedBatches) stop() {
	close(p.quit)
	for range p.ch {
	}
}

// name returns s as a string, the one of an earlier line when it had it:
// types, actors, sessions, projects and streams repeat from line to line.
func (in *importReader) name(s []byte) string {
	if len(s) == 0 {
		return ""
	}
	if v, ok := in.names[string(s)]; ok {
		return v
	}
	if len(in.names) >= maxImportNames {
		clear(in.names)
	}
	v := string(s)
	in.names[v] = v
	return v
}

// maxImportNames bounds the strings an import shares between lines.
const maxImportNames = 1 << 16

// bulkState is what a bulk import (bulkImport) keeps between its
// transactions: the fold of the events of no project.
type bulkState struct {
	loose   *projection.Memory // events of no project, folded as they are appended
	folded  bool               // loose holds what the fold made of one
	unknown map[string]int     // loose's events of types this binary does not know
}

func newBulkState(unknown map[string]int) *bulkState {
	return &bulkState{loose: projection.NewMemory(), unknown: unknown}
}

// bulkImport reports whether an import into e (a staged copy) appends
// the log alone, AppendBulk a batch a transaction, while a goroutine of
// its own folds what was appended and lists it in the log index
// (importBulk): when e has no event, so that the fold of every project
// starts from nothing, and its store is a store.BulkAppender. nil: an
// Append and a fold per event.
func (e *Engine) bulkImport() (*bulkState, error) {
	var ok bool
	err := e.view(func(tx store.Tx) error {
		_, ok = tx.(store.BulkAppender)
		head, _ := tx.Head()
		ok = ok && head == 0
		return nil
	})
	if err != nil || !ok {
		return nil, err
	}
	return newBulkState(map[string]int{}), nil
}

// bulkAppended is what appendBulkTx did with a batch of events.
type bulkAppended struct {
	at                []importAt        // where each event was read
	in                []store.BulkEvent // the events as appended
	out               store.BulkAppended
	appended, skipped int
	loose             []int // the events of no project appended, by index
}

// appendBulkTx appends events to tx with AppendBulk; the caller lists
// them in the log index (bulkAppended.index). The events are asImported,
// as appendImported makes them, without reading the head's time once per
// event. spent, when not nil, is a batch appended before that nothing
// reads any more, whose slices it reuses.
func appendBulkTx(tx store.Tx, events []importEvent, spent *bulkAppended) (*bulkAppended, error) {
	c := &bulkAppended{}
	if spent != nil && cap(spent.in) >= len(events) {
		// The slices of a batch the folder is done with: nothing else
		// holds its events (AppendBulk copies what it keeps).
		c.in, c.at = spent.in[:len(events)], spent.at[:len(events)]
	} else {
		c.in, c.at = make([]store.BulkEvent, len(events)), make([]importAt, len(events))
	}
	last, err := tx.HeadTime()
	if err != nil {
		return nil, err
	}
	here := make(map[store.ID][]byte, len(events)) // id -> the payload appended in this batch
	for i := range events {
		ie := &events[i]
		ev := ie.event
		stored, dup := here[ev.ID]
		seq := uint64(0)
		if !dup && ev.Time.Before(last) {
			// An event at or after the file's time is appended as it
			// is (asImported): only an earlier one is looked up.
			seq = tx.SeqOf(ev.ID)
		}
		switch {
		case !ev.Time.Before(last):
			// as it is
		case dup:
			if d := withOccurredAt(ev.Data, ev.Time); bytes.Equal(stored, d) {
				ev.Data = d
			}
		case seq != 0:
			if ev, err = asStored(tx, seq, ev); err != nil {
				return nil, err
			}
		default:
			ev.Data, ev.Time = withOccurredAt(ev.Data, ev.Time), last
		}
		if !dup && seq == 0 {
			here[ev.ID] = ev.Data
			last = notBefore(ev.Time, last)
		}
		c.in[i] = store.BulkEvent{Stream: ie.stream, Version: ie.version, Event: ev}
		c.at[i] = ie.at
	}
	c.out, err = tx.(store.BulkAppender).AppendBulk(c.in)
	if be := (*store.BulkError)(nil); errors.As(err, &be) && be.Index < len(events) {
		return nil, fmt.Errorf("%s: %w", events[be.Index].at, be.Err)
	} else if err != nil {
		return nil, err
	}
	for i := range c.in {
		if c.out.Duplicate[i] {
			c.skipped++
			continue
		}
		c.appended++
		if c.in[i].Event.Project == "" {
			c.loose = append(c.loose, i)
		}
	}
	return c, nil
}

// index lists c's appended events in idx.
func (c *bulkAppended) index(idx *logidx.Writer) {
	for i := range c.in {
		if !c.out.Duplicate[i] {
			idx.Add(c.out.Seqs[i], &c.in[i].Event)
		}
	}
}

// record is the ith event as appended.
func (c *bulkAppended) record(i int) *store.Record {
	return &store.Record{Seq: c.out.Seqs[i], Stream: c.in[i].Stream, Version: c.in[i].Version, Event: c.in[i].Event}
}

// addTo adds what c did to res and st, and folds its events of no
// project, which no project's fold reads: the fold refuses one of a type
// it knows (no stream of a project is theirs) and keeps the others
// without folding them.
func (c *bulkAppended) addTo(res *ImportResult, st *bulkState) error {
	for _, i := range c.loose {
		r := c.record(i)
		if err := foldInto(st.loose, r, st.unknown); err != nil {
			return fmt.Errorf("%s: %w", c.at[i], err)
		}
		st.folded = st.folded || isKnown(r.Type)
	}
	res.Read += len(c.in)
	res.Appended += c.appended
	res.Skipped += c.skipped
	return nil
}

// notBefore is the later of t and last.
func notBefore(t, last time.Time) time.Time {
	if t.Before(last) {
		return last
	}
	return t
}

func isKnown(typ string) bool {
	_, ok := projection.Schema(typ)
	return ok
}

// foldInto is foldRecord into any projection store, an ErrInvalid for
// an event the fold refuses.
func foldInto(mem projection.Store, r *store.Record, unknown map[string]int) error {
	err := checkPlacement(mem, r)
	if err == nil {
		err = projection.Apply(mem, r)
	}
	switch {
	case errors.Is(err, projection.ErrUnknown):
		unknown[r.Type]++
		return nil
	case err == nil || errors.Is(err, ErrInvalid):
		return err
	}
	return fmt.Errorf("%w: %v", ErrInvalid, err)
}
