package flow

import (
	"fmt"
	"strings"
	"time"

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

// bySeqOnly reports whether f selects by seq alone, so that every record
// in its seq range matches.
func (f *Filter) bySeqOnly() bool {
	return f.Stream == "" && f.Project == "" && f.Type == "" && f.Actor == "" && f.Session == "" && f.Since.IsZero() && f.Until.IsZero()
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
// engine releases the file lock while fn runs.
func (e *Engine) Events(f Filter, fn func(Event) error) error {
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
	if f.Limit > 0 && f.bySeqOnly() && f.UntilSeq >= uint64(f.Limit) {
		// Every record of the range matches: the newest Limit are the
		// last Limit seqs, and nothing before them needs reading.
		f.SinceSeq = max(f.SinceSeq, f.UntilSeq-uint64(f.Limit)+1)
	}
	var ring *ring
	if f.Limit > 0 {
		ring = newRing(f.Limit)
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
			if ring != nil {
				ring.push(ev)
			} else if err := fn(ev); err != nil {
				return err
			}
		}
		at = next
	}
	if ring != nil {
		for _, ev := range ring.items() {
			if err := fn(ev); err != nil {
				return err
			}
		}
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

// ring keeps the newest n events pushed into it.
type ring struct {
	buf  []Event
	next int
	full bool
}

func newRing(n int) *ring { return &ring{buf: make([]Event, n)} }

func (r *ring) push(ev Event) {
	r.buf[r.next] = ev
	r.next = (r.next + 1) % len(r.buf)
	r.full = r.full || r.next == 0
}

func (r *ring) items() []Event {
	if !r.full {
		return r.buf[:r.next]
	}
	return append(append([]Event(nil), r.buf[r.next:]...), r.buf[:r.next]...)
}

// ErrStop, returned by the callback of Events or EventsBack, ends the
// walk early; the walk then returns nil.
var ErrStop = store.ErrStop

// EventsBack calls fn for each event matching f, newest first: from the
// head as it was when EventsBack started (or f.UntilSeq) back to
// f.SinceSeq, at most f.Limit events when Limit is set. fn returning
// ErrStop ends the walk and EventsBack returns nil.
//
// This first version reads forwards and hands the matches back in
// reverse; the reverse cursors over the indexes replace it.
func (e *Engine) EventsBack(f Filter, fn func(Event) error) error {
	var all []Event
	if err := e.Events(f, func(ev Event) error { all = append(all, ev); return nil }); err != nil {
		return err
	}
	for i := len(all) - 1; i >= 0; i-- {
		if err := fn(all[i]); err != nil {
			if err == ErrStop {
				return nil
			}
			return err
		}
	}
	return nil
}
