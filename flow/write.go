package flow

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/flowctl/flowctl/flow/internal/check"
	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/vmihailenco/msgpack/v5"
)

// update runs fn in one write transaction: the events it appends and the
// records it writes commit together or not at all.
func (e *Engine) update(fn func(tx store.Tx) error) error {
	if e.at != nil {
		return e.errAtWrite()
	}
	if e.tx != nil {
		return fn(e.tx)
	}
	if err := e.acquire(); err != nil {
		return err
	}
	e.held.forget()
	defer e.held.forget()
	err := e.log.Update(fn)
	if err != nil {
		// What the snapshot cache heard of the writes (snapstore.Cache.Track)
		// may not have committed: it reads the whole state next time.
		e.snaps.Reset()
	}
	return err
}

// commit is update for a command: with the hooks around fn when the
// engine has any (hooks.go), else update itself, at no cost.
func (e *Engine) commit(fn func(tx store.Tx) error) error {
	if e.at != nil || e.tx != nil {
		return e.update(fn)
	}
	set, err := e.hookSet()
	if err != nil {
		return err
	}
	if set.Empty() {
		return e.update(fn)
	}
	return e.updateHooked(fn, set)
}

// view runs fn in one read transaction.
func (e *Engine) view(fn func(tx store.Tx) error) error {
	if e.tx != nil {
		return fn(e.tx)
	}
	if err := e.acquire(); err != nil {
		return err
	}
	return e.log.View(fn)
}

// read runs fn on the projections in one read transaction. When they were
// built by another version of the fold (a read-only engine cannot rebuild
// them), fn reads a replay of the log in memory instead: slower, never wrong.
func (e *Engine) read(fn func(src source) error) error {
	return e.view(func(tx store.Tx) error { return e.readTx(tx, fn) })
}

func (e *Engine) readTx(tx store.Tx, fn func(src source) error) error {
	if e.at != nil {
		src, _, err := e.atState(tx)
		if err != nil {
			return err
		}
		return fn(src)
	}
	var current bool
	var err error
	if e.batch != nil {
		current, err = e.batch.currentIn(tx)
	} else {
		current, err = projstore.Current(tx)
	}
	if err != nil {
		return err
	}
	if current {
		return fn(projstore.Reader(tx))
	}
	mem, _, err := e.replay(tx)
	if err != nil {
		return err
	}
	return fn(projstore.Mem{Memory: mem})
}

// newEvent builds an event of this engine's actor and session with a
// deterministic msgpack payload.
func (e *Engine) newEvent(typ string, schema uint32, project string, payload any) (store.Event, error) {
	if err := check.Line("actor", e.opts.Actor, MaxTitle, false); err != nil {
		return store.Event{}, err
	}
	if err := check.Line("session", e.opts.Session, MaxTitle, false); err != nil {
		return store.Event{}, err
	}
	data, ok := appendPayload(payload) // the generated encoder, when it has one
	if !ok {
		var err error
		if data, err = marshal(payload); err != nil {
			return store.Event{}, fmt.Errorf("flow: encoding %s payload: %w", typ, err)
		}
	}
	return store.Event{
		Type:    typ,
		Schema:  schema,
		Time:    e.opts.Now().UTC(),
		Actor:   e.opts.Actor,
		Session: e.opts.Session,
		Project: project,
		Data:    data,

		Correlation: e.opts.Hooks.correlation(),
	}, nil
}

// maxPooledPayload is the largest scratch buffer payloadBufs keeps.
const maxPooledPayload = 64 << 10

// payloadBufs are scratch buffers of appendPayload.
var payloadBufs = sync.Pool{New: func() any { return new([]byte) }}

// appendPayload encodes payload with its generated encoder, if it has one
// (projection.AppendPayload), into a slice of its own, exactly as long.
func appendPayload(payload any) ([]byte, bool) {
	buf := payloadBufs.Get().(*[]byte)
	b, ok := projection.AppendPayload((*buf)[:0], payload)
	var out []byte
	if ok {
		out = bytes.Clone(b) // before the buffer goes back: another goroutine may take it
	}
	if cap(b) <= maxPooledPayload {
		*buf = b
		payloadBufs.Put(buf)
	}
	return out, ok
}

// marshal encodes v as msgpack with sorted map keys, so equal values
// always give equal bytes.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	enc.SetCustomStructTag("msgpack")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
