package flow

import (
	"fmt"
	"strings"
	"time"

	"github.com/flowctl/flowctl/flow/internal/logidx"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// Filter selects events for Events. Zero fields match everything.
type Filter struct {
	Stream   string
	Project  string
	Type     string // exact type, or a prefix ending in "*": "task.*"
	Actor    string
	Session  string
	SinceSeq uint64 // seq >= SinceSeq
	UntilSeq uint64 // seq <= UntilSeq
	Since    time.Time
	Until    time.Time
	Limit    int  // keep only the newest Limit matches; 0: all
	Raw      bool // fill Event.Raw with the payload's stored bytes
}

func (f *Filter) match(r *store.Record) bool {
	switch {
	case f.Type != "" && !matchType(f.Type, r.Type),
		f.Actor != "" && r.Actor != f.Actor,
		f.Session != "" && r.Session != f.Session,
		f.Project != "" && r.Project != f.Project,
		f.Stream != "" && r.Stream != f.Stream,
		f.UntilSeq != 0 && r.Seq > f.UntilSeq,
		!f.Since.IsZero() && r.Time.Before(f.Since),
		!f.Until.IsZero() && r.Time.After(f.Until):
		return false
	}
	return r.Seq >= f.SinceSeq
}

// CheckTypePattern refuses a Filter.Type pattern (a type, or a prefix
// ending in "*") that matches no event type this binary knows, listing
// them. Its error is a bare message, for the adapter to name the flag or
// argument.
func CheckTypePattern(pattern string) error {
	types := projection.Types()
	for _, t := range types {
		if matchType(pattern, t) {
			return nil
		}
	}
	return fmt.Errorf("matches no event type; use one of: %s, or a prefix with a trailing * (task.*)",
		strings.Join(types, ", "))
}

func matchType(pattern, typ string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(typ, prefix)
	}
	return typ == pattern
}

// pageSize is how many records one read transaction handles before the
// engine hands them to the caller.
const pageSize = 4096

// Events calls fn for each event matching f, oldest first, up to the head
// as it was when Events started. Records are read in pages, each in its
// own short transaction; fn runs outside any transaction, and a read-only
// engine releases the file lock while fn runs. With f.Limit, the newest
// Limit matches are found newest first (EventsBack) and handed out oldest
// first.
//
// A session's events (f.Session without f.Stream) are found the same way,
// through the log index's list of the session rather than a walk of the
// whole log: a session is a small part of a big log.
func (e *Engine) Events(f Filter, fn func(Event) error) error {
	if f.Limit > 0 || (f.Session != "" && f.Stream == "") {
		newest := make([]Event, 0, min(f.Limit, pageSize))
		err := e.EventsBack(f, func(ev Event) error {
			newest = append(newest, ev)
			return nil
		})
		if err != nil {
			return err
		}
		for i := len(newest) - 1; i >= 0; i-- {
			if err := fn(newest[i]); err != nil {
				return err
			}
		}
		return nil
	}
	var head uint64
	err := e.view(func(tx store.Tx) error {
		head, _ = tx.Head()
		return nil
	})
	if err != nil {
		return err
	}
	if f.UntilSeq == 0 || f.UntilSeq > head {
		f.UntilSeq = head
	}
	for at := (cursor{seq: max(f.SinceSeq, 1), version: 1}); at.seq <= f.UntilSeq; {
		page, next, err := e.page(&f, at)
		if err != nil {
			return err
		}
		if err := e.release(); err != nil {
			return err
		}
		for _, ev := range page {
			if err := fn(ev); err != nil {
				return err
			}
		}
		at = next
	}
	return nil
}

// cursor is where the next page starts: a seq, and for a stream filter
// the stream version as well.
type cursor struct{ seq, version uint64 }

// page reads up to pageSize records from the cursor on, through the index
// that fits the filter, and returns the matches and where to go on from.
func (e *Engine) page(f *Filter, at cursor) ([]Event, cursor, error) {
	if err := e.acquire(); err != nil {
		return nil, at, err
	}
	var out []Event
	next := cursor{seq: f.UntilSeq + 1}
	n := 0
	visit := func(r *store.Record) error {
		if r.Seq > f.UntilSeq {
			return store.ErrStop
		}
		if n == pageSize {
			next = cursor{seq: r.Seq, version: r.Version}
			return store.ErrStop
		}
		n++
		if f.match(r) {
			ev := eventOf(r)
			if f.Raw {
				ev.Raw = r.Data
			}
			out = append(out, ev)
		}
		return nil
	}
	err := e.view(func(tx store.Tx) error {
		switch {
		case f.Stream != "":
			return tx.ReadStream(f.Stream, at.version, func(r *store.Record) error {
				if r.Seq < at.seq {
					return nil
				}
				return visit(r)
			})
		case f.Project != "":
			return tx.ReadProject(f.Project, at.seq, visit)
		}
		return tx.ReadRange(at.seq, f.UntilSeq, visit)
	})
	return out, next, err
}

// ErrStop, returned by the callback of Events or EventsBack, ends the
// walk early; the walk then returns nil.
var ErrStop = store.ErrStop

// EventsBack calls fn for each event matching f, newest first: from the
// head as it was when EventsBack started (or f.UntilSeq) back to
// f.SinceSeq, at most f.Limit events when Limit is set. fn returning
// ErrStop ends the walk and EventsBack returns nil.
//
// It walks backwards over the most selective index for f, reading only
// the records it checks: the stream's index for f.Stream; the log index
// (logidx) for f.Type, f.Actor and f.Session, the lists of every type a
// pattern matches merged and the lists of the fields given intersected;
// the project's index for f.Project; else the log. The other fields are
// checked per record, and since times follow seqs, a record before
// f.Since ends the walk. Pages of records are read as Events reads them,
// each in its own transaction.
func (e *Engine) EventsBack(f Filter, fn func(Event) error) error {
	w, err := e.backWalk(&f)
	if err != nil {
		return err
	}
	for !w.done {
		page, err := e.pageBack(w)
		if err != nil {
			return err
		}
		if err := e.release(); err != nil {
			return err
		}
		for _, ev := range page {
			if err := fn(ev); err != nil {
				if err == ErrStop {
					return nil
				}
				return err
			}
		}
	}
	return nil
}

// backWalk is where a newest-first walk stands between pages.
type backWalk struct {
	f       *Filter
	path    backPath
	query   logidx.Query // for pathIndex
	through uint64       // pathIndex: the log index lists the log up to this seq
	to      uint64       // the next record's seq is at most to
	version uint64       // pathStream: the next record's version is at most this; 0: the head
	left    int          // matches still wanted; 0: no limit
	done    bool
}

// backPath is the index a newest-first walk goes down.
type backPath int

const (
	pathLog backPath = iota
	pathStream
	pathIndex
	pathProject
)

// backWalk starts a walk for f from its bound, choosing the path: the log
// index only when it is current (a read-only engine on a file an older
// flowctl wrote takes another path).
func (e *Engine) backWalk(f *Filter) (*backWalk, error) {
	w := &backWalk{f: f, left: f.Limit}
	if f.Type != "" {
		w.query.Types = func(typ string) bool { return matchType(f.Type, typ) }
	}
	w.query.Project, w.query.Actor, w.query.Session = f.Project, f.Actor, f.Session
	err := e.view(func(tx store.Tx) error {
		if e.idx != nil { // in a Batch: its own events first
			if err := e.idx.Flush(tx); err != nil {
				return err
			}
		}
		head, _ := tx.Head()
		if f.UntilSeq == 0 || f.UntilSeq > head {
			f.UntilSeq = head
		}
		w.to = f.UntilSeq
		switch {
		case f.Stream != "":
			w.path = pathStream
			return nil
		case w.query.Serves():
			through, ok, err := logidx.Through(tx)
			if ok || err != nil {
				w.path, w.through = pathIndex, through
				return err
			}
		}
		if f.Project != "" {
			w.path = pathProject
		}
		return nil
	})
	w.done = w.to == 0 || w.to < f.SinceSeq
	return w, err
}

// pageBack reads up to pageSize records of the walk in one transaction
// and returns the matches among them, newest first.
func (e *Engine) pageBack(w *backWalk) ([]Event, error) {
	if err := e.acquire(); err != nil {
		return nil, err
	}
	var out []Event
	f, n, full := w.f, 0, false
	visit := func(r *store.Record) error {
		if n == pageSize || len(out) == pageSize {
			full = true
			return store.ErrStop
		}
		n++
		w.to, w.version = r.Seq-1, r.Version-1
		if r.Seq > f.UntilSeq { // a stream's event after the bound
			return nil
		}
		if r.Seq < f.SinceSeq || (!f.Since.IsZero() && r.Time.Before(f.Since)) {
			w.done = true
			return store.ErrStop
		}
		if f.match(r) {
			ev := eventOf(r)
			if f.Raw {
				ev.Raw = r.Data
			}
			out = append(out, ev)
			if w.left > 0 {
				if w.left--; w.left == 0 {
					w.done = true
				}
			}
		}
		if w.done || w.to == 0 || w.to < f.SinceSeq || (w.path == pathStream && w.version == 0) {
			w.done = true
			return store.ErrStop
		}
		return nil
	}
	err := e.view(func(tx store.Tx) error {
		switch w.path {
		case pathStream:
			return tx.ReadStreamBack(f.Stream, w.version, visit)
		case pathIndex:
			return readIndexBack(tx, w, visit)
		case pathProject:
			return tx.ReadProjectBack(f.Project, w.to, visit)
		}
		return tx.ReadRangeBack(max(f.SinceSeq, 1), w.to, visit)
	})
	if !full {
		w.done = true
	}
	return out, err
}

// readIndexBack hands visit the records the log index lists for w's
// query, from w.to down: first those past the seq it lists through,
// which an older flowctl appended, from the log.
func readIndexBack(tx store.Tx, w *backWalk, visit func(*store.Record) error) error {
	if w.to > w.through {
		if err := tx.ReadRangeBack(w.through+1, w.to, visit); err != nil || w.done || w.to > w.through {
			return err // an error, or visit stopped the walk
		}
	}
	cur, err := logidx.Open(tx, w.query)
	if err != nil {
		return err
	}
	for {
		seq, err := cur.Le(w.to)
		if err != nil || seq == 0 {
			return err
		}
		r, err := tx.Record(seq)
		if err != nil {
			return err
		}
		if r == nil {
			return &store.CorruptionError{Seq: seq, Reason: "the log index lists a seq past the head (run 'flowctl rebuild')"}
		}
		if err := visit(r); err == store.ErrStop {
			return nil
		} else if err != nil {
			return err
		}
	}
}
