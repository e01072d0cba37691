package check

import (
	"errors"
	"testing"
)

// TestLine_Text: the checks refuse only with ErrInvalid; what CleanLine
// and CleanText make of valid UTF-8 passes Line and Text.
func TestLine_Text(t *testing.T) {
	for _, s := range []string{"", "  ", "a\nb", "a\x1bb", "\xff", "a\r\nb\tc", "a\rb", "a\u0085b"} {
		if err := Line("f", s, 64, true); err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("Line(%q) = %v, want ErrInvalid", s, err)
		}
		if err := Text("f", s, 64, true); err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("Text(%q) = %v, want ErrInvalid", s, err)
		}
	}
	t.Run("CleanPasses", func(t *testing.T) {
		for _, s := range []string{"a\nb\x07", "a\r\nb\tc\x1b", "a\rb\u0085"} {
			if c := CleanLine(s); Line("f", c, 64, true) != nil {
				t.Errorf("CleanLine(%q) = %q, which Line refuses", s, c)
			}
			if c := CleanText(s); Text("f", c, 64, true) != nil {
				t.Errorf("CleanText(%q) = %q, which Text refuses", s, c)
			}
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, err := range []error{Line("f", "a\nb", 64, true), Text("f", "", 64, true), Text("f", "abc", 2, false)} {
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("err = %v, want ErrInvalid", err)
			}
		}
	})
}
