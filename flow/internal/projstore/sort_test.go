package projstore

import (
	"fmt"
	"slices"
	"testing"

	"github.com/flowctl/flowctl/projection"
	"pgregory.net/rapid"
)

// TestSortByID: sortByID orders as projection.CompareIDs does, odd ids
// (no number, a number that overflows, other prefixes) included.
func TestSortByID(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ids := rapid.SliceOf(rapid.OneOf(
			rapid.Custom(func(t *rapid.T) string {
				return fmt.Sprintf("%s-%d", rapid.SampledFrom([]string{"X", "T", "A"}).Draw(t, "prefix"), rapid.IntRange(0, 200).Draw(t, "n"))
			}),
			rapid.SampledFrom([]string{"X", "X-", "X-01", "X-1", "X-99999999999999999999", "-5", "X-1x"}),
		)).Draw(t, "ids")
		items := make([]*projection.Exec, len(ids))
		for i, id := range ids {
			items[i] = &projection.Exec{ExecRecorded: projection.ExecRecorded{ID: id}}
		}
		got, _ := sortByID(items, nil)
		want := slices.Clone(ids)
		slices.SortStableFunc(want, projection.CompareIDs)
		for i := range got {
			if got[i].ID != want[i] {
				t.Fatalf("sortByID(%q) = %q at %d, want %q", ids, got[i].ID, i, want)
			}
		}
	})
}
