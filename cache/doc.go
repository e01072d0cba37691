// Package cache is an LRU of decoded entities in front of reads, validated
// against the log head (DESIGN.md §5). It is never the source of truth:
// the engine fills it only after a successful read of committed state,
// and before serving from it checks that the log has not moved since, or
// evicts exactly what the newer events touched.
//
// Values are copied in and out through a clone function, so that a caller
// changing what it got can never change what the cache holds.
package cache
