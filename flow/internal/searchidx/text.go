package searchidx

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/vmihailenco/msgpack/v5"
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
	for _, w := range strings.FieldsFunc(s, notWordRune) {
		if len(w) < 2 {
			continue
		}
		w = strings.ToLower(w)
		if len(w) > MaxWord {
			w = cutUTF8(w, MaxWord)
		}
		out = append(out, w)
	}
	return out
}

func notWordRune(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }

// cutUTF8 cuts s to at most n bytes on a rune boundary.
func cutUTF8(s string, n int) string {
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
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
	switch ev.Type {
	case projection.TypeTaskCreated:
		var p struct {
			Title       string `msgpack:"title"`
			Description string `msgpack:"description"`
		}
		if msgpack.Unmarshal(ev.Data, &p) != nil {
			return nil
		}
		return texts(Text{FieldTitle, p.Title}, Text{FieldDescription, p.Description})
	case projection.TypeTaskUpdated:
		var p struct {
			Title       *string `msgpack:"title"`
			Description *string `msgpack:"description"`
		}
		if msgpack.Unmarshal(ev.Data, &p) != nil {
			return nil
		}
		return texts(Text{FieldTitle, deref(p.Title)}, Text{FieldDescription, deref(p.Description)})
	case projection.TypeTaskContextMerged:
		var p struct {
			Patch string `msgpack:"patch"`
		}
		if msgpack.Unmarshal(ev.Data, &p) != nil {
			return nil
		}
		return texts(Text{FieldContext, ContextText(p.Patch)})
	case projection.TypeNoteAdded:
		var p struct {
			Text string `msgpack:"text"`
			Kind string `msgpack:"kind"`
		}
		if msgpack.Unmarshal(ev.Data, &p) != nil {
			return nil
		}
		f := FieldNote
		if p.Kind == "memory" {
			f = FieldMemory
		}
		return texts(Text{f, p.Text})
	case projection.TypeExecRecorded:
		var p struct {
			Command string `msgpack:"command"`
			Code    string `msgpack:"code"`
		}
		if msgpack.Unmarshal(ev.Data, &p) != nil {
			return nil
		}
		return texts(Text{FieldCommand, ExecText(p.Command, p.Code)})
	}
	return nil
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

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// ContextText is the searchable text of a context object (or patch): its
// string values, at any depth, one per line, in the order they appear.
// Keys, numbers and booleans are not searched.
func ContextText(doc string) string {
	if doc == "" {
		return ""
	}
	var v any
	if json.Unmarshal([]byte(doc), &v) != nil {
		return ""
	}
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(v)
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				walk(v[k])
			}
		}
	}
	walk(v)
	return b.String()
}
