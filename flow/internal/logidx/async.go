package logidx

import (
	"fmt"

	"github.com/flowctl/flowctl/flow/store"
)

// A Writer lists each event as Add hears it: a few map updates for its
// type, project, actor and session, and the full-text index's tokenizing
// of its texts, about a microsecond an event, all of it a function of the
// event alone. Async moves that work to a goroutine of its own, so that
// on a machine of two cores a batch's commands go on while their events
// are listed; Flush waits for it, and writes what a Writer without it
// would have written, byte for byte.

// asyncChunk is how many events Add queues before it hands them to the
// goroutine: a hand-over costs a channel send and, when the goroutine
// sleeps, its wake-up, paid once per this many events.
const asyncChunk = 256

// queued is an event Add heard, with its own copy of the event (Data
// shared: nothing changes a record's payload).
type queued struct {
	seq uint64
	ev  store.Event
}

// lister is the goroutine of an Async Writer.
type lister struct {
	queue []queued      // heard, not yet handed over
	work  chan []queued // handed over, in order
	free  chan []queued // lists done with, for Add to fill again
	done  chan struct{} // closed when the goroutine has listed all and ended
	// panicked is what listing an event panicked with (the goroutine
	// lists no more after it); sync raises it on the caller's goroutine.
	panicked any
}

// Async makes w list the events Add hears on a goroutine of its own,
// in the order heard, until the next Flush (which waits for it, then
// lists synchronously again) or Stop. Nothing but Add, Flush and Stop
// may be called on w meanwhile, all from one goroutine.
func (w *Writer) Async() {
	if w.async != nil {
		return
	}
	l := &lister{work: make(chan []queued, 4), free: make(chan []queued, 4), done: make(chan struct{})}
	w.async = l
	go l.run(w)
}

// run lists what it is handed, until work is closed.
func (l *lister) run(w *Writer) {
	defer close(l.done)
	for q := range l.work {
		if l.panicked == nil {
			l.list(w, q)
		}
		clear(q)
		select {
		case l.free <- q[:0]:
		default:
		}
	}
}

// list lists q, catching a panic for sync to raise.
func (l *lister) list(w *Writer, q []queued) {
	defer func() {
		if r := recover(); r != nil {
			l.panicked = r
		}
	}()
	for i := range q {
		w.list(q[i].seq, &q[i].ev)
	}
}

// hear queues an event; a full queue is handed over.
func (l *lister) hear(seq uint64, ev *store.Event) {
	if l.queue == nil {
		select {
		case l.queue = <-l.free:
		default:
			l.queue = make([]queued, 0, asyncChunk)
		}
	}
	l.queue = append(l.queue, queued{seq, *ev})
	if len(l.queue) >= asyncChunk {
		l.work <- l.queue
		l.queue = nil
	}
}

// sync hands over the events still queued, waits until the goroutine
// has listed every event and ended, and makes w synchronous again. A
// panic of the listing is raised here.
func (w *Writer) sync() {
	l := w.async
	if l == nil {
		return
	}
	w.async = nil
	if len(l.queue) > 0 {
		l.work <- l.queue
	}
	close(l.work)
	<-l.done
	if l.panicked != nil {
		panic(fmt.Sprintf("logidx: listing an event: %v", l.panicked))
	}
}

// Stop ends w's goroutine (Async), if it has one, after it listed what
// Add heard: for a transaction that ends without Flush.
func (w *Writer) Stop() { w.sync() }
