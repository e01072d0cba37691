package flow

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/flowctl/flowctl/flow/internal/check"
	"github.com/flowctl/flowctl/flow/internal/eventview"
	"github.com/flowctl/flowctl/flow/internal/logidx"
	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/vmihailenco/msgpack/v5"
)

// Export writes every event with seq >= since as one JSON object per line
// (the Event contract, with Raw set), oldest first, and returns how many
// it wrote.
func (e *Engine) Export(w io.Writer, since uint64) (int, error) {
	return e.export(w, Filter{SinceSeq: since}, exportPage)
}

// ExportProject is Export of one project's events. It reads them through
// the project index: a project of 100k events in a file of 1M reads 100k.
// Its output imports into an empty file, as each project's streams are
// its own.
func (e *Engine) ExportProject(w io.Writer, project string, since uint64) (int, error) {
	return e.export(w, Filter{Project: project, SinceSeq: since}, exportPage)
}

// exportPage bounds what export reads in one transaction: records, and
// bytes of their payloads. The file is released between pages (a slow
// reader of the output never keeps writers out).
var exportPage = pageLimits{records: 4096, bytes: 2 << 20}

// pageLimits bound a page of records: their number, and the bytes of
// their payloads. Tests make them small.
type pageLimits struct{ records, bytes int }

// exportEncoders is how many pages export encodes at once, each on a
// goroutine of its own, while one goroutine reads the pages ahead and the
// caller's writes the lines behind: encoding is most of an export's work.
const exportEncoders = 2

// export writes the lines of f's events (its Project and SinceSeq) up to
// the head as it was when it started, reading pages of at most lim. One
// goroutine reads the pages, in a transaction each, exportEncoders encode
// the pages after, and the caller's goroutine writes them, in order.
func (e *Engine) export(w io.Writer, f Filter, lim pageLimits) (int, error) {
	p, err := e.logProgress(f.SinceSeq)
	if err != nil {
		return 0, err
	}
	var head uint64
	if err := e.view(func(tx store.Tx) error { head, _ = tx.Head(); return nil }); err != nil {
		return 0, err
	}
	pages, stop := e.readPages(f.Project, max(f.SinceSeq, 1), head, lim)
	enc := newPageEncoder(pages)
	defer func() { stop(); enc.drain() }()
	n := 0
	for slot := range enc.out {
		page := <-slot
		if page.err != nil {
			return n, page.err
		}
		if _, err := w.Write(page.lines); err != nil {
			return n, err
		}
		n += page.n
		p.at(page.last)
		enc.reuse(page.lines)
	}
	p.done()
	return n, nil
}

// encodedPage is the export lines of a page of records: n of them, the
// last of seq last; or the error that ended the reading.
type encodedPage struct {
	lines []byte
	n     int
	last  uint64
	err   error
}

// pageEncoder encodes the pages it reads, exportEncoders at a time, and
// hands out a channel per page, in the pages' order, that carries the
// page's lines when they are done.
type pageEncoder struct {
	out  chan chan encodedPage
	free chan []byte // buffers of lines written, to encode into again
}

func newPageEncoder(pages <-chan recordPage) *pageEncoder {
	// The caller waits on one page while exportEncoders-1 more wait in
	// out: a page is encoded once its channel is in out.
	enc := &pageEncoder{
		out:  make(chan chan encodedPage, exportEncoders-1),
		free: make(chan []byte, exportEncoders+1),
	}
	go func() {
		defer close(enc.out)
		for page := range pages {
			slot := make(chan encodedPage, 1)
			enc.out <- slot
			go func() { slot <- enc.encode(page) }()
		}
	}()
	return enc
}

// encode turns page into its lines, in a buffer written before if one is
// free.
func (enc *pageEncoder) encode(page recordPage) encodedPage {
	if page.err != nil {
		return encodedPage{err: page.err}
	}
	var b []byte
	select {
	case b = <-enc.free:
	default:
	}
	var a eventview.Appender
	for _, r := range page.records {
		b = appendExportLine(b, &a, r)
	}
	return encodedPage{lines: b, n: len(page.records), last: page.records[len(page.records)-1].Seq}
}

// reuse hands back the buffer of a page written.
func (enc *pageEncoder) reuse(b []byte) {
	select {
	case enc.free <- b[:0]:
	default:
	}
}

// drain waits for the pages being encoded after the caller stopped
// taking them (the reading stopped first).
func (enc *pageEncoder) drain() {
	for slot := range enc.out {
		<-slot
	}
}

// recordPage is a page of records read in one transaction, or the error
// that ended the reading.
type recordPage struct {
	records []*store.Record
	err     error
}

// readPages reads the records of project (all: "") from seq from to head
// on a goroutine, a page at a time, each in its own transaction with the
// file released after it, and sends them, one page ahead of the caller.
// Records are read with their hashes checked (ReadRange, ReadProject): an
// export is the audit trail. stop ends the reading.
func (e *Engine) readPages(project string, from, head uint64, lim pageLimits) (pages <-chan recordPage, stop func()) {
	ch := make(chan recordPage, 1)
	quit := make(chan struct{})
	go func() {
		defer close(ch)
		for from <= head {
			var page recordPage
			page.records, from, page.err = e.readPage(project, from, head, lim)
			if page.err == nil {
				page.err = e.release()
			}
			if len(page.records) == 0 && page.err == nil {
				return
			}
			select {
			case ch <- page:
			case <-quit:
				return
			}
			if page.err != nil {
				return
			}
		}
	}()
	return ch, func() {
		close(quit)
		for range ch {
		}
	}
}

// readPage reads the records of project (all: "") from seq from to at
// most head, up to a page, and returns them and the seq to go on from.
func (e *Engine) readPage(project string, from, head uint64, lim pageLimits) ([]*store.Record, uint64, error) {
	var out []*store.Record
	size := 0
	next := head + 1
	visit := func(r *store.Record) error {
		if r.Seq > head {
			return store.ErrStop
		}
		if len(out) == lim.records || size >= lim.bytes {
			next = r.Seq
			return store.ErrStop
		}
		out = append(out, r)
		size += len(r.Data)
		return nil
	}
	err := e.view(func(tx store.Tx) error {
		if project != "" {
			return tx.ReadProject(project, from, visit)
		}
		return tx.ReadRange(from, head, visit)
	})
	return out, next, err
}

// appendExportLine appends r's line of an export: the JSON that
// encoding/json writes for eventOf(r) with Raw (HTML escaping off) and a
// newline, byte for byte, without reflection (export_test.go compares
// the two).
func appendExportLine(b []byte, a *eventview.Appender, r *store.Record) []byte {
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, r.Seq, 10)
	b = appendUUID(append(b, `,"id":"`...), r.ID)
	b = append(b, `","stream":`...)
	b = appendJSONString(b, r.Stream)
	b = append(b, `,"version":`...)
	b = strconv.AppendUint(b, r.Version, 10)
	b = append(b, `,"type":`...)
	b = appendJSONString(b, r.Type)
	b = append(b, `,"schema":`...)
	b = strconv.AppendUint(b, uint64(r.Schema), 10)
	b = appendJSONTime(append(b, `,"time":`...), r.Time)
	if t := payloadOccurredAt(r.Data); t != nil {
		b = appendJSONTime(append(b, `,"occurred_at":`...), *t)
	}
	b = appendJSONString(append(b, `,"actor":`...), r.Actor)
	if r.Session != "" {
		b = appendJSONString(append(b, `,"session":`...), r.Session)
	}
	if r.Project != "" {
		b = appendJSONString(append(b, `,"project":`...), r.Project)
	}
	if !r.Correlation.IsZero() {
		b = append(appendUUID(append(b, `,"correlation":"`...), r.Correlation), '"')
	}
	if !r.Causation.IsZero() {
		b = append(appendUUID(append(b, `,"causation":"`...), r.Causation), '"')
	}
	b = a.AppendJSON(append(b, `,"data":`...), r.Type, r.Schema, r.Data)
	if len(r.Data) > 0 {
		b = append(base64.StdEncoding.AppendEncode(append(b, `,"raw":"`...), r.Data), '"')
	}
	b = append(hex.AppendEncode(append(b, `,"prev_hash":"`...), r.Prev[:]), `","hash":"`...)
	return append(hex.AppendEncode(b, r.Hash[:]), "\"}\n"...)
}

// appendUUID writes id as id.String() does, without making a string of it.
func appendUUID(b []byte, id store.ID) []byte {
	b = hex.AppendEncode(b, id[0:4])
	b = hex.AppendEncode(append(b, '-'), id[4:6])
	b = hex.AppendEncode(append(b, '-'), id[6:8])
	b = hex.AppendEncode(append(b, '-'), id[8:10])
	return hex.AppendEncode(append(b, '-'), id[10:])
}

func appendJSONString(b []byte, s string) []byte {
	return eventview.AppendString(b, s)
}

// appendJSONTime writes t as time.Time's MarshalJSON does.
func appendJSONTime(b []byte, t time.Time) []byte {
	return append(t.AppendFormat(append(b, '"'), time.RFC3339Nano), '"')
}

// progressStep is how many items long work does between progress
// reports.
const progressStep = 1000

// progress reports done of total items to Options.Progress, every
// progressStep of them; done == total ends it.
func (e *Engine) progress(done, total int) {
	if e.opts.Progress != nil && (done%progressStep == 0 || done == total) {
		e.opts.Progress(uint64(done), uint64(total))
	}
}

// logProgress reports a walk of the log from seq since to the head as
// progress: the seqs passed, of all there are.
type logProgress struct {
	fn          func(done, total uint64)
	since, head uint64
	next        uint64
}

func (e *Engine) logProgress(since uint64) (*logProgress, error) {
	p := &logProgress{fn: e.opts.Progress, since: max(since, 1)}
	if p.fn == nil {
		return p, nil
	}
	err := e.view(func(tx store.Tx) error {
		p.head, _ = tx.Head()
		return nil
	})
	p.fn(0, p.total())
	return p, err
}

func (p *logProgress) total() uint64 {
	if p.head < p.since {
		return 0
	}
	return p.head - p.since + 1
}

// at reports seq passed, every progressStep seqs.
func (p *logProgress) at(seq uint64) {
	if p.fn != nil && seq >= p.next {
		p.fn(min(seq-p.since+1, p.total()), p.total())
		p.next = seq + progressStep
	}
}

func (p *logProgress) done() {
	if p.fn != nil {
		p.fn(p.total(), p.total())
	}
}

// ImportResult counts what Import did.
type ImportResult struct {
	Read     int `json:"read"`
	Appended int `json:"appended"`
	Skipped  int `json:"skipped"` // already present (same id, same content)
}

// maxImportLine bounds one line of an import file: a 1 MiB payload in
// base64 and as JSON, with room for the envelope. An import reads one line
// at a time: the file itself has no limit.
const maxImportLine = 4*store.MaxPayload + 64<<10

// importBatch bounds the events one transaction of an import appends, by
// number and by the bytes of their lines: what an import holds in memory.
const (
	importBatch      = 20000
	importBatchBytes = 32 << 20
)

// Import appends the events of an export (JSONL), all of them or none.
// Events already present (same id, same content) are skipped, so importing
// twice changes nothing. Each event must continue its stream: version n
// needs the stream at n-1.
//
// It reads r a line at a time. An input of up to importBatch events is
// appended in one transaction; a longer one is appended in transactions
// of that size into a copy of the file, which replaces the file only when
// every event is in (importStaged): memory stays bounded whatever the
// input's size, and a bad line anywhere leaves the file as it was. When r
// has a size (an *os.File), progress is reported in events, estimated
// from the bytes read.
//
// An event keeps its time unless that is before the time of the file's
// last event (the file has later events of its own): then it gets that
// time, so that times follow seqs, and its own becomes the payload's
// occurred_at (asImported). Into an empty file, or as the continuation of
// the file exported, every event keeps its time and its payload, and so
// the hash chain is the source's.
func (e *Engine) Import(r io.Reader) (ImportResult, error) {
	e.snaps.Reset() // projections written without the snapshot cache's journal
	return e.importWith(r, importLimits{line: maxImportLine, batch: importBatch, batchBytes: importBatchBytes})
}

// importLimits are the bounds of an import's reads: a line's bytes, a
// batch's events and their bytes. Tests make them small.
type importLimits struct{ line, batch, batchBytes int }

func (e *Engine) importWith(r io.Reader, lim importLimits) (ImportResult, error) {
	in := newImportReader(r, lim)
	first, err := in.next()
	if err != nil {
		return ImportResult{}, err
	}
	if in.done && !e.onDatabase() {
		return e.importEvents(first)
	}
	return e.importStaged(first, in)
}

// importEvents appends and folds events in one transaction (see Import).
func (e *Engine) importEvents(events []importEvent) (ImportResult, error) {
	var res ImportResult
	unknown := map[string]int{}
	if err := e.appendImported(events, &res, unknown, true); err != nil {
		return ImportResult{}, err
	}
	e.warnUnknown(unknown)
	return res, nil
}

// warnUnknown warns of the events an import kept without folding them.
func (e *Engine) warnUnknown(unknown map[string]int) {
	for _, typ := range slices.Sorted(maps.Keys(unknown)) {
		e.warn("kept %d events of type %s without folding them: this flowctl does not know the type", unknown[typ], typ)
	}
}

// appendImported appends and folds events in one transaction and, when
// it commits, adds what it did to res and the events it kept without
// folding (types this binary does not know) to unknown. With progress it
// reports each event as done of len(events).
func (e *Engine) appendImported(events []importEvent, res *ImportResult, unknown map[string]int, progress bool) error {
	var appended, skipped int
	var kept map[string]int
	err := e.update(func(tx store.Tx) error {
		appended, skipped, kept = 0, 0, map[string]int{}
		st := projstore.NewTx(tx)
		var idx logidx.Writer
		projects := map[string]bool{}
		for i, ie := range events {
			if progress {
				e.progress(i, len(events))
			}
			ev, err := asImported(tx, ie.event)
			if err != nil {
				return err
			}
			out, err := tx.Append(ie.stream, store.Exact(ie.version-1), ev)
			if err != nil {
				return fmt.Errorf("%s: %w", ie.at, err)
			}
			if out.Duplicate {
				skipped++
				continue
			}
			appended++
			projects[ev.Project] = true
			idx.Add(out.Seqs[0], &ev)
			r := &store.Record{Seq: out.Seqs[0], Stream: ie.stream, Version: ie.version, Event: ev}
			if err := foldRecord(st, r, kept); errors.Is(err, ErrInvalid) {
				return fmt.Errorf("%s: %w", ie.at, err)
			} else if err != nil {
				return fmt.Errorf("%w: %s: %v", ErrInvalid, ie.at, err)
			}
		}
		if progress {
			e.progress(len(events), len(events))
		}
		if err := idx.Flush(tx); err != nil {
			return err
		}
		if err := st.Flush(); err != nil {
			return err
		}
		return indexImportedDigests(tx, projects)
	})
	if err != nil {
		return err
	}
	res.Read += len(events)
	res.Appended += appended
	res.Skipped += skipped
	for typ, n := range kept {
		unknown[typ] += n
	}
	return nil
}

// indexImportedDigests brings the digest log index of the projects an
// import appended to up to the head, as a command does: without it every
// prime and project report would read all of their imported events.
func indexImportedDigests(tx store.Tx, projects map[string]bool) error {
	for _, project := range slices.Sorted(maps.Keys(projects)) {
		if project == "" {
			continue
		}
		if err := projstore.IndexDigestLog(tx, project); err != nil {
			return err
		}
	}
	return nil
}

// asImported is ev as Import appends it to tx: at the file's last time
// and with its own as occurred_at when its own is earlier. An event
// already in the file is given as it was stored, so that it is found a
// duplicate.
//
// An event not before the file's last time is appended as it is, without
// looking it up: a copy of it already stored was stored as it is too, as
// the file's time has only grown since.
func asImported(tx store.Tx, ev store.Event) (store.Event, error) {
	last, err := tx.HeadTime()
	if err != nil || !ev.Time.Before(last) {
		return ev, err
	}
	if seq := tx.SeqOf(ev.ID); seq != 0 {
		return asStored(tx, seq, ev)
	}
	ev.Data, ev.Time = withOccurredAt(ev.Data, ev.Time), last
	return ev, nil
}

// asStored is ev with the occurred_at an earlier import gave it, if the
// record at seq holds it so.
func asStored(tx store.Tx, seq uint64, ev store.Event) (store.Event, error) {
	r, err := tx.Record(seq)
	if err != nil {
		return ev, err
	}
	if d := withOccurredAt(ev.Data, ev.Time); bytes.Equal(r.Data, d) {
		ev.Data = d
	}
	return ev, nil
}

// withOccurredAt returns a payload that is a msgpack map with an
// occurred_at key of t (unix ns) added at its end. A payload that is not
// a map, or has an occurred_at already (the truer original), is returned
// as it is.
func withOccurredAt(data []byte, t time.Time) []byte {
	if payloadOccurredAt(data) != nil || len(data) == 0 {
		return data
	}
	n, body, ok := mapHeader(data)
	if !ok {
		return data
	}
	var head, tail bytes.Buffer
	err := msgpack.NewEncoder(&head).EncodeMapLen(n + 1)
	enc := msgpack.NewEncoder(&tail)
	if err = errors.Join(err, enc.EncodeString("occurred_at"), enc.EncodeInt(t.UnixNano())); err != nil {
		return data
	}
	return slices.Concat(head.Bytes(), body, tail.Bytes())
}

// mapHeader reads the header of a msgpack map: its length and the bytes
// after the header.
func mapHeader(b []byte) (n int, body []byte, ok bool) {
	switch c := b[0]; {
	case c >= 0x80 && c <= 0x8f:
		return int(c & 0x0f), b[1:], true
	case c == 0xde && len(b) >= 3:
		return int(binary.BigEndian.Uint16(b[1:3])), b[3:], true
	case c == 0xdf && len(b) >= 5:
		return int(binary.BigEndian.Uint32(b[1:5])), b[5:], true
	}
	return 0, nil, false
}

// foldRecord folds the record r into st, refusing one on a stream the
// commands would not put it on. Events of types this binary does not know
// are kept in the log and skipped by the fold. An import folds the event
// it appended as it appended it (asImported made its time the one
// stored), without reading it back.
func foldRecord(st *projstore.Tx, r *store.Record, unknown map[string]int) error {
	// Reads of one entity at a point fold only its own stream: an event
	// that changes an entity from another stream would make them wrong.
	if err := checkPlacement(st, r); err != nil {
		return err
	}
	err := projection.Apply(st, r)
	if errors.Is(err, projection.ErrUnknown) {
		unknown[r.Type]++
		return nil
	}
	return err
}

type importEvent struct {
	at      importAt // where it was read
	stream  string
	version uint64
	event   store.Event
}

// importAt is where an import read an event: a line of its input, or
// the seq of a recovery's (a string only for an error).
type importAt struct {
	line int
	seq  uint64
}

func (a importAt) String() string {
	if a.line > 0 {
		return "line " + strconv.Itoa(a.line)
	}
	return "seq " + strconv.FormatUint(a.seq, 10)
}

// importReader reads an import a batch of events at a time, a line at a
// time, each line at most maxImportLine bytes.
type importReader struct {
	sc     *bufio.Scanner
	lim    importLimits
	line   int
	done   bool               // the input has no more lines
	read   int64              // bytes of input read
	total  int64              // the input's size, 0 when unknown
	names  map[string]string  // parseLine's strings
	recent [3]string          // parseLine's actor, session and project of the line before
	block  []byte             // parseLine's payloads are carved from it
	reuse  chan []importEvent // batches done with, for next to read into (parseAhead)
	last   int                // the events of the batch before
}

func newImportReader(r io.Reader, lim importLimits) *importReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, min(64<<10, lim.line)), lim.line)
	in := &importReader{sc: sc, lim: lim}
	if f, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			in.total = fi.Size()
		}
	}
	return in
}

// next parses the next batch of events: up to lim.batch of them, or
// lim.batchBytes of their lines. At the end of the input it sets done.
func (in *importReader) next() ([]importEvent, error) {
	// Room for as many as the batch before: a batch grown from nothing
	// copied its events a second time over. A batch handed back (reuse)
	// is read into instead.
	var out []importEvent
	select {
	case out = <-in.reuse:
		out = out[:0]
	default:
		out = make([]importEvent, 0, in.last)
	}
	defer func() { in.last = len(out) }()
	size := 0
	for len(out) < in.lim.batch && size < in.lim.batchBytes {
		if !in.sc.Scan() {
			in.done = true
			return out, in.scanErr()
		}
		in.line++
		in.read += int64(len(in.sc.Bytes())) + 1
		b := bytes.TrimSpace(in.sc.Bytes())
		if len(b) == 0 {
			continue
		}
		ie, err := in.parseLine(b)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrInvalid, in.line, err)
		}
		ie.at = importAt{line: in.line}
		out = append(out, ie)
		size += len(b)
	}
	return out, nil
}

func (in *importReader) scanErr() error {
	err := in.sc.Err()
	if errors.Is(err, bufio.ErrTooLong) {
		return fmt.Errorf("%w: line %d is over %d bytes", ErrInvalid, in.line+1, in.lim.line)
	}
	return err
}

// estimate is how many events the input holds, estimated from the
// events read so far and the bytes they took; 0 when the size is unknown.
func (in *importReader) estimate(events int) uint64 {
	if in.total == 0 || in.read == 0 {
		return 0
	}
	return uint64(float64(events) * float64(in.total) / float64(in.read))
}

func parseImportLine(b []byte) (importEvent, error) {
	// The view shows JSON text as values: a context MaxJSONDepth deep sits
	// eventview.Depth levels down in the line.
	if err := check.JSONDepth(b, MaxJSONDepth+eventview.Depth); err != nil {
		return importEvent{}, err
	}
	var ev Event
	if err := json.Unmarshal(b, &ev); err != nil {
		return importEvent{}, fmt.Errorf("not an event object: %v", check.DecodeError(err))
	}
	switch {
	case ev.Stream == "":
		return importEvent{}, errors.New(`"stream" is missing`)
	case ev.Type == "":
		return importEvent{}, errors.New(`"type" is missing`)
	case ev.Version == 0:
		return importEvent{}, errors.New(`"version" is missing or 0`)
	case ev.Time.IsZero():
		return importEvent{}, errors.New(`"time" is missing`)
	case ev.Time.Before(minTime) || ev.Time.After(maxTime):
		return importEvent{}, fmt.Errorf(`"time" %s is outside the years 1678 to 2262`, ev.Time.Format(time.RFC3339))
	}
	id, err := store.ParseID(ev.ID)
	if err != nil || id.IsZero() {
		return importEvent{}, fmt.Errorf(`"id" %q is not a UUID`, ev.ID)
	}
	out := importEvent{stream: ev.Stream, version: ev.Version, event: store.Event{
		ID: id, Type: ev.Type, Schema: ev.Schema, Time: ev.Time.UTC(),
		Actor: ev.Actor, Session: ev.Session, Project: ev.Project,
	}}
	if out.event.Correlation, err = parseOptionalID("correlation", ev.Correlation); err != nil {
		return importEvent{}, err
	}
	if out.event.Causation, err = parseOptionalID("causation", ev.Causation); err != nil {
		return importEvent{}, err
	}
	out.event.Data, err = importPayload(ev)
	return out, err
}

func parseOptionalID(name, s string) (store.ID, error) {
	if s == "" {
		return store.ID{}, nil
	}
	id, err := store.ParseID(s)
	if err != nil {
		return id, fmt.Errorf("%q %q is not a UUID", name, s)
	}
	return id, nil
}

// importPayload takes Raw when present (the exact stored bytes), else
// turns Data from the view back into what is stored (eventview.Unview)
// and encodes it as msgpack with sorted keys.
func importPayload(ev Event) ([]byte, error) {
	if ev.Raw != nil {
		return ev.Raw, nil
	}
	if len(ev.Data) == 0 || string(ev.Data) == "null" {
		return nil, nil
	}
	v, err := eventview.Unview(ev.Type, ev.Schema, ev.Data)
	if err != nil {
		return nil, fmt.Errorf(`"data": %v`, err)
	}
	return marshal(v)
}
