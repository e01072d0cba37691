package eventlog

import "hash/maphash"

// internSlots is how many streams an internCache holds, a quarter of
// that the other strings: on the generated 1M-event file, 96% of records
// find their stream among the strings of the records before (a task's
// events come close together), and nearly all their type, actor,
// session and project.
const internSlots = 1024

// maxInterned is the longest string an internCache keeps.
const maxInterned = 128

// internCache is a cache of the strings of the records a replay decoded
// before, by a hash of their bytes: a lent record's stream, type, actor,
// session and project mostly repeat from record to record, and a hit
// costs a compare where a copy costs an allocation (and the collector's
// time). A miss only costs the copy it would have made. Streams, of
// which a file has many, have slots of their own, so that they do not
// push out the few types, actors, sessions and projects. One cache
// serves one walk, on one goroutine.
type internCache struct {
	streams [internSlots]string
	names   [internSlots / 4]string
}

// stream returns b, a stream, as a string: last (the stream of the
// record before) when b spells it, else internIn's.
func (c *internCache) stream(b []byte, last string) string {
	if string(b) == last {
		return last
	}
	return internIn(c.streams[:], b)
}

// name returns b, a type, actor, session or project, as a string: last
// (the same field of the record before) when b spells it, else
// internIn's.
func (c *internCache) name(b []byte, last string) string {
	if string(b) == last {
		return last
	}
	return internIn(c.names[:], b)
}

// internIn returns b as a string: the copy in slots when there is one,
// else a new copy. The slots are 2-way: b's pair of slots holds the last
// two strings of b's hash that were asked for, the latest first, so that
// two hot strings that share a slot do not push each other out.
func internIn(slots []string, b []byte) string {
	n := len(b)
	if n == 0 {
		return ""
	}
	if n > maxInterned {
		return string(b)
	}
	i := internHash(b) % uint64(len(slots)) &^ 1
	pair := (*[2]string)(slots[i : i+2])
	switch string(b) {
	case pair[0]:
		return pair[0]
	case pair[1]:
		pair[0], pair[1] = pair[1], pair[0]
		return pair[0]
	}
	pair[1], pair[0] = pair[0], string(b)
	return pair[0]
}

// internSeed seeds internHash: any seed will do, the slots live no
// longer than one walk.
var internSeed = maphash.MakeSeed()

// internHash is the hash of b that picks its slot.
func internHash(b []byte) uint64 { return maphash.Bytes(internSeed, b) }

// internAfter is how many records a walk decodes before it makes its
// internCache: a short walk (a cache's catch-up, a task's history) does
// not pay for the cache's 16 KiB.
const internAfter = 32

// lentStrings is the internCache of one walk, made once the walk has
// decoded internAfter records.
type lentStrings struct {
	c *internCache
	n int
}

// cache returns the walk's cache, nil before the walk is long enough.
func (l *lentStrings) cache() *internCache {
	if l.c == nil {
		if l.n++; l.n > internAfter {
			l.c = new(internCache)
		}
	}
	return l.c
}
