package flow

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/flowctl/flowctl/cache"
	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// DefaultCacheSize is the number of entities a Cache holds.
const DefaultCacheSize = 4096

// maxCatchUp is how many new events the cache reads to evict exactly what
// they touched; past it, emptying the cache is cheaper.
const maxCatchUp = 10000

// Cache is the engine's read cache of decoded tasks and projects. It can
// outlive an Engine (Options.Cache): a long-running process that opens
// the file per operation keeps it, and it stays correct when other
// processes write in between, because every read first brings it to the
// log head, evicting what the newer events touched.
//
// The entities it holds are shared with every reader they were returned
// to, and are read-only (see the package doc). In a test binary
// (testing.Testing) the cache checks that: it keeps the msgpack of every
// entity it shares and panics when it finds one changed, on a later hit,
// on eviction, or when an engine using it closes.
type Cache struct {
	lru *cache.Cache[cacheKey, any]
}

// cacheKey names a cached entity. A struct rather than a string built
// from the names, so that a lookup allocates nothing.
type cacheKey struct {
	kind    byte // 't' for a task, 'p' for a project
	project string
	id      string // the task's T-n; "" for a project
}

func taskKey(project, id string) cacheKey { return cacheKey{kind: 't', project: project, id: id} }
func projectKey(name string) cacheKey     { return cacheKey{kind: 'p', project: name} }

// NewCache returns a cache of up to size entities.
//
// testing.Testing turns the check for changed entities on: it reaches
// every engine a test opens, in this package and in its callers' (the
// CLI, the MCP server), without an option that production code could
// set by mistake, and benchmarks that must not pay for it use newCache.
func NewCache(size int) *Cache { return newCache(size, testing.Testing()) }

// newCache returns a cache of up to size entities that, with checkShared,
// panics when it finds that a caller changed an entity it shares.
func newCache(size int, checkShared bool) *Cache {
	var fingerprint func(any) string
	if checkShared {
		fingerprint = fingerprintEntity
	}
	return &Cache{lru: cache.New[cacheKey, any](size, fingerprint)}
}

// fingerprintEntity returns the msgpack of a cached entity: all of it
// that a caller could change.
func fingerprintEntity(v any) string {
	var s projection.Scope
	switch v := v.(type) {
	case *projection.Task:
		s.Tasks = []*projection.Task{v}
	case *projection.Project:
		s.Project = v
	default:
		panic(fmt.Sprintf("flow: the cache holds only tasks and projects, not %T", v))
	}
	return string(projection.AppendScope(nil, &s))
}

// share readies a freshly loaded entity for the cache: its slices get no
// spare capacity, so that a caller appending to one gets a new array
// rather than writing into the one it shares with other readers.
func share(v any) {
	if t, ok := v.(*projection.Task); ok {
		t.Tags, t.Deps = slices.Clip(t.Tags), slices.Clip(t.Deps)
		t.Steps, t.PendingApprovals = slices.Clip(t.Steps), slices.Clip(t.PendingApprovals)
	}
}

// sync brings the cache to the log head of tx and returns that head.
func (c *Cache) sync(tx store.Tx) (uint64, error) {
	head, _ := tx.Head()
	from := c.lru.Head()
	if from == head {
		return head, nil
	}
	// An empty cache has nothing to evict: reading the events would only
	// cost time (a CLI command's first write read up to maxCatchUp of
	// them) and touch pages that the command does not need.
	if head < from || head-from > maxCatchUp || c.lru.Len() == 0 {
		c.lru.Purge(head)
		return head, nil
	}
	touched, purge, err := touchedBy(tx, from+1, head)
	if err != nil {
		return 0, err
	}
	if purge {
		c.lru.Purge(head)
	} else {
		c.lru.Advance(from, head, touched)
	}
	return head, nil
}

// touchedBy lists the cache keys the events from..to may have changed: the
// task of a task stream and the project of any event. A rollback, or an
// event the fold does not know, may touch anything: purge.
func touchedBy(tx store.Tx, from, to uint64) (keys []cacheKey, purge bool, err error) {
	err = tx.Replay(from, to, func(r *store.Record) error {
		if _, known := projection.Schema(r.Type); !known || r.Type == projection.TypeRollbackApplied {
			purge = true
			return store.ErrStop
		}
		keys = append(keys, projectKey(r.Project))
		if kind, p, id, ok := projection.ParseStream(r.Stream); ok && kind == projection.KindTask {
			keys = append(keys, taskKey(p, id))
		}
		return nil
	})
	return keys, purge, err
}

// heldHead is what an engine knows about the log head without a read
// transaction. While the engine holds the file, no other process can
// append: its exclusive lock (or, read-only, its shared lock) keeps every
// other writer out. So the head the cache was last brought to stays the
// head until this engine writes, and a cache hit needs no transaction.
// Every write bumps gen before and after it commits, so a read that saw
// an older head never records it as current.
//
// The pair (gen, head) is one immutable heldState behind an atomic
// pointer: a hit reads it with one load, and set and forget replace it
// with compare-and-swap, so that set still records its head only if gen
// is what the read saw before it began.
type heldHead struct {
	state atomic.Pointer[heldState] // nil: gen 0, head unknown
}

type heldState struct {
	gen   uint64
	head  uint64
	known bool
}

// current returns the known head and the generation it belongs to.
func (h *heldHead) current() (head uint64, gen uint64, ok bool) {
	s := h.state.Load()
	if s == nil {
		return 0, 0, false
	}
	return s.head, s.gen, s.known
}

// set records head as the head the cache is at, unless a write began or
// ended since gen was read.
func (h *heldHead) set(gen, head uint64) {
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

// forget marks the head unknown: a write begins or ends, or the file is
// let go.
func (h *heldHead) forget() {
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

// cached reads one entity through the cache: from it when it holds the
// key at the log head, else with load, whose result it then keeps. Stale
// projections (another fold version) bypass the cache. While the engine
// holds the file and has not written since it last looked, the head is
// known without a transaction (see heldHead), and a hit is a lookup: the
// entity returned is the cache's own, shared and read-only.
func cached[T any](e *Engine, key cacheKey, load func(src source, key cacheKey) (T, error)) (T, error) {
	if e.at == nil && e.tx == nil {
		if head, _, known := e.held.current(); known {
			if v, ok := e.cache.lru.Get(head, key); ok {
				return v.(T), nil
			}
		}
	}
	return cachedMiss(e, key, load)
}

// ownCopy is a deep copy of an entity a load returned from a batch's
// shared projections (batchRead), which the caller then owns.
func ownCopy[T any](v T) (T, error) {
	c, ok := any(v).(interface{ Clone() T })
	if !ok {
		return v, fmt.Errorf("flow: %T is not a projected entity", v)
	}
	return c.Clone(), nil
}

// cachedMiss is cached past a miss: it reads in a transaction. In a
// Batch, it copies the entity from the batch's projections (batchRead).
func cachedMiss[T any](e *Engine, key cacheKey, load func(src source, key cacheKey) (T, error)) (T, error) {
	var out T
	if ok, err := e.batchRead(func(src source) error {
		v, err := load(src, key)
		if err == nil {
			out, err = ownCopy(v)
		}
		return err
	}); ok {
		return out, err
	}
	if e.at != nil || e.tx != nil {
		err := e.view(func(tx store.Tx) error {
			var err error
			return e.readTx(tx, func(src source) error { out, err = load(src, key); return err })
		})
		return out, err
	}
	_, gen, _ := e.held.current() // before the transaction begins
	err := e.view(func(tx store.Tx) error {
		current, err := projstore.Current(tx)
		if err != nil {
			return err
		}
		if !current {
			return e.readTx(tx, func(src source) error { out, err = load(src, key); return err })
		}
		head, err := e.cache.sync(tx)
		if err != nil {
			return err
		}
		e.held.set(gen, head)
		if v, ok := e.cache.lru.Get(head, key); ok {
			out = v.(T)
			return nil
		}
		if out, err = load(projstore.NewTx(tx), key); err != nil {
			return err
		}
		share(any(out))
		e.cache.lru.Add(head, key, any(out))
		return nil
	})
	return out, err
}
