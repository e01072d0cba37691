package cache

import (
	"fmt"
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Cache is an LRU of values of type V by key K, tagged with the log head
// (the seq of the last event) its contents reflect. It is safe for
// concurrent use.
//
// Values are shared, not copied: Get returns the value Add stored, to
// every caller. Nobody may change a value once it was added.
type Cache[K comparable, V any] struct {
	mu   sync.Mutex
	lru  *simplelru.LRU[K, V]
	head uint64
	// fingerprint, when set, checks that shared values stay unchanged:
	// prints holds the fingerprint of each value when it was added.
	fingerprint func(V) string
	prints      map[K]string
}

// New returns a cache of at most size entries.
//
// fingerprint, when not nil, turns on a check for tests: it must return
// a digest of everything in a value that a caller could change (its
// encoding, say). The cache keeps the digest of each value it is given
// and compares it on every hit, on eviction and on Check, and panics when
// it changed: someone modified a value the cache shares.
func New[K comparable, V any](size int, fingerprint func(V) string) *Cache[K, V] {
	c := &Cache[K, V]{fingerprint: fingerprint}
	var onEvict simplelru.EvictCallback[K, V]
	if fingerprint != nil {
		c.prints = make(map[K]string)
		onEvict = func(k K, v V) {
			c.verify(k, v, "evicted")
			delete(c.prints, k)
		}
	}
	l, err := simplelru.NewLRU(max(size, 1), onEvict)
	if err != nil {
		panic(err) // only for size <= 0, excluded above
	}
	c.lru = l
	return c
}

// verify panics when v no longer has the fingerprint it was added with.
func (c *Cache[K, V]) verify(k K, v V, when string) {
	if c.fingerprint(v) != c.prints[k] {
		panic(fmt.Sprintf("cache: the value for %v changed while the cache shared it (noticed when %s): "+
			"values from the cache are read-only; clone one to change it. Now: %+v", k, when, v))
	}
}

// Head returns the log head the cache reflects.
func (c *Cache[K, V]) Head() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.head
}

// Get returns the value for key, if the cache holds it at head. A cache
// at another head holds nothing for the caller. The value is shared with
// the cache and every other caller: it must not be changed.
func (c *Cache[K, V]) Get(head uint64, key K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if head != c.head {
		var zero V
		return zero, false
	}
	v, ok := c.lru.Get(key)
	if ok && c.fingerprint != nil {
		c.verify(key, v, "read again")
	}
	return v, ok
}

// Add stores v for key, read at head; from then on v is shared and must
// not be changed. Values read at another head than the cache's are not
// kept.
func (c *Cache[K, V]) Add(head uint64, key K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if head != c.head {
		return
	}
	if c.fingerprint != nil {
		if old, ok := c.lru.Peek(key); ok {
			c.verify(key, old, "replaced")
		}
		c.prints[key] = c.fingerprint(v)
	}
	c.lru.Add(key, v)
}

// Advance moves the cache from its head to head, evicting the keys that
// the events in between touched. from must be the cache's current head
// (as returned by Head); if another Advance happened meanwhile, the cache
// is purged instead, since it cannot know what the other one saw.
func (c *Cache[K, V]) Advance(from, head uint64, touched []K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if from != c.head || head < from {
		c.lru.Purge()
		c.head = head
		return
	}
	for _, k := range touched {
		c.lru.Remove(k)
	}
	c.head = head
}

// Purge empties the cache and sets its head.
func (c *Cache[K, V]) Purge(head uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Purge()
	c.head = head
}

// Check verifies every value the cache holds against its fingerprint,
// when New was given one, and panics at the first that changed.
func (c *Cache[K, V]) Check() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fingerprint == nil {
		return
	}
	for _, k := range c.lru.Keys() {
		v, _ := c.lru.Peek(k)
		c.verify(k, v, "checked")
	}
}

// Len returns the number of cached values.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}
