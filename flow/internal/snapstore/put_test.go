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

// TestCompareIDs: compareIDs orders as projection.CompareIDs does.
func TestCompareIDs(t *testing.T) {
	ids := []string{"T-1", "T-2", "T-9", "T-10", "T-11", "T-99", "T-100", "T-", "T-01", "T-0", "x", "A-3", "A-20", "T-1a", "-1", "T-999999999999999999", "T-1000000000000000000"}
	for _, a := range ids {
		for _, b := range ids {
			if got, want := sign(compareIDs(a, b)), sign(projection.CompareIDs(a, b)); got != want {
				t.Errorf("compareIDs(%q, %q) = %d, want %d", a, b, got, want)
			}
		}
	}
}

func sign(n int) int { return min(max(n, -1), 1) }
