package searchidx

import (
	"strings"
	"unicode/utf8"
)

// Snippet lengths, in bytes: the text kept before the first word found
// and in all.
const (
	snippetBefore = 40
	snippetMax    = 140
)

// Contains reports whether text holds one of words (lowered, as Words
// gives them).
func Contains(text string, words []string) bool {
	_, ok := find(text, words)
	return ok
}

// find returns the byte offset in text of the first word of text that
// is one of words.
func find(text string, words []string) (int, bool) {
	start := -1
	for i, r := range text + " " {
		if !notWordRune(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			w := strings.ToLower(text[start:i])
			if len(w) > MaxWord {
				w = cutUTF8(w, MaxWord)
			}
			for _, q := range words {
				if w == q {
					return start, true
				}
			}
			start = -1
		}
	}
	return 0, false
}

// Snippet is a short excerpt of text around the first of words it holds
// (or its start), on one line: runs of white space become one space, and
// "…" marks a cut.
func Snippet(text string, words []string) string {
	text = strings.Join(strings.Fields(text), " ")
	at, _ := find(text, words)
	from := max(0, at-snippetBefore)
	for from > 0 && from < at && !utf8.RuneStart(text[from]) {
		from++
	}
	if from > 0 { // start at a word
		if i := strings.IndexByte(text[from:at], ' '); i >= 0 {
			from += i + 1
		}
	}
	// Cut at a rune's start; text that is not UTF-8 (no rune starts
	// there) is cut where the bytes run out.
	to := min(len(text), from+snippetMax)
	cut := to
	for cut > from && cut < len(text) && !utf8.RuneStart(text[cut]) {
		cut--
	}
	if cut > from {
		to = cut
	}
	s := text[from:to]
	if from > 0 {
		s = "…" + s
	}
	if to < len(text) {
		s += "…"
	}
	return s
}
