package history

import (
	"fmt"
	"testing"

	"github.com/flowctl/flowctl/projection"
	"pgregory.net/rapid"
)

// TestBornIndex_IsAMap: a bornIndex finds what a map by kind and id
// finds, for ids past the counters in order and out of it, at and below
// them, far past them, of another prefix or not numbered at all, looked
// up as strings and as bytes; idNumber is projection.IDNumber.
func TestBornIndex_IsAMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var x bornIndex
		for i := range x.base {
			x.base[i] = rapid.IntRange(0, 50).Draw(t, fmt.Sprint("base", i))
		}
		want := [4]map[string]int{{}, {}, {}, {}}
		ids := rapid.OneOf(
			rapid.Custom(func(t *rapid.T) string {
				return fmt.Sprintf("%s-%d", rapid.SampledFrom(farPrefixes[:]).Draw(t, "prefix"), rapid.IntRange(0, 200).Draw(t, "n"))
			}),
			rapid.SampledFrom([]string{"T-0", "T-01", "T-", "T", "", "X-3", "T-3x", "T-1000000", "T-9999999999", "P-70000", "T-65600"}),
		)
		for n := range rapid.IntRange(0, 300).Draw(t, "ops") {
			i, id := rapid.IntRange(0, 3).Draw(t, "kind"), ids.Draw(t, "id")
			if rapid.Bool().Draw(t, "put") {
				x.put(i, id, n)
				want[i][id] = n
			}
			k, ok := x.get(i, id)
			kb, okb := bornAt(&x, i, []byte(id))
			w, wok := want[i][id]
			if ok != wok || k != w || kb != k || okb != ok {
				t.Fatalf("kind %d id %q: get %d %v, bytes %d %v; want %d %v", i, id, k, ok, kb, okb, w, wok)
			}
			for _, p := range farPrefixes {
				n, ok := idNumber(p, id)
				wn, wok := projection.IDNumber(p, id)
				if n != wn || ok != wok {
					t.Fatalf("idNumber(%q, %q) = %d %v, want %d %v", p, id, n, ok, wn, wok)
				}
			}
		}
	})
}
