package cache

import (
	"slices"
	"sync"
	"testing"
)

func cloneSlice(s []int) []int { return slices.Clone(s) }

func TestCache_GetAdd(t *testing.T) {
	t.Run("HitAtSameHead", func(t *testing.T) {
		c := New[string, []int](4, cloneSlice)
		c.Add(0, "a", []int{1})
		if v, ok := c.Get(0, "a"); !ok || !slices.Equal(v, []int{1}) {
			t.Fatalf("Get = %v, %v", v, ok)
		}
	})
	t.Run("MissAtOtherHead", func(t *testing.T) {
		c := New[string, []int](4, cloneSlice)
		c.Add(0, "a", []int{1})
		if _, ok := c.Get(1, "a"); ok {
			t.Fatal("served a value for a head the cache is not at")
		}
	})
	t.Run("AddAtOtherHeadIsDropped", func(t *testing.T) {
		c := New[string, []int](4, cloneSlice)
		c.Add(7, "a", []int{1})
		if c.Len() != 0 {
			t.Fatal("kept a value read at another head")
		}
	})
	t.Run("CopiesInAndOut", func(t *testing.T) {
		c := New[string, []int](4, cloneSlice)
		in := []int{1}
		c.Add(0, "a", in)
		in[0] = 99
		out, _ := c.Get(0, "a")
		out[0] = 42
		if v, _ := c.Get(0, "a"); v[0] != 1 {
			t.Fatalf("cached value changed through a caller's slice: %v", v)
		}
	})
	t.Run("EvictsLeastRecentlyUsed", func(t *testing.T) {
		c := New[string, []int](2, cloneSlice)
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
		c := New[string, []int](4, cloneSlice)
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
		c := New[string, []int](4, cloneSlice)
		c.Add(0, "b", []int{2})
		c.Advance(1, 3, nil) // the caller saw head 1, the cache is at 0
		if c.Len() != 0 || c.Head() != 3 {
			t.Fatalf("len %d head %d, want a purged cache at 3", c.Len(), c.Head())
		}
	})
	t.Run("PurgesWhenHeadGoesBack", func(t *testing.T) {
		c := New[string, []int](4, cloneSlice)
		c.Advance(0, 5, nil)
		c.Add(5, "b", []int{2})
		c.Advance(5, 2, nil)
		if c.Len() != 0 || c.Head() != 2 {
			t.Fatalf("len %d head %d, want a purged cache at 2", c.Len(), c.Head())
		}
	})
}

func TestCache_Concurrent(t *testing.T) {
	c := New[int, []int](64, cloneSlice)
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

func BenchmarkCache_Hit(b *testing.B) {
	c := New[string, []int](1024, cloneSlice)
	c.Add(0, "task/T-1", []int{1, 2, 3})
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := c.Get(0, "task/T-1"); !ok {
			b.Fatal("miss")
		}
	}
}
