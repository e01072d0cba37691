package cache

import (
	"sync"
	"testing"
)

func TestHeld(t *testing.T) {
	t.Run("UnknownAtFirst", func(t *testing.T) {
		var h Held
		if _, _, ok := h.Current(); ok {
			t.Fatal("a new Held knows a head")
		}
	})
	t.Run("SetRecords", func(t *testing.T) {
		var h Held
		_, gen, _ := h.Current()
		h.Set(gen, 7)
		if head, _, ok := h.Current(); !ok || head != 7 {
			t.Fatalf("current = %d, %v; want 7, true", head, ok)
		}
	})
	t.Run("SetAfterForgetIsRefused", func(t *testing.T) {
		var h Held
		_, gen, _ := h.Current()
		h.Set(gen, 7)
		_, gen, _ = h.Current() // a read begins
		h.Forget()              // a write begins...
		h.Forget()              // ...and ends
		h.Set(gen, 7)           // the read saw the head before the write
		if _, _, ok := h.Current(); ok {
			t.Fatal("a read that began before a write recorded its head as current")
		}
		_, gen, _ = h.Current()
		h.Set(gen, 8)
		if head, _, ok := h.Current(); !ok || head != 8 {
			t.Fatalf("current = %d, %v; want 8, true", head, ok)
		}
	})
	t.Run("ConcurrentForgetsAllCount", func(t *testing.T) {
		var h Held
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(2)
			go func() { // a reader records heads
				defer wg.Done()
				for i := range 1000 {
					_, gen, _ := h.Current()
					h.Set(gen, uint64(g*1000+i))
				}
			}()
			go func() { // a writer forgets before and after each commit
				defer wg.Done()
				for range 1000 {
					h.Forget()
					h.Forget()
				}
			}()
		}
		wg.Wait()
		_, gen, _ := h.Current()
		if want := uint64(4 * 1000 * 2); gen != want {
			t.Fatalf("gen %d after %d forgets", gen, want)
		}
	})
}
