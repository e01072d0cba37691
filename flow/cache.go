package flow

import (
	"sync"

	"github.com/flowctl/flowctl/cache"
	"github.com/flowctl/flowctl/eventlog"
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
type Cache struct {
	lru *cache.Cache[string, any]
}

// NewCache returns a cache of up to size entities.
func NewCache(size int) *Cache {
	return &Cache{lru: cache.New[string, any](size, cloneEntity)}
}

func cloneEntity(v any) any {
	switch v := v.(type) {
	case *projection.Task:
		return v.Clone()
	case *projection.Project:
		return v.Clone()
	}
	panic("flow: cache holds only tasks and projects")
}

func taskKey(project, id string) string { return "t\x00" + projection.Key(project, id) }
func projectKey(name string) string     { return "p\x00" + name }

// sync brings the cache to the log head of tx and returns that head.
func (c *Cache) sync(tx *eventlog.Tx) (uint64, error) {
	head, _ := tx.Head()
	from := c.lru.Head()
	if from == head {
		return head, nil
	}
	if head < from || head-from > maxCatchUp {
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
func touchedBy(tx *eventlog.Tx, from, to uint64) (keys []string, purge bool, err error) {
	err = tx.ReadRange(from, to, func(r *eventlog.Record) error {
		if _, known := projection.Schema(r.Type); !known || r.Type == projection.TypeRollbackApplied {
			purge = true
			return eventlog.ErrStop
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
type heldHead struct {
	mu   sync.Mutex
	gen  uint64
	head uint64 // the head the cache is at, +1; 0: unknown
}

// current returns the known head and the generation it belongs to.
func (h *heldHead) current() (head uint64, gen uint64, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.head - 1, h.gen, h.head != 0
}

// set records head as the head the cache is at, unless a write began or
// ended since gen was read.
func (h *heldHead) set(gen, head uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gen == gen {
		h.head = head + 1
	}
}

// forget marks the head unknown: a write begins or ends, or the file is
// let go.
func (h *heldHead) forget() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.gen++
	h.head = 0
}

// cached reads one entity through the cache: from it when it holds the
// key at the log head, else with load, whose result it then keeps. Stale
// projections (another fold version) bypass the cache. While the engine
// holds the file and has not written since it last looked, the head is
// known without a transaction (see heldHead).
func cached[T any](e *Engine, key string, load func(src source) (T, error)) (T, error) {
	var out T
	if e.at != nil || e.tx != nil {
		err := e.view(func(tx *eventlog.Tx) error {
			var err error
			return e.readTx(tx, func(src source) error { out, err = load(src); return err })
		})
		return out, err
	}
	head, gen, known := e.held.current()
	if known && e.cache.lru.Head() == head {
		if v, ok := e.cache.lru.Get(head, key); ok {
			return v.(T), nil
		}
	}
	err := e.view(func(tx *eventlog.Tx) error {
		current, err := projectionsCurrent(tx)
		if err != nil {
			return err
		}
		if !current {
			return e.readTx(tx, func(src source) error { out, err = load(src); return err })
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
		if out, err = load(newTxStore(tx)); err != nil {
			return err
		}
		e.cache.lru.Add(head, key, any(out))
		return nil
	})
	return out, err
}
