package cache

import "sync/atomic"

// Held is what an engine knows about the log head without a read
// transaction. While the engine holds the file, no other process can
// append: its exclusive lock (or, read-only, its shared lock) keeps every
// other writer out. So the head the cache was last brought to stays the
// head until this engine writes, and a cache hit needs no transaction.
// Every write calls Forget before and after it commits, so a read that
// saw an older head never records it as current. The zero Held knows no
// head; one is shared by an engine and its views.
//
// The pair (gen, head) is one immutable heldState behind an atomic
// pointer: a hit reads it with one load, and Set and Forget replace it
// with compare-and-swap, so that Set still records its head only if gen
// is what the read saw before it began.
type Held struct {
	state atomic.Pointer[heldState] // nil: gen 0, head unknown
}

type heldState struct {
	gen   uint64
	head  uint64
	known bool
}

// Current returns the known head and the generation it belongs to.
func (h *Held) Current() (head uint64, gen uint64, ok bool) {
	s := h.state.Load()
	if s == nil {
		return 0, 0, false
	}
	return s.head, s.gen, s.known
}

// Set records head as the head the cache is at, unless a write began or
// ended since gen was read.
func (h *Held) Set(gen, head uint64) {
	for {
		s := h.state.Load()
		switch {
		case s == nil && gen != 0, s != nil && s.gen != gen:
			return // a write began or ended since
		case s != nil && s.known && s.head == head:
			return // already recorded
		}
		if h.state.CompareAndSwap(s, &heldState{gen: gen, head: head, known: true}) {
			return
		}
	}
}

// Forget marks the head unknown: a write begins or ends, or the file is
// let go.
func (h *Held) Forget() {
	for {
		s := h.state.Load()
		next := &heldState{gen: 1}
		if s != nil {
			next.gen = s.gen + 1
		}
		if h.state.CompareAndSwap(s, next) {
			return
		}
	}
}
