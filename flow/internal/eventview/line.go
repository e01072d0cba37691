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
	p := lineParser{b: b}
	if !p.byte('{') {
		return false
	}
	var seen uint32
	for first := true; ; first = false {
		p.space()
		if p.peek('}') {
			p.i++
			p.space()
			return p.i == len(p.b)
		}
		if !first && !p.byte(',') {
			return false
		}
		key, ok := p.str()
		if !ok || !p.byte(':') {
			return false
		}
		p.space()
		bit, ok := p.field(key, l)
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
	}
}

// lineParser walks a line; i is the next byte.
type lineParser struct {
	b []byte
	i int
}

func (p *lineParser) space() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t' || p.b[p.i] == '\n' || p.b[p.i] == '\r') {
		p.i++
	}
}

func (p *lineParser) peek(c byte) bool { return p.i < len(p.b) && p.b[p.i] == c }

// byte skips space and c, reporting whether c was there.
func (p *lineParser) byte(c byte) bool {
	p.space()
	if !p.peek(c) {
		return false
	}
	p.i++
	return true
}

// str reads a string without escapes and returns its body.
func (p *lineParser) str() ([]byte, bool) {
	if !p.byte('"') {
		return nil, false
	}
	n := bytes.IndexByte(p.b[p.i:], '"')
	if n < 0 {
		return nil, false
	}
	s := p.b[p.i : p.i+n]
	if bytes.IndexByte(s, '\\') >= 0 || !plain(s) {
		return nil, false
	}
	p.i += n + 1
	return s, true
}

// uint reads an unsigned integer of at most bits bits, as encoding/json
// reads one into a uint of that size.
func (p *lineParser) uint(bits int) (uint64, bool) {
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	if p.i < len(p.b) && (p.b[p.i] == '.' || p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		return 0, false
	}
	if p.i-start > 1 && p.b[start] == '0' { // JSON has no leading zeros
		return 0, false
	}
	n, err := strconv.ParseUint(string(p.b[start:p.i]), 10, bits)
	return n, err == nil && p.i > start
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
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case '"':
			p.i++
			for p.i < len(p.b) && p.b[p.i] != '"' {
				if p.b[p.i] == '\\' {
					p.i++
				}
				p.i++
			}
			p.i++
		case '{', '[':
			depth++
			p.i++
			continue
		case '}', ']':
			if depth == 0 {
				return false
			}
			depth--
			p.i++
		case ',', ':', ' ', '\t', '\r', '\n':
			if depth == 0 {
				return false
			}
			p.i++
			continue
		default: // a number or a literal; any other byte is no JSON here
			start := p.i
			for p.i < len(p.b) && scalarByte(p.b[p.i]) {
				p.i++
			}
			if p.i == start {
				return false
			}
		}
		if depth == 0 {
			return p.i <= len(p.b)
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
		n, ok := p.uint(64)
		l.Seq = n
		return 1 << 0, ok
	case "version":
		n, ok := p.uint(64)
		l.Version = n
		return 1 << 1, ok
	case "schema":
		n, ok := p.uint(32)
		l.Schema = uint32(n)
		return 1 << 2, ok
	case "data":
		start := p.i
		if p.peek('n') { // null: encoding/json leaves a RawMessage "null"
			return 0, false
		}
		ok := p.skip()
		l.Data = bytes.TrimRight(p.b[start:p.i], " \t\r\n")
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
		s = p.b[p.i-len(s)-2 : p.i] // with its quotes, for time.Time's UnmarshalJSON
	}
	*dst = s
	return bit, ok
}
