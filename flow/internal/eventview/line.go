package eventview

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// Line is the fields of one line of an export (an event as JSON, in the
// form flow's export writes it) as ParseLine reads them: views of the
// line's bytes, valid while the line is. A string field is its JSON
// string's body, which holds no escape.
type Line struct {
	ID, Stream, Type, Actor, Session, Project, Correlation, Causation []byte
	Time, OccurredAt                                                  []byte // JSON strings, quoted, of RFC 3339 text
	Version, Seq                                                      uint64
	Schema                                                            uint32
	Data                                                              []byte // the JSON value
	Raw                                                               []byte // base64 text; nil when there is no "raw"
	PrevHash, Hash                                                    []byte
}

// ParseLine reads a line of an export without reflection: an object of
// the keys export writes, each at most once, string values without
// escapes and without null, numbers as unsigned integers. It reports
// false for any other line, which the caller decodes the general way
// (encoding/json): ParseLine takes a subset of the lines that way takes,
// and reads them as it does. What it takes is valid JSON but for the
// value of "data", which it skips by its brackets and strings only: the
// caller checks l.Data (check.JSONDepth), and the line is valid JSON when
// that is. Its strings are valid UTF-8 without control characters, its
// numbers without leading zeros.
func ParseLine(b []byte, l *Line) bool {
	*l = Line{}
	p := lineParser{Scanner{B: b}}
	if !p.Byte('{') {
		return false
	}
	var seen uint32
	for first := true; ; first = false {
		p.Space()
		if p.Peek('}') {
			p.I++
			p.Space()
			return p.I == len(p.B)
		}
		if !first && !p.Byte(',') {
			return false
		}
		key, ok := p.str()
		if !ok || !p.Byte(':') {
			return false
		}
		p.Space()
		bit, ok := p.field(key, l)
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
	}
}

// lineParser walks a line of an export for ParseLine.
type lineParser struct{ Scanner }

// Scanner walks a line of JSON: B is the line, I the next byte. It is the
// part ParseLine shares with flow's import, which reads strings by rules
// of its own.
type Scanner struct {
	B []byte
	I int
}

// Space skips JSON's white space.
func (p *Scanner) Space() {
	for p.I < len(p.B) && (p.B[p.I] == ' ' || p.B[p.I] == '\t' || p.B[p.I] == '\n' || p.B[p.I] == '\r') {
		p.I++
	}
}

// Peek reports whether the next byte is c.
func (p *Scanner) Peek(c byte) bool { return p.I < len(p.B) && p.B[p.I] == c }

// Byte skips space and c, reporting whether c was there.
func (p *Scanner) Byte(c byte) bool {
	p.Space()
	if !p.Peek(c) {
		return false
	}
	p.I++
	return true
}

// Quoted reads a JSON string up to its next quote and returns its body
// unchecked: whether that is the string as it is (no escape, no control
// byte, ...) is the caller's rule to decide, and after a false, or a body
// its rule refuses, the caller gives up the line.
func (p *Scanner) Quoted() ([]byte, bool) {
	if !p.Byte('"') {
		return nil, false
	}
	n := bytes.IndexByte(p.B[p.I:], '"')
	if n < 0 {
		return nil, false
	}
	s := p.B[p.I : p.I+n]
	p.I += n + 1
	return s, true
}

// Uint reads an unsigned integer of at most bits bits, as encoding/json
// reads one into a uint of that size.
func (p *Scanner) Uint(bits int) (uint64, bool) {
	start := p.I
	for p.I < len(p.B) && p.B[p.I] >= '0' && p.B[p.I] <= '9' {
		p.I++
	}
	if p.I == start || p.I < len(p.B) && (p.B[p.I] == '.' || p.B[p.I] == 'e' || p.B[p.I] == 'E') {
		return 0, false
	}
	if p.I-start > 1 && p.B[start] == '0' { // JSON has no leading zeros
		return 0, false
	}
	n, err := strconv.ParseUint(string(p.B[start:p.I]), 10, bits)
	return n, err == nil
}

// str reads a string without escapes and returns its body.
func (p *lineParser) str() ([]byte, bool) {
	s, ok := p.Quoted()
	if !ok || bytes.IndexByte(s, '\\') >= 0 || !plain(s) {
		return nil, false
	}
	return s, true
}

// plain reports whether s is the body of a JSON string as it is: valid
// UTF-8 without control characters (s has no escape).
func plain(s []byte) bool {
	for i, c := range s {
		if c < 0x20 {
			return false
		}
		if c >= utf8.RuneSelf {
			return utf8.Valid(s[i:]) && bytes.IndexFunc(s[i:], func(r rune) bool { return r < 0x20 }) < 0
		}
	}
	return true
}

// skip steps over the JSON value at i, known to be valid.
func (p *lineParser) skip() bool {
	depth := 0
	for p.I < len(p.B) {
		switch p.B[p.I] {
		case '"':
			p.I++
			for p.I < len(p.B) && p.B[p.I] != '"' {
				if p.B[p.I] == '\\' {
					p.I++
				}
				p.I++
			}
			p.I++
		case '{', '[':
			depth++
			p.I++
			continue
		case '}', ']':
			if depth == 0 {
				return false
			}
			depth--
			p.I++
		case ',', ':', ' ', '\t', '\r', '\n':
			if depth == 0 {
				return false
			}
			p.I++
			continue
		default: // a number or a literal; any other byte is no JSON here
			start := p.I
			for p.I < len(p.B) && scalarByte(p.B[p.I]) {
				p.I++
			}
			if p.I == start {
				return false
			}
		}
		if depth == 0 {
			return p.I <= len(p.B)
		}
	}
	return false
}

// scalarByte reports whether c is part of a number or a literal.
func scalarByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c == '-' || c == '+' || c == '.' || c == 'E'
}

// field reads the value of key into l and returns the key's bit.
func (p *lineParser) field(key []byte, l *Line) (uint32, bool) {
	var dst *[]byte
	var bit uint32
	switch string(key) {
	case "seq":
		n, ok := p.Uint(64)
		l.Seq = n
		return 1 << 0, ok
	case "version":
		n, ok := p.Uint(64)
		l.Version = n
		return 1 << 1, ok
	case "schema":
		n, ok := p.Uint(32)
		l.Schema = uint32(n)
		return 1 << 2, ok
	case "data":
		start := p.I
		if p.Peek('n') { // null: encoding/json leaves a RawMessage "null"
			return 0, false
		}
		ok := p.skip()
		l.Data = bytes.TrimRight(p.B[start:p.I], " \t\r\n")
		return 1 << 3, ok && len(l.Data) > 0
	case "id":
		dst, bit = &l.ID, 1<<4
	case "stream":
		dst, bit = &l.Stream, 1<<5
	case "type":
		dst, bit = &l.Type, 1<<6
	case "time":
		dst, bit = &l.Time, 1<<7
	case "occurred_at":
		dst, bit = &l.OccurredAt, 1<<8
	case "actor":
		dst, bit = &l.Actor, 1<<9
	case "session":
		dst, bit = &l.Session, 1<<10
	case "project":
		dst, bit = &l.Project, 1<<11
	case "correlation":
		dst, bit = &l.Correlation, 1<<12
	case "causation":
		dst, bit = &l.Causation, 1<<13
	case "raw":
		dst, bit = &l.Raw, 1<<14
	case "prev_hash":
		dst, bit = &l.PrevHash, 1<<15
	case "hash":
		dst, bit = &l.Hash, 1<<16
	default:
		return 0, false
	}
	s, ok := p.str()
	if s == nil {
		s = []byte{} // present, if empty
	}
	if dst == &l.Time || dst == &l.OccurredAt {
		s = p.B[p.I-len(s)-2 : p.I] // with its quotes, for time.Time's UnmarshalJSON
	}
	*dst = s
	return bit, ok
}
