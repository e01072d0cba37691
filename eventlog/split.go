package eventlog

import (
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"
)

// ReplaySplit is Replay on workers goroutines, for a fold whose parts
// are independent (a project's events change that project's state only):
// the caller's goroutine walks the log and, for every record in seq
// order, calls route with the record's project (nil when the record is
// too damaged to say) and hands the record, undecoded, to the worker
// route names (0 to workers-1; one out of range counts as 0). Each
// worker checks and decodes its records as Replay does (CRC32C, framing,
// seq), in seq order, and calls fn with its number and the record, lent
// until fn returns as Replay lends it. No copy is made of a record: the
// workers read the transaction's pages, which stay as they are until
// ReplaySplit returns (the transaction must not be written meanwhile).
//
// The error returned is the one of the earliest record (by seq) whose
// decode or fn failed, else the walk's (a missing seq); the walk stops
// soon after a worker fails. fn returning ErrStop stops the replay
// quietly. route must be quick (it runs on the walk), fn may take its
// time: that is the work the workers share.
func (tx *Tx) ReplaySplit(from, to uint64, workers int, route func(project []byte) int, fn func(worker int, r *Record) error) error {
	return tx.replaySplit(from, to, workers, splitBatchLen, splitAhead, route, fn)
}

// replaySplit is ReplaySplit handing batches of batchLen records, with
// ahead of them on a worker's channel (the tests make both small).
func (tx *Tx) replaySplit(from, to uint64, workers, batchLen, ahead int, route func(project []byte) int, fn func(worker int, r *Record) error) error {
	s := newSplit(tx.log.format, max(workers, 1), batchLen, ahead, fn)
	err := tx.walkLog(from, to, func(seq uint64, v []byte, prev Hash) error {
		w := route(tx.log.format.peekProject(v))
		if w < 0 || w >= len(s.workers) {
			w = 0
		}
		return s.add(w, splitItem{seq: seq, v: v, prev: prev})
	})
	if werr := s.wait(); werr != nil {
		err = werr
	}
	return stopped(err)
}

// peekProject returns the project of the record v of format f, read
// without a check (the worker that decodes v checks it), nil when v is
// too damaged to say. It skips the fields before the project by their
// msgpack headers alone, as the walk of a ReplaySplit does for every
// record: where the parser checks each value's type and shortest form,
// this only stays within v. On a record the parser accepts it finds the
// project the parser finds (TestPeekProject); on another, whatever it
// returns routes a record whose decode fails.
func (f format) peekProject(v []byte) []byte {
	if len(v) == 0 || v[0] != f.envelopeHeader() {
		return nil
	}
	i := 1
	if f == formatV1 {
		i = skipValue(v, i) // seq
	}
	// id, stream, version, type, schema, time, actor, session, each in
	// the form it mostly takes by an inlined test, else by skipValue.
	if i >= 0 && i+1 < len(v) && v[i] == mpBin8 && v[i+1] == byte(len(ID{})) {
		i += 2 + len(ID{})
	} else {
		i = skipValue(v, i)
	}
	i = orSkip(v, i, fixStrEnd(v, i))  // stream
	i = orSkip(v, i, fixUintEnd(v, i)) // version
	i = orSkip(v, i, fixStrEnd(v, i))  // type
	i = orSkip(v, i, fixUintEnd(v, i)) // schema
	i = orSkip(v, i, uint64End(v, i))  // time: nanoseconds since 1970 are a uint64
	i = orSkip(v, i, fixStrEnd(v, i))  // actor
	i = orSkip(v, i, fixStrEnd(v, i))  // session
	end := skipValue(v, i)
	if end < 0 {
		return nil
	}
	var header int
	switch c := v[i]; {
	case c&0xe0 == mpFixStr:
		header = 1
	case c == mpStr8:
		header = 2
	case c == mpStr16:
		header = 3
	case c == mpStr32:
		header = 5
	}
	if header == 0 || end < i+header {
		return nil
	}
	return v[i+header : end : end]
}

// fixStrEnd, fixUintEnd and uint64End return where the value at v[i]
// ends if it is a fixstr, a positive fixint or a uint64, else -1; orSkip
// returns end, or when it is -1 what skipValue finds: the forms the
// envelope's fields mostly take are read inline, the others by the call.
// (uint(i) < uint(len(v)) is 0 <= i < len(v).)
func fixStrEnd(v []byte, i int) int {
	if uint(i) < uint(len(v)) && v[i]-mpFixStr < 32 {
		return i + 1 + int(v[i]-mpFixStr)
	}
	return -1
}

func fixUintEnd(v []byte, i int) int {
	if uint(i) < uint(len(v)) && v[i] <= 0x7f {
		return i + 1
	}
	return -1
}

func uint64End(v []byte, i int) int {
	if uint(i) < uint(len(v)) && v[i] == mpUint64 {
		return i + 9
	}
	return -1
}

func orSkip(v []byte, i, end int) int {
	if end >= 0 {
		return end
	}
	return skipValue(v, i)
}

// skipValue returns where the msgpack value at v[i] ends, by its header
// alone (a str, bin, integer, nil or bool: the envelope's kinds of
// value), or -1 when it is of another kind or runs past v; i may be -1
// already, which it returns.
func skipValue(v []byte, i int) int {
	if i < 0 || i >= len(v) {
		return -1
	}
	c := v[i]
	var end int
	switch {
	case c <= 0x7f || c >= 0xe0: // positive and negative fixint
		return i + 1
	case c&0xe0 == mpFixStr:
		end = i + 1 + int(c&0x1f)
	case c == mpNil || c == 0xc2 || c == 0xc3: // nil, false, true
		return i + 1
	case c == mpBin8 || c == mpStr8:
		if i+1 >= len(v) {
			return -1
		}
		end = i + 2 + int(v[i+1])
	case c == mpBin16 || c == mpStr16:
		if i+2 >= len(v) {
			return -1
		}
		end = i + 3 + int(binary.BigEndian.Uint16(v[i+1:]))
	case c == mpBin32 || c == mpStr32:
		if i+4 >= len(v) {
			return -1
		}
		end = i + 5 + int(binary.BigEndian.Uint32(v[i+1:]))
	case c == mpUint8 || c == mpInt8:
		end = i + 2
	case c == mpUint16 || c == mpInt16:
		end = i + 3
	case c == mpUint32 || c == mpInt32:
		end = i + 5
	case c == mpUint64 || c == mpInt64:
		end = i + 9
	default:
		return -1
	}
	if end > len(v) {
		return -1
	}
	return end
}

// splitItem is a record handed to a worker: its seq, its stored bytes
// and the hash of the record before (a format-2 record's prev).
type splitItem struct {
	seq  uint64
	v    []byte
	prev Hash
}

// splitBatchLen is how many records go to a worker at a time, and
// splitAhead how many batches a worker's channel holds: the walk runs up
// to splitAhead batches ahead of a worker, so that a run of one
// project's records (an import's, say) keeps the other workers busy
// with what came before it rather than waiting for the walk.
const (
	splitBatchLen = 256
	splitAhead    = 8
)

// split is the state of a ReplaySplit.
type split struct {
	f        format
	fn       func(worker int, r *Record) error
	batchLen int
	workers  []*splitWorker
	free     chan []splitItem // batches the workers are done with
	failed   atomic.Bool      // a worker met an error: stop the walk
	wg       sync.WaitGroup
}

type splitWorker struct {
	in    chan []splitItem
	batch []splitItem // being filled
	err   error
	seq   uint64 // of the record whose decode or fn failed
}

func newSplit(f format, n, batchLen, ahead int, fn func(int, *Record) error) *split {
	s := &split{f: f, fn: fn, batchLen: batchLen, free: make(chan []splitItem, (ahead+2)*n)}
	for i := range n {
		w := &splitWorker{in: make(chan []splitItem, ahead)}
		s.workers = append(s.workers, w)
		s.wg.Add(1)
		go s.run(i, w)
	}
	return s
}

// run decodes and hands on w's records until its channel closes; after
// an error it only hands batches back.
func (s *split) run(i int, w *splitWorker) {
	defer s.wg.Done()
	var r Record
	strs := new(internCache)
	for batch := range w.in {
		for _, it := range batch {
			if w.err != nil {
				break
			}
			err := s.f.decodeLent(&r, it.seq, it.v, it.prev, strs)
			if err == nil {
				err = s.fn(i, &r)
			}
			if err != nil {
				w.err, w.seq = err, it.seq
				s.failed.Store(true)
			}
		}
		clear(batch) // let go of the pages' slices
		select {
		case s.free <- batch[:0]:
		default:
		}
	}
}

// errSplitFailed stops the walk of a ReplaySplit whose worker failed:
// the worker's error is the one returned.
var errSplitFailed = errors.New("eventlog: a replay worker failed")

// add puts it into worker w's batch, handing the batch over when it is
// full.
func (s *split) add(w int, it splitItem) error {
	sw := s.workers[w]
	if sw.batch == nil {
		select {
		case sw.batch = <-s.free:
		default:
			sw.batch = make([]splitItem, 0, s.batchLen)
		}
	}
	if sw.batch = append(sw.batch, it); len(sw.batch) == s.batchLen {
		sw.in <- sw.batch
		sw.batch = nil
		if s.failed.Load() {
			return errSplitFailed
		}
	}
	return nil
}

// wait hands over the last batches, waits for the workers and returns
// the error of the earliest record that failed, nil if none did.
func (s *split) wait() error {
	for _, w := range s.workers {
		if len(w.batch) > 0 {
			w.in <- w.batch
		}
		close(w.in)
	}
	s.wg.Wait()
	var first *splitWorker
	for _, w := range s.workers {
		if w.err != nil && (first == nil || w.seq < first.seq) {
			first = w
		}
	}
	if first == nil {
		return nil
	}
	return first.err
}
