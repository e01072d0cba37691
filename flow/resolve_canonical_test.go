package flow

import (
	"fmt"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/projection"
	"pgregory.net/rapid"
)

// The parsers' fast path for an id already in canonical form
// (canonicalShortID) answers exactly what the full parse it skips
// (parseShortIDFull, parseStepIDFull) answers: for any input.

// idText draws strings near ids: canonical ones, and ones a character
// away (spaces, signs, zeros, case, other prefixes, long numbers).
func idText() *rapid.Generator[string] {
	part := rapid.SampledFrom([]string{"T", "t", "P", "p", "-", ".", " ", "0", "1", "9", "12", "+", "007", "1234567890", "x", "T-", "T-1", ".2", "\t"})
	return rapid.OneOf(
		rapid.Custom(func(t *rapid.T) string {
			return strings.Join(rapid.SliceOfN(part, 0, 6).Draw(t, "parts"), "")
		}),
		rapid.Custom(func(t *rapid.T) string {
			return fmt.Sprintf("T-%d.%d", rapid.IntRange(-2, 2_000_000_000).Draw(t, "n"), rapid.IntRange(-2, 2_000_000_000).Draw(t, "m"))
		}),
		rapid.String(),
	)
}

func TestParseIDs_CanonicalFastPathAnswersAsTheFullParse(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := idText().Draw(t, "s")
		for _, prefix := range []string{projection.PrefixTask, projection.PrefixPlan} {
			got, gotErr := parseShortID(prefix, "id", s)
			want, wantErr := parseShortIDFull(prefix, "id", s)
			if got != want || (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
				t.Fatalf("parseShortID(%q, %q) = %q, %v; the full parse: %q, %v", prefix, s, got, gotErr, want, wantErr)
			}
		}
		task, step, err := ParseStepID(s)
		wantTask, wantStep, wantErr := parseStepIDFull(s)
		if task != wantTask || step != wantStep || (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
			t.Fatalf("ParseStepID(%q) = %q, %q, %v; the full parse: %q, %q, %v", s, task, step, err, wantTask, wantStep, wantErr)
		}
	})
}
