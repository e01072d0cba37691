package flow

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/flowctl/flowctl/flow/internal/check"
	"github.com/flowctl/flowctl/flow/internal/eventview"
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
// is appended. Into an empty file the batches append the log alone
// (bulkImport), and the projections are folded at the end, each project
// a few batches of its events at a time (foldBulk).
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
	progress := func() {
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
	ch   chan parsedBatch
	quit chan struct{}
}

type parsedBatch struct {
	events []importEvent
	err    error
}

// parseAhead starts parsing in's batches after first.
func parseAhead(first []importEvent, in *importReader) *parsedBatches {
	p := &parsedBatches{ch: make(chan parsedBatch, 1), quit: make(chan struct{})}
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

// stop ends the parsing, whether or not every batch was taken.
func (p *parsedBatches) stop() {
	close(p.quit)
	for range p.ch {
	}
}

// parseLine is parseImportLine for the lines export writes, read by
// eventview.ParseLine without reflection into strings shared from line to
// line (names); any other line is read by parseImportLine, which words
// the errors.
func (in *importReader) parseLine(b []byte) (importEvent, error) {
	var l eventview.Line
	if !eventview.ParseLine(b, &l) || l.Raw == nil || l.Stream == nil || l.Type == nil || l.Version == 0 || l.Time == nil {
		return parseImportLine(b)
	}
	// ParseLine checked the line but for its "data", one level down in
	// it: the line is JSON within parseImportLine's depth when that is.
	if l.Data != nil && check.JSONDepth(l.Data, MaxJSONDepth+eventview.Depth-1) != nil {
		return parseImportLine(b)
	}
	var t time.Time
	if err := t.UnmarshalJSON(l.Time); err != nil {
		return parseImportLine(b)
	}
	if l.OccurredAt != nil {
		var o time.Time
		if err := o.UnmarshalJSON(l.OccurredAt); err != nil {
			return parseImportLine(b)
		}
	}
	if t.IsZero() || t.Before(minTime) || t.After(maxTime) || len(l.Stream) == 0 || len(l.Type) == 0 {
		return parseImportLine(b)
	}
	id, ok := parseUUID(l.ID)
	if !ok || id.IsZero() {
		return parseImportLine(b)
	}
	ev := store.Event{ID: id, Schema: l.Schema, Time: t.UTC()}
	if len(l.Correlation) > 0 {
		if ev.Correlation, ok = parseUUID(l.Correlation); !ok {
			return parseImportLine(b)
		}
	}
	if len(l.Causation) > 0 {
		if ev.Causation, ok = parseUUID(l.Causation); !ok {
			return parseImportLine(b)
		}
	}
	raw := make([]byte, base64.StdEncoding.DecodedLen(len(l.Raw)))
	n, err := base64.StdEncoding.Decode(raw, l.Raw)
	if err != nil {
		return parseImportLine(b)
	}
	ev.Data = raw[:n:n]
	if in.names == nil {
		in.names = map[string]string{}
	}
	ev.Type, ev.Actor, ev.Session, ev.Project = in.name(l.Type), in.name(l.Actor), in.name(l.Session), in.name(l.Project)
	return importEvent{stream: in.name(l.Stream), version: l.Version, event: ev}, nil
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

// parseUUID is store.ParseID of the 36-byte form, without its allocations.
func parseUUID(s []byte) (store.ID, bool) {
	var id store.ID
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return id, false
	}
	j := 0
	for i := 0; i < 36; {
		switch i {
		case 8, 13, 18, 23: // the dashes, checked above: a dash anywhere else is not hex
			i++
			continue
		}
		hi, ok1 := unhex(s[i])
		lo, ok2 := unhex(s[i+1])
		if !ok1 || !ok2 {
			return id, false
		}
		id[j] = hi<<4 | lo
		j++
		i += 2
	}
	return id, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

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
	at                []string          // where each event was read
	in                []store.BulkEvent // the events as appended
	out               store.BulkAppended
	appended, skipped int
	loose             []int // the events of no project appended, by index
}

// appendBulkTx appends events to tx with AppendBulk; the caller lists
// them in the log index (bulkAppended.index). The events are asImported,
// as appendImported makes them, without reading the head's time once per
// event.
func appendBulkTx(tx store.Tx, events []importEvent) (*bulkAppended, error) {
	c := &bulkAppended{at: make([]string, len(events))}
	last, err := tx.HeadTime()
	if err != nil {
		return nil, err
	}
	c.in = make([]store.BulkEvent, len(events))
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
