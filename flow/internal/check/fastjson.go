package check

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// fastJSON reports whether b passes JSONDepth(b, maxDepth), scanning it
// once without allocating: the grammar of RFC 8259, valid UTF-8, no
// control character in a string, no number beyond a double's range, at
// most maxDepth levels of nesting, no duplicate key. It says false for
// whatever it does not settle by itself — a key with an escape, say — and
// JSONDepth then decides, and words the error: true is always right,
// false only means "ask the slow check" (fastjson_test.go checks both).
func fastJSON(b []byte, maxDepth int) bool {
	if !utf8.Valid(b) {
		return false
	}
	s := scanner{b: b, maxDepth: maxDepth}
	s.space()
	if !s.value(0) {
		return false
	}
	s.space()
	return s.i == len(b)
}

type scanner struct {
	b        []byte
	i        int
	maxDepth int
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) value(depth int) bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return depth < s.maxDepth && s.object(depth+1)
	case c == '[':
		return depth < s.maxDepth && s.array(depth+1)
	case c == '"':
		_, _, ok := s.str()
		return ok
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	return s.literal("true") || s.literal("false") || s.literal("null")
}

func (s *scanner) literal(word string) bool {
	if len(s.b)-s.i >= len(word) && string(s.b[s.i:s.i+len(word)]) == word {
		s.i += len(word)
		return true
	}
	return false
}

func (s *scanner) array(depth int) bool {
	s.i++ // [
	s.space()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		return true
	}
	for {
		s.space()
		if !s.value(depth) {
			return false
		}
		if more, ok := s.after(']'); !more {
			return ok
		}
	}
}

// after reads what follows an element of an array or object: a comma
// (more follow) or its close; ok is false for anything else.
func (s *scanner) after(close byte) (more, ok bool) {
	s.space()
	if s.i < len(s.b) && (s.b[s.i] == ',' || s.b[s.i] == close) {
		s.i++
		return s.b[s.i-1] == ',', true
	}
	return false, false
}

// maxKeysCompared is how many keys of an object fastJSON compares for
// duplicates; a larger object is left to the slow check.
const maxKeysCompared = 32

func (s *scanner) object(depth int) bool {
	s.i++ // {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return true
	}
	var keys [maxKeysCompared][]byte
	n := 0
	for {
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return false
		}
		key, escaped, ok := s.str()
		if !ok || escaped || n == maxKeysCompared {
			return false
		}
		for _, k := range keys[:n] {
			if string(k) == string(key) {
				return false
			}
		}
		keys[n] = key
		n++
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.space()
		if !s.value(depth) {
			return false
		}
		if more, ok := s.after('}'); !more {
			return ok
		}
	}
}

// str scans a string and returns its body, and whether it has an escape
// (then the body is not its value: keys compared raw could hide a
// duplicate).
func (s *scanner) str() (body []byte, escaped, ok bool) {
	s.i++ // "
	start := s.i
	escaped = false
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			body = s.b[start:s.i]
			s.i++
			return body, escaped, true
		case c < 0x20:
			return nil, false, false
		case c == '\\':
			if !s.escape() {
				return nil, false, false
			}
			escaped = true
		default:
			s.i++
		}
	}
	return nil, false, false
}

func (s *scanner) escape() bool {
	s.i++ // backslash
	if s.i >= len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.i++
		return true
	case 'u':
		if len(s.b)-s.i < 5 {
			return false
		}
		for _, h := range s.b[s.i+1 : s.i+5] {
			if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
				return false
			}
		}
		s.i += 5
		return true
	}
	return false
}

// number scans a number of RFC 8259's grammar and refuses one no double
// holds.
func (s *scanner) number() bool {
	start := s.i
	if s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.digits() == 0:
		return false
	}
	exp := false
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		exp = true
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return false
		}
	}
	if !exp && s.i-start < 300 {
		return true // below 1e300: no double overflows
	}
	f, _ := strconv.ParseFloat(string(s.b[start:s.i]), 64)
	return !math.IsInf(f, 0)
}

func (s *scanner) digits() int {
	start := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i - start
}
