package eventlog

import "encoding/binary"

// internSlots is how many strings an internCache holds: on the generated
// 1M-event file, 256 slots already find the stream of 95% of records
// among the strings of the records before (a task's events come close
// together), and a record's type, actor, session and project nearly
// always.
const internSlots = 1024

// maxInterned is the longest string an internCache keeps.
const maxInterned = 128

// internCache is a direct-mapped cache of the strings of the records a
// replay decoded before, by a hash of their bytes: a lent record's
// stream, type, actor, session and project mostly repeat from record to
// record, and a hit costs a compare where a copy costs an allocation
// (and the collector's time). A miss only costs the copy it would have
// made. One cache serves one walk, on one goroutine.
type internCache [internSlots]string

// get returns b as a string: the cached copy when there is one, else a
// new copy, which then takes b's slot.
func (c *internCache) get(b []byte) string {
	n := len(b)
	if n == 0 {
		return ""
	}
	if n > maxInterned {
		return string(b)
	}
	slot := &c[internHash(b)%internSlots]
	if *slot == string(b) {
		return *slot
	}
	s := string(b)
	*slot = s
	return s
}

// internHash mixes the length and the first and last 8 bytes of b (a
// stream's id is at its end, an event type's kind at its start).
func internHash(b []byte) uint64 {
	n := len(b)
	var head, tail uint64
	if n >= 8 {
		head, tail = binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[n-8:])
	} else {
		for i, x := range b {
			head |= uint64(x) << (8 * i)
		}
	}
	h := (head*0x9e3779b97f4a7c15 ^ tail ^ uint64(n)) * 0xbf58476d1ce4e5b9
	return h >> 40
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
