package projection

import (
	"testing"
	"unsafe"
)

func TestCarveN(t *testing.T) {
	var slab []string
	if s := carveN(&slab, 0); s == nil || len(s) != 0 {
		t.Fatalf("carveN(0) = %#v, want an empty slice that is not nil", s)
	}
	a := carveN(&slab, 2)
	b := carveN(&slab, 3)
	if cap(a) != 2 || cap(b) != 3 || len(a) != 0 || len(b) != 0 {
		t.Fatalf("caps %d, %d; lens %d, %d; want 2, 3 and 0, 0", cap(a), cap(b), len(a), len(b))
	}
	a = append(a, "x", "y", "z") // beyond its room: moves, b is left alone
	b = append(b, "1")
	if a[0] != "x" || b[0] != "1" || len(b) != 1 {
		t.Fatalf("a %v, b %v", a, b)
	}
}

func TestFoldArena_String(t *testing.T) {
	var a foldArena
	buf := []byte("hello")
	s := a.string(buf)
	buf[0] = 'j' // the arena's copy is its own
	long := a.string(make([]byte, arenaMax+1))
	if s != "hello" || len(long) != arenaMax+1 || a.string(nil) != "" {
		t.Fatalf("got %q, %d", s, len(long))
	}
}

// An empty array read through a Memory's cache (with its arena) is an
// empty slice, as without: a stored entity's "tags": [] must not become
// nil.
func TestMpReader_StringsEmptyWithArena(t *testing.T) {
	for _, seen := range []*stringCache{nil, new(stringCache), {arena: new(foldArena)}} {
		r := mpReader{b: []byte{0x90}, seen: seen}
		var ss []string
		if err := r.strings(&ss); err != nil || ss == nil || len(ss) != 0 {
			t.Fatalf("strings of [] = %#v, %v; want an empty slice that is not nil", ss, err)
		}
	}
}

// A Memory's cache of strings lets go of what it holds once its arena has
// begun clearChunks chunks since: its slots do not keep old chunks alive
// for good (a fold that drops its entities would keep them all).
func TestStringCache_LetsGoOfOldChunks(t *testing.T) {
	c := &stringCache{arena: new(foldArena)}
	old := c.get([]byte("kept-for-a-while"))
	if again := c.get([]byte("kept-for-a-while")); unsafe.StringData(again) != unsafe.StringData(old) {
		t.Fatal("a second get of the same bytes made a new copy: the cache holds nothing")
	}
	filler := make([]byte, arenaMax)
	for c.arena.chunks < clearChunks+1 {
		c.arena.string(filler)
	}
	c.get([]byte("a miss after the chunks")) // empties the slots
	for i, s := range c.slots {
		if s != "" && s != "a miss after the chunks" {
			t.Fatalf("slot %d still holds %q after %d new chunks", i, s, c.arena.chunks)
		}
	}
	if again := c.get([]byte("kept-for-a-while")); again != old || unsafe.StringData(again) == unsafe.StringData(old) {
		t.Fatalf("get after the slots were emptied = %q, a new copy of %q expected", again, old)
	}
}
