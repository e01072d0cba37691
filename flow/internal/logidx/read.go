package logidx

import (
	"sort"

	"github.com/flowctl/flowctl/flow/store"
)

// Query names the lists a walk intersects. Zero fields select nothing.
type Query struct {
	Project string                // with Types: the project's lists of those types
	Types   func(typ string) bool // the types wanted (a pattern); nil: any
	Actor   string
	Session string
}

// Serves reports whether q names a list, so that Open can walk it.
func (q *Query) Serves() bool { return q.Types != nil || q.Actor != "" || q.Session != "" }

// Cursor walks the seqs of the events a Query selects, newest first.
type Cursor interface {
	// Le returns the largest matching seq at most x, 0 if there is none.
	// Errors: a *store.CorruptionError for a malformed chunk.
	Le(x uint64) (uint64, error)
}

// Open returns the cursor over q's lists in tx; valid in tx only. q must
// serve (Query.Serves).
func Open(tx store.Tx, q Query) (Cursor, error) {
	var all intersection
	if q.Types != nil {
		var types union
		err := tx.Scan(Bucket, []byte{kindTypeName}, func(k, _ []byte) error {
			typ := string(k[1:])
			if !q.Types(typ) {
				return nil
			}
			if q.Project != "" {
				types = append(types, newList(tx, kindProjectType, projectTerm(q.Project, typ)))
			} else {
				types = append(types, newList(tx, kindType, typ))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		all = append(all, types)
	}
	if q.Actor != "" {
		all = append(all, newList(tx, kindActor, q.Actor))
	}
	if q.Session != "" {
		all = append(all, newList(tx, kindSession, q.Session))
	}
	if len(all) == 1 {
		return all[0], nil
	}
	return all, nil
}

// list is one posting list, with its pending seqs and the chunk it read
// last.
type list struct {
	tx      store.Tx
	prefix  []byte
	pending []uint64 // ascending: the seqs past the chunks'
	read    bool     // pending is read
	chunk   []uint64 // ascending; empty: none read yet
}

func newList(tx store.Tx, kind byte, term string) *list {
	return &list{tx: tx, prefix: listPrefix(kind, term)}
}

// Le reads the chunk that holds x's place unless it has it already: the
// walk goes down, so the chunk read last serves every x from its first
// seq on.
func (l *list) Le(x uint64) (uint64, error) {
	if x == 0 {
		return 0, nil
	}
	if !l.read {
		v, err := l.tx.Get(PendingBucket, l.prefix)
		if err != nil {
			return 0, err
		}
		if v != nil {
			if l.pending, err = decodePending(nil, l.prefix, v); err != nil {
				return 0, err
			}
		}
		l.read = true
	}
	if len(l.pending) > 0 && l.pending[0] <= x {
		i := sort.Search(len(l.pending), func(i int) bool { return l.pending[i] > x })
		return l.pending[i-1], nil
	}
	if len(l.chunk) == 0 || l.chunk[0] > x {
		k, v, err := l.tx.Last(Bucket, l.prefix, chunkKey(l.prefix, x))
		if err != nil || k == nil {
			l.chunk = l.chunk[:0]
			return 0, err
		}
		if l.chunk, err = decodeChunk(l.chunk[:0], l.prefix, k, v); err != nil {
			return 0, err
		}
	}
	i := sort.Search(len(l.chunk), func(i int) bool { return l.chunk[i] > x })
	return l.chunk[i-1], nil
}

// union matches the seqs of any of its cursors.
type union []Cursor

func (u union) Le(x uint64) (uint64, error) {
	var best uint64
	for _, c := range u {
		s, err := c.Le(x)
		if err != nil {
			return 0, err
		}
		best = max(best, s)
	}
	return best, nil
}

// intersection matches the seqs of all its cursors: each in turn lowers
// the bound to its own largest seq under it until they agree.
type intersection []Cursor

func (in intersection) Le(x uint64) (uint64, error) {
	if len(in) == 0 {
		return 0, nil
	}
	for agreed := 0; agreed < len(in); {
		agreed = 0
		for _, c := range in {
			s, err := c.Le(x)
			if err != nil || s == 0 {
				return 0, err
			}
			if s == x {
				agreed++
			}
			x = s
		}
	}
	return x, nil
}
