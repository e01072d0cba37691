package snapstore

import (
	"slices"
	"testing"

	"github.com/flowctl/flowctl/projection"
)

// TestSortByID: lists in key order (as a bucket lists them) come out in
// id order, by grouping or, for irregular ids, by comparison.
func TestSortByID(t *testing.T) {
	for _, ids := range [][]string{
		{"T-1", "T-10", "T-100", "T-11", "T-2", "T-20", "T-3", "T-9", "T-99"},
		{"A-1", "A-10", "A-2", "T-1", "T-10", "T-2"},
		{"T-", "T-01", "T-1", "T-10", "T-2", "x"}, // irregular: sorted by comparison
		{},
	} {
		l := make([]rawEntity, len(ids))
		for i, id := range ids {
			l[i] = rawEntity{id: id}
		}
		got := sortByID(l)
		want := slices.Clone(ids)
		slices.SortFunc(want, projection.CompareIDs)
		for i := range want {
			if got[i].id != want[i] {
				t.Fatalf("sortByID(%q) = %v, want %q", ids, got, want)
			}
		}
	}
}
