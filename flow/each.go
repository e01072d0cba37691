package flow

import (
	"bytes"
	"errors"

	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/projection"
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
	bucket string                        // the entity's bucket, which the status index covers
	prefix string                        // its ids' prefix (T, P, A, X)
	last   func(projection.Counters) int // the project's counter of the kind
	status string                        // only this status (the index serves it); "" for all
	maybe  func(body []byte) bool        // a cheap test of the stored body; nil: decode every one
	match  func(*T) bool                 // the whole filter, status included; nil: all
	after  int                           // only ids numbered above it (a page's cursor); 0: all
	list   func(project string) ([]*T, error)
	id     func(*T) string                      // the entity's id, for after
	get    func(project, id string) (*T, error) // one entity, for after
}

// each calls fn with project's entities that match, in id order. On the
// committed inline projections it walks the status index's ids and decodes
// one entity at a time; on any other source (a replay in memory, a view at
// a point) it filters w.list.
func (w walk[T]) each(src source, project string, fn func(*T) error) error {
	keep := func(v *T) error {
		if w.after > 0 {
			if n, _ := projection.IDNumber(w.prefix, w.id(v)); n <= w.after {
				return nil
			}
		}
		if w.match != nil && !w.match(v) {
			return nil
		}
		return fn(v)
	}
	if tx, ok := src.(*projstore.Tx); ok && tx.Committed() {
		p, err := mustProject(src, project)
		if err != nil {
			return err
		}
		if w.after > 0 {
			return w.eachAfter(tx, project, w.last(p.Counters), keep)
		}
		return projstore.Each(tx, w.bucket, project, w.status, w.prefix, w.last(p.Counters), w.maybe, keep)
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

// eachAfter is each's walk of the status index from w.after on: the ids
// up to it are passed over undecoded, the others read one at a time as
// projstore.Each reads them.
func (w walk[T]) eachAfter(tx *projstore.Tx, project string, last int, keep func(*T) error) error {
	err := tx.EachID(w.bucket, project, w.status, w.prefix, last, func(id string) error {
		if n, _ := projection.IDNumber(w.prefix, id); n <= w.after {
			return nil
		}
		v, err := w.get(project, id)
		if err != nil {
			return err
		}
		if v == nil {
			return projstore.DamagedEntry(w.bucket, projection.Key(project, id), "lists an entity the projections do not hold")
		}
		return keep(v)
	})
	if errors.Is(err, ErrStop) {
		return nil
	}
	return err
}

// The walks of the kinds the status index covers; each Each function adds
// its filter.
func taskWalk(src source) walk[projection.Task] {
	return walk[projection.Task]{bucket: projstore.BucketTasks, prefix: projection.PrefixTask, list: src.Tasks,
		last: func(c projection.Counters) int { return c.Tasks },
		id:   func(t *projection.Task) string { return t.ID }, get: src.Task}
}

func planWalk(src source) walk[projection.Plan] {
	return walk[projection.Plan]{bucket: projstore.BucketPlans, prefix: projection.PrefixPlan, list: src.Plans,
		last: func(c projection.Counters) int { return c.Plans }}
}

func approvalWalk(src source) walk[projection.Approval] {
	return walk[projection.Approval]{bucket: projstore.BucketApprovals, prefix: projection.PrefixApproval, list: src.Approvals,
		last: func(c projection.Counters) int { return c.Approvals }}
}

func execWalk(src source) walk[projection.Exec] {
	return walk[projection.Exec]{bucket: projstore.BucketExecs, prefix: projection.PrefixExec, list: src.Execs,
		last: func(c projection.Counters) int { return c.Execs }}
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
