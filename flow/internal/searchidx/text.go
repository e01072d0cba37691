package searchidx

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// Field is the kind of text a posting is in.
type Field uint8

// The fields, in posting order. Stored: never renumbered.
const (
	FieldTitle       Field = 1
	FieldDescription Field = 2
	FieldContext     Field = 3
	FieldNote        Field = 4
	FieldMemory      Field = 5
	FieldCommand     Field = 6
)

var fieldNames = [...]string{FieldTitle: "title", FieldDescription: "description", FieldContext: "context",
	FieldNote: "note", FieldMemory: "memory", FieldCommand: "command"}

// String is the field's name in output: title, description, context,
// note, memory or command.
func (f Field) String() string {
	if int(f) < len(fieldNames) && fieldNames[f] != "" {
		return fieldNames[f]
	}
	return "unknown"
}

// MaxWord is the longest word kept, in bytes; a longer one is cut.
const MaxWord = 64

// Words returns the words of s, lowered, in order (see doc.go).
func Words(s string) []string {
	var out []string
	var buf []byte
	for i, ok := 0, true; ; {
		if buf, i, ok = nextWord(s, i, buf); !ok {
			return out
		}
		out = append(out, string(buf))
	}
}

// nextWord finds the first word of s at or after byte i: it returns the
// word lowered and cut (in buf, reused), and the byte after it; ok is
// false when no word is left. ASCII bytes are classed and lowered by
// table, without decoding a rune or allocating.
func nextWord(s string, i int, buf []byte) (_ []byte, next int, ok bool) {
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if asciiClass[c] == 0 {
				i++
				continue
			}
		} else if r, n := utf8.DecodeRuneInString(s[i:]); notWordRune(r) {
			i += n
			continue
		}
		start, ascii := i, true
		for i < len(s) {
			if c := s[i]; c < utf8.RuneSelf {
				if asciiClass[c] == 0 {
					break
				}
				i++
				continue
			}
			r, n := utf8.DecodeRuneInString(s[i:])
			if notWordRune(r) {
				break
			}
			ascii = false
			i += n
		}
		w := s[start:i]
		if len(w) < 2 {
			continue
		}
		buf = buf[:0]
		if ascii {
			for j := 0; j < len(w); j++ {
				buf = append(buf, asciiClass[w[j]])
			}
		} else {
			buf = append(buf, strings.ToLower(w)...)
		}
		if len(buf) > MaxWord {
			buf = buf[:cutLen(buf, MaxWord)]
		}
		return buf, i, true
	}
	return buf, i, false
}

// asciiClass is, for an ASCII byte, the byte lowered when it is a letter
// or a digit, else 0.
var asciiClass = func() (t [utf8.RuneSelf]byte) {
	for c := range t {
		if !notWordRune(rune(c)) {
			t[c] = byte(unicode.ToLower(rune(c)))
		}
	}
	return t
}()

func notWordRune(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }

// cutUTF8 cuts s to at most n bytes on a rune boundary.
func cutUTF8(s string, n int) string { return s[:cutLen(s, n)] }

// cutLen is the length of b cut to at most n bytes on a rune boundary.
func cutLen[S string | []byte](b S, n int) int {
	for n > 0 && n < len(b) && b[n]&0xC0 == 0x80 {
		n--
	}
	return min(n, len(b))
}

// Text is one searchable text of an event.
type Text struct {
	Field Field
	Text  string
}

// Texts returns the searchable texts of an event, in field order: none
// for a type that has none, or a payload that does not decode (the fold
// reports that, not the index).
func Texts(ev *store.Event) []Text {
	if ev.Schema != projection.SchemaVersion {
		return nil
	}
	var f [4]string // by type: the strings wanted, by position
	var names [4]string
	switch ev.Type {
	case projection.TypeTaskCreated, projection.TypeTaskUpdated:
		names = [4]string{"title", "description"}
	case projection.TypeTaskContextMerged:
		names = [4]string{"patch"}
	case projection.TypeNoteAdded:
		names = [4]string{"text", "kind"}
	case projection.TypeExecRecorded:
		names = [4]string{"command", "code"}
	default:
		return nil
	}
	err := stringFields(ev.Data, func(k, v []byte) {
		for i, n := range names {
			if n != "" && string(k) == n {
				f[i] = string(v)
			}
		}
	})
	if err != nil {
		return nil
	}
	switch ev.Type {
	case projection.TypeTaskContextMerged:
		return texts(Text{FieldContext, ContextText(f[0])})
	case projection.TypeNoteAdded:
		if f[1] == "memory" {
			return texts(Text{FieldMemory, f[0]})
		}
		return texts(Text{FieldNote, f[0]})
	case projection.TypeExecRecorded:
		return texts(Text{FieldCommand, ExecText(f[0], f[1])})
	}
	return texts(Text{FieldTitle, f[0]}, Text{FieldDescription, f[1]})
}

// ExecText is the searchable text of an exec record: its command, else
// its code.
func ExecText(command, code string) string {
	if command != "" {
		return command
	}
	return code
}

func texts(ts ...Text) []Text {
	out := ts[:0]
	for _, t := range ts {
		if t.Text != "" {
			out = append(out, t)
		}
	}
	return out
}

// ContextText is the searchable text of a context object (or patch): its
// string values, at any depth, one per line, in the order they appear.
// Keys, numbers and booleans are not searched. doc is valid JSON (the
// engine checks it before it is stored); what is not gives "".
func ContextText(doc string) string {
	var b strings.Builder
	key := false // the next string is an object's key
	var stack []byte
	for i := 0; i < len(doc); i++ {
		switch c := doc[i]; c {
		case '{', '[':
			stack = append(stack, c)
			key = c == '{'
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ',':
			key = len(stack) > 0 && stack[len(stack)-1] == '{'
		case ':':
			key = false
		case '"':
			end := stringEnd(doc, i)
			if end < 0 {
				return ""
			}
			if !key {
				if b.Len() > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(unquote(doc[i : end+1]))
			}
			i = end
		}
	}
	return b.String()
}

// stringEnd returns the index of the quote that ends the JSON string
// starting at doc[i], or -1.
func stringEnd(doc string, i int) int {
	for j := i + 1; j < len(doc); j++ {
		switch doc[j] {
		case '\\':
			j++
		case '"':
			return j
		}
	}
	return -1
}

// unquote reads a JSON string literal.
func unquote(lit string) string {
	if !strings.Contains(lit, `\`) {
		return lit[1 : len(lit)-1]
	}
	var s string
	if json.Unmarshal([]byte(lit), &s) != nil {
		return ""
	}
	return s
}
