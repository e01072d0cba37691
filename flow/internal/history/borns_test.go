package history

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// TestBorns_HoldWhatWasNoted: the entities a far read notes as created
// after a (from a delta's bytes or a record's strings, ids numbered or
// not, named again and again, from one field or several) come out of
// bornAtB in the order they were noted, each with its kind, id, number
// and last title, as a list of them would hold them.
func TestBorns_HoldWhatWasNoted(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := &far{project: "p"}
		type want struct {
			kind      int
			id, title string
			num       int
		}
		var ws []want
		at := map[string]int{}
		ids := rapid.OneOf(
			rapid.Custom(func(t *rapid.T) string {
				return fmt.Sprintf("%s-%d", rapid.SampledFrom(farPrefixes[:]).Draw(t, "prefix"), rapid.IntRange(1, 300).Draw(t, "n"))
			}),
			rapid.SampledFrom([]string{"T-01", "X-3", "T-3x", "imported", "P-0"}),
		)
		titles := rapid.SampledFrom([]string{"", "a", "write the tests", "é", "go test ./..."})
		for range rapid.IntRange(0, 200).Draw(t, "ops") {
			i, id := rapid.IntRange(0, 3).Draw(t, "kind"), ids.Draw(t, "id")
			key := fmt.Sprint(i, id)
			k, ok := at[key]
			if !ok {
				num, _ := idNumber(farPrefixes[i], id)
				if num > 0 && rapid.Bool().Draw(t, "bytes") { // as fromEntity notes it
					bornPut(&f.bornIdx, i, []byte(id), len(f.born))
					k = f.newBorn(i, num, "", "")
				} else { // as addBorn does
					f.addBorn(i, id, rapid.SampledFrom([]string{"", "p/s"}).Draw(t, "stream"), nil)
					k, _ = f.bornIdx.get(i, id)
				}
				at[key] = k
				ws = append(ws, want{kind: i, id: id, num: num})
			}
			if g, _ := bornAt(&f.bornIdx, i, []byte(id)); g != k {
				t.Fatalf("%s is at %d, want %d", key, g, k)
			}
			parts := rapid.SliceOfN(titles, 1, 2).Draw(t, "title")
			field := make([][]byte, len(parts))
			title := ""
			for j, p := range parts {
				field[j], title = []byte(p), title+p
			}
			f.nameFrom(k, field, false)
			ws[k].title = title
		}
		b, err := f.bornAtB()
		if err != nil {
			t.Fatal(err)
		}
		if b.Len() != len(ws) {
			t.Fatalf("%d born, want %d", b.Len(), len(ws))
		}
		for k, w := range ws {
			if g := (want{b.Kind(k), b.ID(k), b.Title(k), b.Num(k)}); g != w {
				t.Fatalf("born %d is %+v, want %+v", k, g, w)
			}
		}
	})
}
