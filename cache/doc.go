// Package cache is an LRU of decoded entities in front of reads, validated
// against the log head (DESIGN.md §5). It is never the source of truth.
package cache
