package eventlog

import (
	"errors"
	"sync"
	"sync/atomic"
)

// hashCheck checks the hashes of the records Verify's walk has decoded on
// goroutines of their own, beside the walk: a record's hash is over its
// own bytes and the hash the record before it stores (which that
// record's own check proves), so each record checks alone, in any order.
// The walk hands the records on in batches (add), viewing their bytes in
// the file's memory map, which stays valid for the walk's transaction;
// hashWorkers goroutines take the batches in turn.
//
// Every hash is checked even when the walk stops early: end waits for
// the batches handed on and returns the problem of the lowest seq, which
// comes before any the walk found (the walk hands a record on only once
// its other checks before the hash's have passed, as the walk checked
// them in order when it computed the hash itself).
type hashCheck struct {
	f       format
	batches chan []hashItem
	free    chan []hashItem
	cur     []hashItem
	wg      sync.WaitGroup

	failed atomic.Bool // a worker found a bad hash: the walk may stop
	mu     sync.Mutex
	first  *CorruptionError // the bad hash of the lowest seq
}

// hashItem is one record's part of its hash check: what checkHash reads.
type hashItem struct {
	seq        uint64
	prev, hash Hash
	env        []byte // the envelope, a view of the file's map
}

const (
	hashBatch   = 256 // records a batch
	hashBatches = 8   // batches in flight
	hashWorkers = 2
)

// errHashStop ends a walk whose hash check has failed: end's finding is
// the one reported.
var errHashStop = errors.New("eventlog: a record's hash failed")

func newHashCheck(f format) *hashCheck {
	h := &hashCheck{f: f, batches: make(chan []hashItem, hashBatches), free: make(chan []hashItem, hashBatches+hashWorkers+1)}
	for range hashBatches + hashWorkers + 1 {
		h.free <- make([]hashItem, 0, hashBatch)
	}
	h.cur = <-h.free
	for range hashWorkers {
		h.wg.Go(h.run)
	}
	return h
}

// add hands on r, whose envelope is env, for its hash check. It returns
// errHashStop once a batch handed on before has failed.
func (h *hashCheck) add(r *Record, env []byte) error {
	h.cur = append(h.cur, hashItem{seq: r.Seq, prev: r.Prev, hash: r.Hash, env: env})
	if len(h.cur) < hashBatch {
		return nil
	}
	h.batches <- h.cur
	h.cur = <-h.free
	if h.failed.Load() {
		return errHashStop
	}
	return nil
}

// end hands on the last batch, waits for every check and returns the
// bad hash of the lowest seq, nil when there is none.
func (h *hashCheck) end() *CorruptionError {
	if len(h.cur) > 0 {
		h.batches <- h.cur
	}
	h.cur = nil
	close(h.batches)
	h.wg.Wait()
	return h.first
}

func (h *hashCheck) run() {
	var r Record
	for b := range h.batches {
		if !h.past(b[0].seq) {
			for i := range b {
				it := &b[i]
				r.Seq, r.Prev, r.Hash = it.seq, it.prev, it.hash
				if err := h.f.checkHash(&r, it.env); err != nil {
					h.fail(err)
					break
				}
			}
		}
		clear(b) // no view of the map stays behind
		h.free <- b[:0]
	}
}

// past reports whether a bad hash was found before seq: a batch from
// seq on need not be checked. (A batch of lower seqs taken by another
// worker after a later one failed is still checked.)
func (h *hashCheck) past(seq uint64) bool {
	if !h.failed.Load() {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.first != nil && h.first.Seq < seq
}

// fail keeps err, a *CorruptionError, when its seq is the lowest yet.
func (h *hashCheck) fail(err error) {
	var ce *CorruptionError
	if !errors.As(err, &ce) {
		ce = &CorruptionError{Reason: err.Error()}
	}
	h.mu.Lock()
	if h.first == nil || ce.Seq < h.first.Seq {
		h.first = ce
	}
	h.mu.Unlock()
	h.failed.Store(true)
}
