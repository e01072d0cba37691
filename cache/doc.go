// Package cache is the engine's read cache: an LRU of decoded entities
// in front of reads, validated against the log head (DESIGN.md §5). It is
// never the source of truth: the engine fills it only after a successful
// read of committed state, and before serving from it brings it to the
// log head (Cache.Sync), evicting exactly what the newer events touched,
// or everything after a rollback, an event this binary does not know, or
// more than a few thousand events.
//
// # Layers
//
// LRU is the generic part: values by key, tagged with the head they were
// read at. Cache holds the engine's tasks and projects in one, by Key,
// and knows which keys an event touches. Held is what an engine knows of
// the head while it holds the file, so that a hit needs no transaction.
// It imports flow/store and projection, never flow: flow's Cache and
// NewCache are this package's, and flow keeps the reads through it.
//
// # Values are shared
//
// A hit returns the value that was added, to every caller, so that a hit
// costs a lookup and nothing else. Values are therefore read-only once
// added; a caller that wants to change one changes a copy. For tests,
// NewLRU takes a fingerprint function with which the cache checks that
// rule, and panics when it finds a value changed; New turns that on for
// entities in a test binary (testing.Testing).
//
// # Concurrency
//
// LRU, Cache and Held are safe for concurrent use. A Cache may be shared
// by engines that open the same file in turn (flow's Options.Cache).
package cache
