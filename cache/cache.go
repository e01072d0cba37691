package cache

import (
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"
)

// Cache is an LRU of values of type V by key K, tagged with the log head
// (the seq of the last event) its contents reflect. It is safe for
// concurrent use.
type Cache[K comparable, V any] struct {
	mu    sync.Mutex
	lru   *lru.Cache[K, V]
	head  uint64
	clone func(V) V
}

// New returns a cache of at most size entries. clone copies a value deeply
// enough that the copy shares nothing mutable with the original.
func New[K comparable, V any](size int, clone func(V) V) *Cache[K, V] {
	l, err := lru.New[K, V](max(size, 1))
	if err != nil {
		panic(err) // only for size <= 0, excluded above
	}
	return &Cache[K, V]{lru: l, clone: clone}
}

// Head returns the log head the cache reflects.
func (c *Cache[K, V]) Head() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.head
}

// Get returns a copy of the value for key, if the cache holds it at head.
// A cache at another head holds nothing for the caller.
func (c *Cache[K, V]) Get(head uint64, key K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var zero V
	if head != c.head {
		return zero, false
	}
	v, ok := c.lru.Get(key)
	if !ok {
		return zero, false
	}
	return c.clone(v), true
}

// Add stores a copy of v for key, read at head. Values read at another
// head than the cache's are not kept.
func (c *Cache[K, V]) Add(head uint64, key K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if head == c.head {
		c.lru.Add(key, c.clone(v))
	}
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

// Len returns the number of cached values.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}
