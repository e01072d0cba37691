package projection

import "unicode/utf8"

// Reading a document that is canonical already.
//
// A task's context is what an earlier merge returned: canonical. Checking
// that a document is canonical, and finding its top-level members, takes
// one read without decoding or writing anything, where canonicalizing it
// decodes each string, writes it again and gathers the keys of every
// object. scanCanonical does that read; when it says no, the document
// takes the long way (canonical), which gives the result or the error.

// maxScanDepth is the deepest nesting scanCanonical reads; a deeper
// document takes the long way.
const maxScanDepth = 64

// scanCanonical reports whether doc is an object in canonical form:
// exactly what canonical writes for it, and nothing after it. If so, it
// appends doc's top-level members to *top (offsets into doc) and their
// keys to c.keys. It may say no to a canonical document (a key with an
// escape, nesting deeper than maxScanDepth), never yes to another one.
func (c *canon) scanCanonical(doc string, top *[]member) bool {
	if len(doc) == 0 || doc[0] != '{' {
		return false
	}
	keys, ms := len(c.keys), len(*top)
	end, ok := c.scanObject(doc, 0, 1, top)
	if !ok || end != len(doc) {
		c.keys, *top = c.keys[:keys], (*top)[:ms]
		return false
	}
	return true
}

// scanValue reads the canonical value at s[i] and returns its end.
func (c *canon) scanValue(s string, i, depth int) (int, bool) {
	if i >= len(s) {
		return 0, false
	}
	switch b := s[i]; {
	case b == '"':
		end, _, ok := scanString(s, i)
		return end, ok
	case b == '{':
		return c.scanObject(s, i, depth+1, nil)
	case b == '[':
		return c.scanArray(s, i, depth+1)
	case b == '-' || isDigit(b):
		return scanNumber(s, i)
	case b == 't':
		return scanLiteral(s, i, "true")
	case b == 'f':
		return scanLiteral(s, i, "false")
	case b == 'n':
		return scanLiteral(s, i, "null")
	}
	return 0, false
}

// scanObject reads the canonical object at s[i]: its keys without
// escapes, in strictly increasing order. With top set, it records the
// members there and their keys in c.keys.
func (c *canon) scanObject(s string, i, depth int, top *[]member) (int, bool) {
	if depth > maxScanDepth {
		return 0, false
	}
	i++
	if i < len(s) && s[i] == '}' {
		return i + 1, true
	}
	var prev string // the previous key
	for first := true; ; first = false {
		if i >= len(s) || s[i] != '"' {
			return 0, false
		}
		kend, plain, ok := scanString(s, i)
		// A key without escapes is its decoded text: keys compare as
		// written. (Keys with escapes take the long way.)
		if !ok || !plain || kend >= len(s) || s[kend] != ':' {
			return 0, false
		}
		key := s[i+1 : kend-1]
		if !first && prev >= key {
			return 0, false
		}
		end, ok := c.scanValue(s, kend+1, depth)
		if !ok {
			return 0, false
		}
		if top != nil {
			ka := len(c.keys)
			c.keys = append(c.keys, key...)
			*top = append(*top, member{ka: ka, kb: len(c.keys), start: i, val: kend + 1, end: end})
		}
		prev, i = key, end
		if i >= len(s) {
			return 0, false
		}
		switch s[i] {
		case ',':
			i++
		case '}':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

func (c *canon) scanArray(s string, i, depth int) (int, bool) {
	if depth > maxScanDepth {
		return 0, false
	}
	i++
	if i < len(s) && s[i] == ']' {
		return i + 1, true
	}
	for {
		end, ok := c.scanValue(s, i, depth)
		if !ok || end >= len(s) {
			return 0, false
		}
		switch s[end] {
		case ',':
			i = end + 1
		case ']':
			return end + 1, true
		default:
			return 0, false
		}
	}
}

// scanString reads the canonical string at s[i]: what appendJSONString
// writes, so that decoding and writing it again gives it back. plain
// reports that it has no escapes.
func scanString(s string, i int) (end int, plain, ok bool) {
	plain = true
	for i++; i < len(s); {
		b := s[i]
		switch {
		case plainByte[b]:
			i++
		case b == '"':
			return i + 1, plain, true
		case b == '\\':
			n := canonicalEscape(s[i:])
			if n == 0 {
				return 0, false, false
			}
			i += n
			plain = false
		case b < utf8.RuneSelf: // a control character
			return 0, false, false
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
				return 0, false, false
			}
			i += size
		}
	}
	return 0, false, false
}

// canonicalEscape returns the length of the escape e starts with if
// appendJSONString writes it (for what it decodes to), else 0.
func canonicalEscape(e string) int {
	if len(e) < 2 {
		return 0
	}
	switch e[1] {
	case '"', '\\', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(e) < 6 {
			return 0
		}
		switch u := e[2:6]; {
		case u == "2028" || u == "2029":
			return 6
		case u[0] == '0' && u[1] == '0' && (u[2] == '0' || u[2] == '1') && isLowerHex(u[3]):
			switch u[2:] {
			case "08", "09", "0a", "0c", "0d": // written \b \t \n \f \r
				return 0
			}
			return 6
		}
	}
	return 0
}

func isLowerHex(b byte) bool { return isDigit(b) || b >= 'a' && b <= 'f' }

// scanNumber reads a number as canonical does (it writes numbers as
// they are).
func scanNumber(s string, i int) (int, bool) {
	end, problem := numberEnd(s, i)
	return end, problem == ""
}

func scanLiteral(s string, i int, lit string) (int, bool) {
	if len(s)-i >= len(lit) && s[i:i+len(lit)] == lit {
		return i + len(lit), true
	}
	return 0, false
}
