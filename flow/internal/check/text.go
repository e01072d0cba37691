package check

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Line checks one-line text — a title, label, name, id, tag or
// path: valid UTF-8, at most limit bytes, not blank when required, and no
// control character at all (no newline, tab, ESC, BEL or NUL). Errors are
// ErrInvalid.
func Line(field, s string, limit int, required bool) error {
	if err := checkSize(field, s, limit, required); err != nil {
		return err
	}
	return checkControls(field, s, "it must be one line of text without control characters", func(string, int) bool { return false })
}

// Text checks multi-line text — a description, note, message,
// reason or code: as Line, but newlines and tabs are kept (a
// carriage return too, when a newline follows it: CRLF line ends). Every
// other control character is ErrInvalid.
func Text(field, s string, limit int, required bool) error {
	if err := checkSize(field, s, limit, required); err != nil {
		return err
	}
	return checkControls(field, s, "only newlines and tabs are allowed", textControl)
}

func checkSize(field, s string, limit int, required bool) error {
	switch {
	case required && strings.TrimSpace(s) == "":
		return fmt.Errorf("%w: %s is empty", ErrInvalid, field)
	case len(s) > limit:
		return fmt.Errorf("%w: %s is %d bytes, the limit is %d", ErrInvalid, field, len(s), limit)
	case !utf8.ValidString(s):
		return fmt.Errorf("%w: %s is not valid UTF-8", ErrInvalid, field)
	}
	return nil
}

// checkControls refuses the first control character of s (C0, DEL or
// C1) that allowed does not let through.
func checkControls(field, s, rule string, allowed func(s string, i int) bool) error {
	for i, r := range s {
		if unicode.IsControl(r) && !allowed(s, i) {
			return fmt.Errorf("%w: %s has the control character %U at byte %d; %s", ErrInvalid, field, r, i, rule)
		}
	}
	return nil
}

// textControl reports whether the control character at s[i] belongs in
// multi-line text: a newline, a tab, or a carriage return before a newline.
func textControl(s string, i int) bool {
	switch s[i] {
	case '\n', '\t':
		return true
	case '\r':
		return i+1 < len(s) && s[i+1] == '\n'
	}
	return false
}

// CleanLine replaces every control character of s with a space, for text
// imported from the legacy system's files, which must import even when a
// title carries a newline.
func CleanLine(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// CleanText replaces the control characters of s that multi-line text
// refuses with spaces (see CleanLine): newlines, tabs and CRLF line ends
// stay.
func CleanText(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsControl(r) && !textControl(s, i) {
			r = ' '
		}
		b.WriteRune(r)
	}
	return b.String()
}

// CleanLines applies CleanLine to every line of lines, in place.
func CleanLines(lines []string) {
	for i, s := range lines {
		lines[i] = CleanLine(s)
	}
}
