package searchidx

import (
	"slices"
	"strings"
	"testing"
	"unicode"

	"pgregory.net/rapid"
)

// wordsByRune is Words as doc.go says it, rune by rune: the runs of
// letters and digits of two bytes or more, lowered, cut at MaxWord bytes.
func wordsByRune(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len(w) < 2 {
			continue
		}
		w = strings.ToLower(w)
		out = append(out, w[:cutLen(w, MaxWord)])
	}
	return out
}

// TestWords_ByTable: the table-driven scan of ASCII finds the words a
// rune-by-rune scan finds, in any mix of ASCII, other scripts, marks and
// invalid UTF-8.
func TestWords_ByTable(t *testing.T) {
	pieces := []string{"a", "Z", "q9", "Go", " ", "-", "_", ".", "\n", "0", "É", "ß", "İ", "日本", "ǅ", "\u0301",
		"\xff", "\xc3", "٣", "—", "Ω", strings.Repeat("x", 70), strings.Repeat("é", 40)}
	rapid.Check(t, func(rt *rapid.T) {
		parts := rapid.SliceOfN(rapid.SampledFrom(pieces), 0, 30).Draw(rt, "parts")
		s := strings.Join(parts, "")
		if got, want := Words(s), wordsByRune(s); !slices.Equal(got, want) {
			rt.Fatalf("Words(%q) = %q, want %q", s, got, want)
		}
	})
}
