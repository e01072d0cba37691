package flow

import (
	"github.com/flowctl/flowctl/cache"
	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
)

// DefaultCacheSize is the number of entities a Cache holds.
const DefaultCacheSize = 4096

// Cache is the engine's read cache of decoded tasks and projects
// (package cache). It can outlive an Engine (Options.Cache): a
// long-running process that opens the file per operation keeps it, and
// it stays correct when other processes write in between, because every
// read first brings it to the log head, evicting what the newer events
// touched.
//
// The entities it holds are shared with every reader they were returned
// to, and are read-only (see the package doc). In a test binary
// (testing.Testing) the cache checks that: it keeps the msgpack of every
// entity it shares and panics when it finds one changed, on a later hit,
// on eviction, or when an engine using it closes.
type Cache = cache.Cache

// NewCache returns a cache of up to size entities (cache.New: in a test
// binary, it checks that no caller changes an entity it shares).
func NewCache(size int) *Cache { return cache.New(size) }

// cached reads one entity through the cache: from it when it holds the
// key at the log head, else with load, whose result it then keeps. Stale
// projections (another fold version) bypass the cache. While the engine
// holds the file and has not written since it last looked, the head is
// known without a transaction (see cache.Held), and a hit is a lookup:
// the entity returned is the cache's own, shared and read-only.
func cached[T any](e *Engine, key cache.Key, load func(src source, key cache.Key) (T, error)) (T, error) {
	if e.at == nil && e.tx == nil {
		if head, _, known := e.held.Current(); known {
			if v, ok := e.cache.Get(head, key); ok {
				return v.(T), nil
			}
		}
	}
	return cachedMiss(e, key, load)
}

// cachedMiss is cached past a miss: it reads in a transaction.
func cachedMiss[T any](e *Engine, key cache.Key, load func(src source, key cache.Key) (T, error)) (T, error) {
	var out T
	if e.at != nil || e.tx != nil {
		err := e.view(func(tx store.Tx) error {
			var err error
			return e.readTx(tx, func(src source) error { out, err = load(src, key); return err })
		})
		return out, err
	}
	_, gen, _ := e.held.Current() // before the transaction begins
	err := e.view(func(tx store.Tx) error {
		current, err := projstore.Current(tx)
		if err != nil {
			return err
		}
		if !current {
			return e.readTx(tx, func(src source) error { out, err = load(src, key); return err })
		}
		head, err := e.cache.Sync(tx)
		if err != nil {
			return err
		}
		e.held.Set(gen, head)
		if v, ok := e.cache.Get(head, key); ok {
			out = v.(T)
			return nil
		}
		if out, err = load(projstore.NewTx(tx), key); err != nil {
			return err
		}
		e.cache.Add(head, key, any(out))
		return nil
	})
	return out, err
}
