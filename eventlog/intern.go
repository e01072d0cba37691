package eventlog

import "encoding/binary"

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
	i := internHash(b) & uint64(len(slots)-1) &^ 1 // len(slots) is a power of 2
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

// internHash is the hash of b that picks its slot: of its length and
// its first and last eight bytes (four, or three bytes, when it is
// shorter), which is where the strings of a log differ (a project name
// at the start, an id at the end), mixed. It costs two loads and three
// multiplications where a hash of every byte costs a loop, and no
// division picks the slot; strings that differ only in their middle
// share a slot, which costs a miss, never a wrong string.
func internHash(b []byte) uint64 {
	n := len(b)
	var head, tail uint64
	switch {
	case n >= 8:
		head, tail = binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[n-8:])
	case n >= 4:
		head, tail = uint64(binary.LittleEndian.Uint32(b)), uint64(binary.LittleEndian.Uint32(b[n-4:]))
	case n > 0:
		head = uint64(b[0]) | uint64(b[n/2])<<8 | uint64(b[n-1])<<16
	}
	// murmur3's finalizer, so that every bit of the result, low ones
	// included, depends on every bit of head and tail.
	h := (head^uint64(n))*0x9e3779b97f4a7c15 ^ tail
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	return h ^ h>>33
}

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
