package eventlog

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"
)

func TestInternCache_Stream(t *testing.T) {
	var c internCache
	t.Run("Equal", func(t *testing.T) {
		for i := range 5000 { // more strings than slots: collisions replace
			b := []byte(fmt.Sprintf("task:proj%03d/T-%d", i%10, i))
			if got := c.stream(b, ""); got != string(b) {
				t.Fatalf("get(%q) = %q", b, got)
			}
		}
		if got := c.stream(nil, ""); got != "" {
			t.Fatalf("get(nil) = %q", got)
		}
	})
	t.Run("Hit", func(t *testing.T) {
		b := []byte("task.context_merged")
		first := c.stream(b, "")
		b[0] = 'X' // the cached string is a copy: b may change
		b[0] = 't'
		if again := c.stream(b, ""); unsafe.StringData(again) != unsafe.StringData(first) {
			t.Fatal("a repeated string is copied again")
		}
		if first != "task.context_merged" {
			t.Fatalf("the cached string changed with its source: %q", first)
		}
	})
	t.Run("Long", func(t *testing.T) {
		long := []byte(strings.Repeat("x", maxInterned+1))
		if a, b := c.stream(long, ""), c.stream(long, ""); a != string(long) || b != a || unsafe.StringData(a) == unsafe.StringData(b) {
			t.Fatal("a long string is cached or wrong")
		}
	})
}

func TestLentStrings_Cache(t *testing.T) {
	var l lentStrings
	for i := range internAfter {
		if l.cache() != nil {
			t.Fatalf("record %d has a cache: want none before %d", i+1, internAfter+1)
		}
	}
	if c := l.cache(); c == nil || l.cache() != c {
		t.Fatal("a long walk gets no cache, or a new one per record")
	}
}

// TestInternCache_Spread checks that streams that differ in their last
// characters only (a project's task streams) spread over the slots.
func TestInternCache_Spread(t *testing.T) {
	used := map[uint64]bool{}
	for i := range 1000 {
		used[internHash([]byte(fmt.Sprintf("task:proj003/T-%d", 1000+i)))%internSlots] = true
	}
	if len(used) < 500 {
		t.Fatalf("1000 streams take %d of %d slots", len(used), internSlots)
	}
}
