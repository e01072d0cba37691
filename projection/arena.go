package projection

import "unsafe"

// A strArena hands out the strings a Memory's fold keeps (payload
// strings its cache of strings misses, entity keys) carved from chunks
// of arenaChunk bytes: one allocation per chunk rather than one per
// string, and for the garbage collector one object to mark instead of
// hundreds. A replay keeps most of what it reads (titles, ids, exec
// outputs) for as long as its state lives; the price is that a chunk
// lives as long as any string in it does, so a string the state no
// longer holds (a step note written over) is freed with its chunk only.
//
// The bytes of a chunk are written once, when a string is carved, and
// never again: a new string always goes to bytes no string was given,
// so each string is immutable as Go requires. One arena serves the folds
// of one goroutine at a time, as the Memory that holds it does.
type strArena struct {
	buf []byte // the chunk strings are carved from: its len is what is given out
}

// arenaChunk is the size of a chunk, and arenaMax the longest string an
// arena copies: a longer one gets an allocation of its own, so that a
// chunk wastes at most arenaMax bytes at its end.
const (
	arenaChunk = 32 << 10
	arenaMax   = 1 << 10
)

// string returns a copy of b.
func (a *strArena) string(b []byte) string {
	n := len(b)
	switch {
	case n == 0:
		return ""
	case n > arenaMax:
		return string(b)
	case cap(a.buf)-len(a.buf) < n:
		a.buf = make([]byte, 0, arenaChunk)
	}
	start := len(a.buf)
	a.buf = append(a.buf, b...)
	return unsafe.String(&a.buf[start], n)
}

// key returns Key(project, id), made in the arena.
func (a *strArena) key(project, id string) string {
	var b keyBuf
	return a.string(b.key(project, id))
}
