package projection

import "unsafe"

// A foldArena hands out the strings a Memory's fold keeps (payload
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
//
// The arena also hands out the entities the fold makes most of (tasks,
// approvals, execs) from slabs of slabLen: one allocation per slab.
// Nothing is handed out twice, so a Memory copied by value (which shares
// its arena) never sees an entity of the other's change.
type foldArena struct {
	buf    []byte // the chunk strings are carved from: its len is what is given out
	chunks uint32 // how many chunks it has begun (stringCache empties its slots by it)

	tasks     []Task
	approvals []Approval
	execs     []Exec
	// Slices of strings (tags, deps, an exec's added vars) and of steps
	// are carved from slabs too, each with no room beyond its own: an
	// append to one moves it out rather than into its neighbour's.
	strs  []string
	steps []Step
}

// slabLen is how many entities of a kind a slab holds.
const slabLen = 32

// carve returns a new zero entity from *slab, making a new slab when it
// is used up.
func carve[V any](slab *[]V) *V {
	s := *slab
	if len(s) == cap(s) {
		s = make([]V, 0, slabLen)
	}
	s = s[:len(s)+1]
	*slab = s
	return &s[len(s)-1]
}

// arenaChunk is the size of a chunk, and arenaMax the longest string an
// arena copies: a longer one gets an allocation of its own, so that a
// chunk wastes at most arenaMax bytes at its end.
const (
	arenaChunk = 32 << 10
	arenaMax   = 1 << 10
)

// carveN returns an empty slice, never nil, with room for n: from *slab
// when n is small, else of its own.
func carveN[V any](slab *[]V, n int) []V {
	if n == 0 || n > slabLen/4 {
		return make([]V, 0, n) // (of size 0: no allocation)
	}
	s := *slab
	if cap(s)-len(s) < n {
		s = make([]V, 0, slabLen*4)
	}
	start := len(s)
	*slab = s[:start+n]
	return s[start : start : start+n]
}

// string returns a copy of b.
func (a *foldArena) string(b []byte) string {
	n := len(b)
	switch {
	case n == 0:
		return ""
	case n > arenaMax:
		return string(b)
	case cap(a.buf)-len(a.buf) < n:
		a.buf = make([]byte, 0, arenaChunk)
		a.chunks++
	}
	start := len(a.buf)
	a.buf = append(a.buf, b...)
	return unsafe.String(&a.buf[start], n)
}

// key returns Key(project, id), made in the arena.
func (a *foldArena) key(project, id string) string {
	var b keyBuf
	return a.string(b.key(project, id))
}

// lent returns b as a string without a copy, for a callee that reads it
// and keeps none of it (not the string, not a substring of it), while b
// stays as it is: a payload the replay lends the fold, say.
func lent(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
