package scopediff

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/flowctl/flowctl/projection"
)

// TestPairs_OrdersAsCompareIDs: a kind's ids come as
// projection.CompareIDs orders them, odd ids included, each once, with
// the item of each side (the last of an id in a list).
func TestPairs_OrdersAsCompareIDs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ids := []string{"T-1", "T-2", "T-10", "T-01", "T-x", "T", "T-", "P-3", "A-1-2", "X-99999", "proj000", "-1", "T-1a", "T--5"}
	for range 300 {
		var a, b []item
		lastA, lastB := map[string]*item{}, map[string]*item{}
		for range r.IntN(14) {
			it := item{id: ids[r.IntN(len(ids))], v: r.Int()}
			if r.IntN(2) == 0 {
				a = append(a, it)
			} else {
				b = append(b, it)
			}
		}
		for i := range a {
			lastA[a[i].id] = &a[i]
		}
		for i := range b {
			lastB[b[i].id] = &b[i]
		}
		got := pairs(a, b)
		var want []string
		for id := range lastA {
			want = append(want, id)
		}
		for id := range lastB {
			if lastA[id] == nil {
				want = append(want, id)
			}
		}
		slices.SortFunc(want, projection.CompareIDs)
		var gotIDs []string
		for _, p := range got {
			gotIDs = append(gotIDs, p.id)
			if p.x != lastA[p.id] || p.y != lastB[p.id] {
				t.Fatalf("%s: items %v %v, want %v %v", p.id, p.x, p.y, lastA[p.id], lastB[p.id])
			}
		}
		if !slices.Equal(gotIDs, want) {
			t.Fatalf("pairs = %q, want %q", gotIDs, want)
		}
	}
}
