package cache

import (
	"fmt"
	"slices"
	"testing"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// maxCatchUp is how many new events the cache reads to evict exactly what
// they touched; past it, emptying the cache is cheaper.
const maxCatchUp = 10000

// Cache is the engine's read cache of decoded tasks and projects (flow's
// Cache). It can outlive an engine (flow's Options.Cache): a long-running
// process that opens the file per operation keeps it, and it stays
// correct when other processes write in between, because every read
// first brings it to the log head (Sync), evicting what the newer events
// touched.
//
// The entities it holds are shared with every reader they were returned
// to, and are read-only (see the package doc). In a test binary
// (testing.Testing) the cache checks that: it keeps the msgpack of every
// entity it shares and panics when it finds one changed, on a later hit,
// on eviction, or on Check (which an engine calls when it closes).
type Cache struct {
	lru *LRU[Key, any]
}

// Key names a cached entity. A struct rather than a string built from
// the names, so that a lookup allocates nothing.
type Key struct {
	Kind    byte // 't' for a task, 'p' for a project
	Project string
	ID      string // the task's T-n; "" for a project
}

// TaskKey is the key of task id of project.
func TaskKey(project, id string) Key { return Key{Kind: 't', Project: project, ID: id} }

// ProjectKey is the key of project name.
func ProjectKey(name string) Key { return Key{Kind: 'p', Project: name} }

// New returns a cache of up to size entities.
//
// testing.Testing turns the check for changed entities on: it reaches
// every engine a test opens, in flow and in its callers' (the CLI, the
// MCP server), without an option that production code could set by
// mistake, and benchmarks that must not pay for it use NewChecking.
func New(size int) *Cache { return NewChecking(size, testing.Testing()) }

// NewChecking returns a cache of up to size entities that, with
// checkShared, panics when it finds that a caller changed an entity it
// shares.
func NewChecking(size int, checkShared bool) *Cache {
	var fingerprint func(any) string
	if checkShared {
		fingerprint = fingerprintEntity
	}
	return &Cache{lru: NewLRU[Key, any](size, fingerprint)}
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
		panic(fmt.Sprintf("cache: the cache holds only tasks and projects, not %T", v))
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

// Get returns the entity for key, if the cache holds it at head. It is
// shared with the cache and every other caller: it must not be changed.
func (c *Cache) Get(head uint64, key Key) (any, bool) { return c.lru.Get(head, key) }

// Add keeps v, a *projection.Task or *projection.Project loaded at head
// from committed state, for key, unless the cache has moved to another
// head. From then on v is shared and read-only; its slices lose their
// spare capacity first, so that a caller appending to one gets its own
// array.
func (c *Cache) Add(head uint64, key Key, v any) {
	share(v)
	c.lru.Add(head, key, v)
}

// Head returns the log head the cache reflects.
func (c *Cache) Head() uint64 { return c.lru.Head() }

// Len returns the number of cached entities.
func (c *Cache) Len() int { return c.lru.Len() }

// Check panics, in a test binary, when a caller changed an entity the
// cache shares (see Cache).
func (c *Cache) Check() { c.lru.Check() }

// Sync brings the cache to the log head of tx and returns that head.
func (c *Cache) Sync(tx store.Tx) (uint64, error) {
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
func touchedBy(tx store.Tx, from, to uint64) (keys []Key, purge bool, err error) {
	err = tx.Replay(from, to, func(r *store.Record) error {
		if _, known := projection.Schema(r.Type); !known || r.Type == projection.TypeRollbackApplied {
			purge = true
			return store.ErrStop
		}
		keys = append(keys, ProjectKey(r.Project))
		if kind, p, id, ok := projection.ParseStream(r.Stream); ok && kind == projection.KindTask {
			keys = append(keys, TaskKey(p, id))
		}
		return nil
	})
	return keys, purge, err
}
