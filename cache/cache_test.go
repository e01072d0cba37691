package cache

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// printSlice is a fingerprint of a []int: its text.
func printSlice(s []int) string { return fmt.Sprint(s) }

func TestCache_GetAdd(t *testing.T) {
	t.Run("HitAtSameHead", func(t *testing.T) {
		c := New[string, []int](4, nil)
		c.Add(0, "a", []int{1})
		if v, ok := c.Get(0, "a"); !ok || !slices.Equal(v, []int{1}) {
			t.Fatalf("Get = %v, %v", v, ok)
		}
	})
	t.Run("MissAtOtherHead", func(t *testing.T) {
		c := New[string, []int](4, nil)
		c.Add(0, "a", []int{1})
		if _, ok := c.Get(1, "a"); ok {
			t.Fatal("served a value for a head the cache is not at")
		}
	})
	t.Run("AddAtOtherHeadIsDropped", func(t *testing.T) {
		c := New[string, []int](4, nil)
		c.Add(7, "a", []int{1})
		if c.Len() != 0 {
			t.Fatal("kept a value read at another head")
		}
	})
	t.Run("SharesValues", func(t *testing.T) {
		c := New[string, []int](4, nil)
		in := []int{1}
		c.Add(0, "a", in)
		if out, _ := c.Get(0, "a"); &out[0] != &in[0] {
			t.Fatal("Get returned a copy, want the value Add stored")
		}
	})
	t.Run("EvictsLeastRecentlyUsed", func(t *testing.T) {
		c := New[string, []int](2, nil)
		c.Add(0, "a", nil)
		c.Add(0, "b", nil)
		c.Get(0, "a")
		c.Add(0, "c", nil)
		if _, ok := c.Get(0, "b"); ok {
			t.Fatal("b should have been evicted")
		}
		if _, ok := c.Get(0, "a"); !ok {
			t.Fatal("a was used last and should be kept")
		}
	})
}

func TestCache_Advance(t *testing.T) {
	t.Run("EvictsOnlyTouched", func(t *testing.T) {
		c := New[string, []int](4, nil)
		c.Add(0, "a", []int{1})
		c.Add(0, "b", []int{2})
		c.Advance(0, 3, []string{"a"})
		if c.Head() != 3 {
			t.Fatalf("head = %d, want 3", c.Head())
		}
		if _, ok := c.Get(3, "a"); ok {
			t.Error("touched key a still served")
		}
		if v, ok := c.Get(3, "b"); !ok || v[0] != 2 {
			t.Error("untouched key b was evicted")
		}
	})
	t.Run("PurgesOnStaleFrom", func(t *testing.T) {
		c := New[string, []int](4, nil)
		c.Add(0, "b", []int{2})
		c.Advance(1, 3, nil) // the caller saw head 1, the cache is at 0
		if c.Len() != 0 || c.Head() != 3 {
			t.Fatalf("len %d head %d, want a purged cache at 3", c.Len(), c.Head())
		}
	})
	t.Run("PurgesWhenHeadGoesBack", func(t *testing.T) {
		c := New[string, []int](4, nil)
		c.Advance(0, 5, nil)
		c.Add(5, "b", []int{2})
		c.Advance(5, 2, nil)
		if c.Len() != 0 || c.Head() != 2 {
			t.Fatalf("len %d head %d, want a purged cache at 2", c.Len(), c.Head())
		}
	})
}

func TestCache_Concurrent(t *testing.T) {
	c := New[int, []int](64, nil)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				head := c.Head()
				c.Add(head, i%100, []int{g})
				c.Get(head, (i+g)%100)
				if i%50 == 0 {
					c.Advance(head, head+1, []int{i % 100})
				}
			}
		}()
	}
	wg.Wait()
	if c.Len() > 64 {
		t.Fatalf("len %d over the size", c.Len())
	}
}

// TestCache_Fingerprint: with a fingerprint, a value changed while the
// cache shares it makes the cache panic when it next sees the value.
func TestCache_Fingerprint(t *testing.T) {
	for _, tc := range []struct {
		name, when string
		next       func(c *Cache[string, []int])
	}{
		{"PanicsOnGet", "read again", func(c *Cache[string, []int]) { c.Get(0, "a") }},
		{"PanicsOnAdvance", "evicted", func(c *Cache[string, []int]) { c.Advance(0, 1, []string{"a"}) }},
		{"PanicsOnPurge", "evicted", func(c *Cache[string, []int]) { c.Purge(5) }},
		{"PanicsOnEviction", "evicted", func(c *Cache[string, []int]) { c.Add(0, "b", nil); c.Add(0, "c", nil) }},
		{"PanicsOnReplace", "replaced", func(c *Cache[string, []int]) { c.Add(0, "a", []int{3}) }},
		{"PanicsOnCheck", "checked", func(c *Cache[string, []int]) { c.Check() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := New[string, []int](2, printSlice)
			c.Add(0, "a", []int{1})
			v, _ := c.Get(0, "a")
			v[0] = 2 // a caller changes the shared value
			msg := panicOf(func() { tc.next(c) })
			if !strings.Contains(msg, "changed while the cache shared it") || !strings.Contains(msg, tc.when) {
				t.Fatalf("panic %q, want the cache's, noticed when %s", msg, tc.when)
			}
		})
	}
	t.Run("UnchangedValuesPass", func(t *testing.T) {
		c := New[string, []int](2, printSlice)
		c.Add(0, "a", []int{1})
		c.Get(0, "a")
		c.Add(0, "b", []int{2})
		c.Add(0, "c", []int{3}) // evicts a
		c.Add(0, "c", []int{4})
		c.Check()
		c.Purge(1)
		if c.Len() != 0 {
			t.Fatal("purge kept values")
		}
	})
}

// panicOf runs fn and returns the string it panicked with, "" if none.
func panicOf(fn func()) (msg string) {
	defer func() { msg, _ = recover().(string) }()
	fn()
	return ""
}

func BenchmarkCache_Hit(b *testing.B) {
	c := New[string, []int](1024, nil)
	c.Add(0, "task/T-1", []int{1, 2, 3})
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := c.Get(0, "task/T-1"); !ok {
			b.Fatal("miss")
		}
	}
}
