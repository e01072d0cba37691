package scopediff

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/projection"
)

// TestSortedKeys_OrdersAsCompareIDs: the keys come by kind, then by id as
// projection.CompareIDs orders them, odd ids included.
func TestSortedKeys_OrdersAsCompareIDs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	kinds := []string{"project", "plan", "task", "approval", "exec", "other"}
	ids := []string{"T-1", "T-2", "T-10", "T-01", "T-x", "T", "T-", "P-3", "A-1-2", "X-99999", "proj000", "-1", "T-1a"}
	for range 200 {
		a, b := map[string]item{}, map[string]item{}
		for range r.IntN(12) {
			k := kinds[r.IntN(len(kinds))] + "\x00" + ids[r.IntN(len(ids))]
			if r.IntN(2) == 0 {
				a[k] = item{}
			} else {
				b[k] = item{}
			}
		}
		got := sortedKeys(a, b)
		want := slices.Collect(func(yield func(string) bool) {
			for k := range a {
				yield(k)
			}
			for k := range b {
				if _, ok := a[k]; !ok {
					yield(k)
				}
			}
		})
		slices.SortFunc(want, func(x, y string) int {
			kx, ix, _ := strings.Cut(x, "\x00")
			ky, iy, _ := strings.Cut(y, "\x00")
			if c := strings.Compare(kindOrder[kx], kindOrder[ky]); c != 0 {
				return c
			}
			return projection.CompareIDs(ix, iy)
		})
		if !slices.Equal(got, want) {
			t.Fatalf("sortedKeys = %q, want %q", got, want)
		}
	}
}
