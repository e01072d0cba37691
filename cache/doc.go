// Package cache is an LRU of decoded entities in front of reads, validated
// against the log head (DESIGN.md §5). It is never the source of truth:
// the engine fills it only after a successful read of committed state,
// and before serving from it checks that the log has not moved since, or
// evicts exactly what the newer events touched.
//
// Values are shared, not copied: a hit returns the value that was added,
// to every caller, so that a hit costs a lookup and nothing else. Values
// are therefore read-only once added; a caller that wants to change one
// changes a copy. For tests, New takes a fingerprint function with which
// the cache checks that rule: it panics when it finds a value changed.
package cache
