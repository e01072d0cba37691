package flow

import (
	"bytes"
	"errors"

	"github.com/flowctl/flowctl/flow/internal/projstore"
)

// Streamed lists. EachTask, EachPlan, EachApproval and EachExec call a
// function with one entity at a time, in id order, inside one read
// transaction: on the inline projections they read the ids from the status
// index and decode only the entities that can match (see walk), so that a
// command that prints a page holds a page, never the project. The function
// returns ErrStop to end the walk early (the Each function then returns
// nil); it must not call the engine, whose transaction it runs in.

// walk is how one kind of entity is listed.
type walk[T any] struct {
	bucket string                 // the entity's bucket, which the status index covers
	status string                 // only this status (the index serves it); "" for all
	maybe  func(body []byte) bool // a cheap test of the stored body; nil: decode every one
	match  func(*T) bool          // the whole filter, status included; nil: all
	list   func(project string) ([]*T, error)
}

// each calls fn with project's entities that match, in id order. On the
// committed inline projections it walks the status index's ids and decodes
// one entity at a time; on any other source (a replay in memory, a view at
// a point) it filters w.list.
func (w walk[T]) each(src source, project string, fn func(*T) error) error {
	keep := func(v *T) error {
		if w.match != nil && !w.match(v) {
			return nil
		}
		return fn(v)
	}
	if tx, ok := src.(*projstore.Tx); ok && tx.Committed() {
		ids, err := tx.IndexIDs(w.bucket, project, w.status)
		if err != nil {
			return err
		}
		return projstore.Each(tx, w.bucket, project, ids, w.maybe, keep)
	}
	all, err := w.list(project)
	for _, v := range all {
		if err == nil {
			err = keep(v)
		}
	}
	if errors.Is(err, ErrStop) {
		return nil
	}
	return err
}

// containing is a test of a stored body for walk.maybe: every non-empty
// part must appear in it. A msgpack string is its bytes after a header, so
// an entity whose field equals a part holds the part's bytes; the test
// lets through some that do not match (T-1 is in T-10), never refuses one
// that does. Nil when every part is empty.
func containing(parts ...string) func(body []byte) bool {
	var want [][]byte
	for _, p := range parts {
		if p != "" {
			want = append(want, []byte(p))
		}
	}
	if want == nil {
		return nil
	}
	return func(body []byte) bool {
		for _, w := range want {
			if !bytes.Contains(body, w) {
				return false
			}
		}
		return true
	}
}

// appendTo is an Each function's callback that appends to *out.
func appendTo[T any](out *[]T) func(T) error {
	return func(v T) error {
		*out = append(*out, v)
		return nil
	}
}
