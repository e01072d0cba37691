package flow

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"time"
	"unicode/utf8"

	"github.com/flowctl/flowctl/flow/internal/check"
	"github.com/flowctl/flowctl/flow/internal/eventview"
	"github.com/flowctl/flowctl/flow/store"
)

// parseLine is parseImportLine for the lines export writes, read in one
// pass straight into the event, without reflection: an object of the
// keys an export line has, each at most once, strings without escapes,
// numbers as unsigned integers, "data" any JSON value but null. Any other
// line, and any line it does not settle, is read by parseImportLine,
// which words the errors: parseLine takes a subset of the lines that one
// takes and reads them as it does (TestParseLineAsSlow,
// TestParseLine_Property).
func (in *importReader) parseLine(b []byte) (importEvent, error) {
	var ie importEvent
	if !in.fastLine(b, &ie) {
		return parseImportLine(b)
	}
	return ie, nil
}

// Bits of the keys fastLine read.
const (
	lineSeq = 1 << iota
	lineVersion
	lineSchema
	lineData
	lineID
	lineStream
	lineType
	lineTime
	lineOccurredAt
	lineActor
	lineSession
	lineProject
	lineCorrelation
	lineCausation
	lineRaw
	linePrevHash
	lineHash
)

// fastLine reads b into ie: false when it does not take the line.
func (in *importReader) fastLine(b []byte, ie *importEvent) bool {
	// Valid UTF-8 once for the whole line: then a string's body is JSON's
	// when it has no quote, backslash or control byte.
	if !utf8.Valid(b) {
		return false
	}
	p := importLine{eventview.Scanner{B: b}}
	if !p.Byte('{') {
		return false
	}
	ev := &ie.event
	var seen uint32
	var stream, typ, tm []byte
	for first := true; ; first = false {
		p.Space()
		if p.Peek('}') {
			p.I++
			p.Space()
			if p.I != len(b) {
				return false
			}
			break
		}
		if !first && !p.Byte(',') {
			return false
		}
		key, ok := p.str()
		if !ok || !p.Byte(':') {
			return false
		}
		p.Space()
		var bit uint32
		switch string(key) {
		case "seq":
			_, ok = p.Uint(64)
			bit = lineSeq
		case "version":
			ie.version, ok = p.Uint(64)
			bit = lineVersion
		case "schema":
			var n uint64
			n, ok = p.Uint(32)
			ev.Schema, bit = uint32(n), lineSchema
		case "data":
			// Checked as JSONDepth checks the whole line, one level down;
			// the payload is taken from "raw", which the line must have.
			var n int
			if p.Peek('n') { // null: the slow way decides
				return false
			}
			n, ok = check.JSONPrefix(b[p.I:], MaxJSONDepth+eventview.Depth-1)
			p.I += n
			bit = lineData
		case "id":
			var s []byte
			if s, ok = p.str(); ok {
				ev.ID, ok = parseUUID(s)
				ok = ok && !ev.ID.IsZero()
			}
			bit = lineID
		case "stream":
			stream, ok = p.str()
			bit = lineStream
		case "type":
			typ, ok = p.str()
			bit = lineType
		case "time":
			start := p.I
			if _, ok = p.str(); ok {
				tm = b[start:p.I] // quoted, for time.Time's UnmarshalJSON
			}
			bit = lineTime
		case "occurred_at":
			start := p.I
			if _, ok = p.str(); ok {
				var o time.Time
				ok = o.UnmarshalJSON(b[start:p.I]) == nil
			}
			bit = lineOccurredAt
		case "actor":
			ev.Actor, ok = in.nameOf(&p, 0)
			bit = lineActor
		case "session":
			ev.Session, ok = in.nameOf(&p, 1)
			bit = lineSession
		case "project":
			ev.Project, ok = in.nameOf(&p, 2)
			bit = lineProject
		case "correlation", "causation":
			dst := &ev.Correlation
			if bit = lineCorrelation; key[1] == 'a' {
				dst, bit = &ev.Causation, lineCausation
			}
			var s []byte
			if s, ok = p.str(); ok && len(s) > 0 {
				*dst, ok = parseUUID(s)
			}
		case "raw":
			ev.Data, ok = in.raw(&p)
			bit = lineRaw
		case "prev_hash":
			_, ok = p.str()
			bit = linePrevHash
		case "hash":
			_, ok = p.str()
			bit = lineHash
		}
		if !ok || bit == 0 || seen&bit != 0 {
			return false
		}
		seen |= bit
	}
	const required = lineVersion | lineStream | lineType | lineTime | lineID | lineRaw
	if seen&required != required || ie.version == 0 || len(stream) == 0 || len(typ) == 0 {
		return false
	}
	var t time.Time
	if t.UnmarshalJSON(tm) != nil || t.IsZero() || t.Before(minTime) || t.After(maxTime) {
		return false
	}
	ev.Time = t.UTC()
	if in.names == nil {
		in.names = map[string]string{}
	}
	ie.stream, ev.Type = in.name(stream), in.name(typ)
	return true
}

// nameOf reads a string that repeats from line to line (an actor, a
// session, a project): the one of the line before when it is the same,
// kept in slot.
func (in *importReader) nameOf(p *importLine, slot int) (string, bool) {
	s, ok := p.str()
	if !ok {
		return "", false
	}
	if last := in.recent[slot]; len(s) == len(last) && string(s) == last {
		return last, true
	}
	if in.names == nil {
		in.names = map[string]string{}
	}
	in.recent[slot] = in.name(s)
	return in.recent[slot], true
}

// raw reads "raw", base64 text, into the payload's bytes: carved from a
// block that the events of a batch share, so that a payload costs no
// allocation of its own. false for anything but base64 in a string
// without escapes (the slow way decides).
func (in *importReader) raw(p *importLine) ([]byte, bool) {
	text, ok := p.Quoted()
	if !ok || bytes.IndexByte(text, '\r') >= 0 || bytes.IndexByte(text, '\n') >= 0 {
		return nil, false // base64 skips them; JSON has none in a string
	}
	size := base64.StdEncoding.DecodedLen(len(text))
	if size > rawBlock/4 {
		buf := make([]byte, size)
		m, err := base64.StdEncoding.Decode(buf, text)
		return buf[:m:m], err == nil
	}
	if len(in.block)+size > cap(in.block) {
		in.block = make([]byte, 0, rawBlock)
	}
	buf := in.block[len(in.block) : len(in.block)+size]
	// base64 takes its alphabet and '=' alone: no quote, backslash or
	// control byte, so text was a JSON string as it is.
	m, err := base64.StdEncoding.Decode(buf, text)
	if err != nil {
		return nil, false
	}
	in.block = in.block[:len(in.block)+m]
	if m == 0 {
		return []byte{}, true // as encoding/json reads ""
	}
	return buf[:m:m], true
}

// rawBlock is the size of the blocks payloads are carved from.
const rawBlock = 64 << 10

// importLine walks a line that is valid UTF-8.
type importLine struct{ eventview.Scanner }

// str reads a string without escapes or control bytes and returns its
// body.
func (p *importLine) str() ([]byte, bool) {
	s, ok := p.Quoted()
	if !ok || !plainASCII(s) {
		return nil, false
	}
	return s, true
}

// plainASCII reports whether s has no control byte and no backslash,
// eight bytes at a time.
func plainASCII(s []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for len(s) >= 8 {
		x := binary.LittleEndian.Uint64(s)
		// A byte of x below 0x20, or of x^'\\' zero, sets its high bit
		// here; bytes of 0x80 and up (UTF-8, valid) are masked by ^x.
		ctl := (x - 0x20*ones) &^ x & highs
		y := x ^ '\\'*ones
		bs := (y - ones) &^ y & highs
		if ctl|bs != 0 {
			return false
		}
		s = s[8:]
	}
	for _, c := range s {
		if c < 0x20 || c == '\\' {
			return false
		}
	}
	return true
}

// parseUUID is store.ParseID of the 36-byte form, without its allocations.
func parseUUID(s []byte) (store.ID, bool) {
	var id store.ID
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return id, false
	}
	j := 0
	for i := 0; i < 36; {
		switch i {
		case 8, 13, 18, 23: // the dashes, checked above: a dash anywhere else is not hex
			i++
			continue
		}
		hi, lo := hexValue[s[i]], hexValue[s[i+1]]
		if hi == 0xff || lo == 0xff {
			return id, false
		}
		id[j] = hi<<4 | lo
		j++
		i += 2
	}
	return id, true
}

// hexValue is the value of a hex digit, 0xff for any other byte.
var hexValue = func() (t [256]byte) {
	for c := range t {
		switch {
		case c >= '0' && c <= '9':
			t[c] = byte(c - '0')
		case c >= 'a' && c <= 'f':
			t[c] = byte(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			t[c] = byte(c - 'A' + 10)
		default:
			t[c] = 0xff
		}
	}
	return t
}()
