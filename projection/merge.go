package projection

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
)

// EmptyContext is the context of a new task.
const EmptyContext JSON = "{}"

// MergePatch applies an RFC 7396 JSON merge patch to the JSON object doc
// and returns the result in canonical form: objects merge recursively,
// null deletes a key, anything else (arrays included) replaces. The patch
// must be an object. Numbers keep their exact text.
func MergePatch(doc, patch JSON) (JSON, error) {
	c := getCanon()
	defer putCanon(c)
	return c.mergePatch(doc, patch)
}

// Canonical returns the canonical form of a JSON object: keys sorted, no
// insignificant space, numbers as written.
func Canonical(doc JSON) (JSON, error) {
	c := getCanon()
	defer putCanon(c)
	return c.canonicalDoc(doc)
}

func (c *canon) mergePatch(doc, patch JSON) (JSON, error) {
	c.keys = c.keys[:0]
	var err error
	if k := c.lookup(string(doc)); k != nil { // doc is a result of ours: canonical
		c.target = append(c.target[:0], doc...)
		c.keys = append(c.keys, k.keys...)
		c.targetTop = append(c.targetTop[:0], k.members...)
	} else if c.target, c.targetTop, err = c.read(c.target[:0], c.targetTop[:0], string(doc)); err != nil {
		return "", err
	}
	if c.patch, c.patchTop, err = c.read(c.patch[:0], c.patchTop[:0], string(patch)); err != nil {
		return "", err
	}
	c.scratch, c.merged = mergeMembers(c.scratch[:0], c.merged[:0], c.keys, c.target, c.targetTop, c.patch, c.patchTop)
	out := JSON(c.scratch)
	c.remember(string(out), &c.merged)
	return out, nil
}

func (c *canon) canonicalDoc(doc JSON) (JSON, error) {
	c.keys, c.top = c.keys[:0], c.top[:0]
	if c.scanCanonical(string(doc), &c.top) {
		c.remember(string(doc), &c.top)
		return doc, nil
	}
	out, err := c.canonical(c.target[:0], string(doc))
	c.target = out
	if err != nil {
		return "", err
	}
	c.remember(string(out), &c.top)
	return JSON(out), nil
}

// read appends to dst the canonical form of the JSON object src, and to
// top its top-level members (their keys to c.keys). A document that is
// canonical already, as a task's context is (what an earlier merge
// returned), is read once and copied as it is.
func (c *canon) read(dst []byte, top []member, src string) ([]byte, []member, error) {
	if c.scanCanonical(src, &top) {
		return append(dst, src...), top, nil
	}
	dst, err := c.canonical(dst, src)
	return dst, append(top, c.top...), err
}

// A canon remembers the last documents it returned and their top-level
// members: a task's context is merged into again and again, and the
// document a merge gets is most often one a recent merge returned (in a
// replay of many tasks at work, the merge before last of a context is
// rarely more than 16 merges back). Then it need not read the document
// again to know it is canonical and where its members are. (A pooled
// canon forgets at every garbage collection; the fold's, kept by the
// Memory, does not.)

// knownDoc is a canonical document and its top-level members, whose keys
// are in keys.
type knownDoc struct {
	doc     string
	members []member
	keys    []byte
}

// maxKnown is the largest document a canon remembers.
const maxKnown = 16 << 10

func (c *canon) lookup(doc string) *knownDoc {
	if doc == "" { // what an unused entry holds
		return nil
	}
	for i := range c.known {
		if k := &c.known[i]; len(k.doc) == len(doc) && k.doc == doc {
			return k
		}
	}
	return nil
}

// remember keeps doc, a canonical document with the top-level members
// *ms (their keys in c.keys). It takes *ms and c.keys as they are, and
// gives c the buffers of the document it forgets in their place.
func (c *canon) remember(doc string, ms *[]member) {
	if len(doc) > maxKnown || cap(c.keys) > maxKnown || cap(*ms) > maxKnown {
		return // (large keys or members from a large patch are not kept)
	}
	k := &c.known[c.nextKnown]
	c.nextKnown = (c.nextKnown + 1) % len(c.known)
	k.doc = doc
	k.members, *ms = *ms, k.members[:0]
	k.keys, c.keys = c.keys, k.keys[:0]
}

// The canonical form is the one encoding/json gave the value decoded
// with UseNumber (the implementation before this one, kept in the tests
// as the reference): object keys sorted bytewise by their decoded text,
// a repeated key's last value kept, strings re-escaped (only ", \ and
// control characters, as \b \f \n \r \t or \u00xx, plus U+2028 and
// U+2029; invalid UTF-8 becomes U+FFFD), numbers and literals as written,
// no space. Like json.Decoder, it reads one value and ignores what
// follows it, and refuses nesting deeper than 10000.

var errNotObject = errors.New("not a JSON object")

// maxNesting is encoding/json's limit on nesting.
const maxNesting = 10000

// canon holds the buffers of one canonicalization or merge.
type canon struct {
	src     string
	i       int
	depth   int
	out     []byte
	members []member // of the objects being read, innermost last
	// top is the members of the last top-level object read, targetTop
	// and patchTop those of the target and the patch of a merge.
	top, targetTop, patchTop []member
	scratch                  []byte
	target                   []byte
	patch                    []byte
	text                     []byte // a decoded string
	keys                     []byte // the decoded keys of the members
	merged                   []member
	known                    [16]knownDoc
	nextKnown                int
}

// member is a key and value of an object, written in canonical form at
// out[start:end], the value from out[val:]; its decoded key is
// keys[ka:kb]. (No pointers: keeping members costs no write barriers.)
type member struct {
	ka, kb          int
	start, val, end int
}

var canonPool = sync.Pool{New: func() any { return new(canon) }}

func getCanon() *canon { return canonPool.Get().(*canon) }

// maxPooled is the largest buffer a pooled canon keeps.
const maxPooled = 1 << 16

func putCanon(c *canon) {
	c.trim()
	canonPool.Put(c)
}

// trim readies c for its next use, dropping buffers larger than
// maxPooled.
func (c *canon) trim() {
	c.src = ""
	c.members, c.top, c.targetTop, c.patchTop, c.merged = c.members[:0], c.top[:0], c.targetTop[:0], c.patchTop[:0], c.merged[:0]
	for _, b := range []*[]byte{&c.out, &c.scratch, &c.target, &c.patch, &c.text, &c.keys} {
		if cap(*b) > maxPooled {
			*b = nil
		}
	}
}

// canonical appends to dst the canonical form of the JSON object src
// starts with.
func (c *canon) canonical(dst []byte, src string) ([]byte, error) {
	c.src, c.i, c.depth, c.out = src, 0, 0, dst
	c.space()
	if c.i >= len(src) {
		return dst, errors.New("unexpected end of JSON input")
	}
	isObject := src[c.i] == '{'
	err := c.value()
	out := c.out
	c.src, c.out = "", nil
	if err == nil && !isObject {
		err = errNotObject
	}
	return out, err
}

func (c *canon) space() {
	for c.i < len(c.src) {
		switch c.src[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

type syntaxError struct {
	msg string
	at  int
}

func (e *syntaxError) Error() string { return "invalid JSON: " + e.msg + " at offset " + itoa(e.at) }

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for ; n > 0; n /= 10 {
		i--
		b[i] = byte('0' + n%10)
	}
	return string(b[i:])
}

func (c *canon) fail(msg string) error { return &syntaxError{msg, c.i} }

// value reads one value at c.i (after space) and writes it.
func (c *canon) value() error {
	c.space()
	if c.i >= len(c.src) {
		return c.fail("unexpected end")
	}
	switch ch := c.src[c.i]; {
	case ch == '{':
		return c.object()
	case ch == '[':
		return c.array()
	case ch == '"':
		return c.string(false)
	case ch == '-' || ch >= '0' && ch <= '9':
		return c.number()
	case ch == 't':
		return c.literal("true")
	case ch == 'f':
		return c.literal("false")
	case ch == 'n':
		return c.literal("null")
	}
	return c.fail("looking for the beginning of a value")
}

func (c *canon) literal(lit string) error {
	if !strings.HasPrefix(c.src[c.i:], lit) {
		return c.fail("in literal " + lit)
	}
	c.i += len(lit)
	c.out = append(c.out, lit...)
	return nil
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// number checks a number's grammar and writes it as it is.
func (c *canon) number() error {
	end, problem := numberEnd(c.src, c.i)
	if problem != "" {
		c.i = end
		return c.fail(problem)
	}
	c.out = append(c.out, c.src[c.i:end]...)
	c.i = end
	return nil
}

// numberEnd reads the JSON number at s[i:] and returns where it ends, or
// where its grammar fails and how (encoding/json's words).
func numberEnd(s string, i int) (end int, problem string) {
	digits := func() bool {
		j := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		return i > j
	}
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case !digits():
		return i, "in numeric literal"
	}
	if i < len(s) && s[i] == '.' {
		i++
		if !digits() {
			return i, "after decimal point in numeric literal"
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if !digits() {
			return i, "in exponent of numeric literal"
		}
	}
	return i, ""
}

func (c *canon) nest() error {
	if c.depth++; c.depth > maxNesting {
		return c.fail("exceeded max depth")
	}
	return nil
}

func (c *canon) array() error {
	if err := c.nest(); err != nil {
		return err
	}
	c.i++
	c.out = append(c.out, '[')
	c.space()
	if c.i < len(c.src) && c.src[c.i] == ']' {
		c.i++
		c.out = append(c.out, ']')
		c.depth--
		return nil
	}
	for {
		if err := c.value(); err != nil {
			return err
		}
		c.space()
		if c.i >= len(c.src) {
			return c.fail("unexpected end")
		}
		switch c.src[c.i] {
		case ',':
			c.i++
			c.out = append(c.out, ',')
			continue
		case ']':
			c.i++
			c.out = append(c.out, ']')
			c.depth--
			return nil
		}
		return c.fail("after array element")
	}
}

func (c *canon) object() error {
	if err := c.nest(); err != nil {
		return err
	}
	c.i++
	start, base := len(c.out), len(c.members)
	c.out = append(c.out, '{')
	c.space()
	if c.i < len(c.src) && c.src[c.i] == '}' {
		c.i++
		c.out = append(c.out, '}')
		if c.depth == 1 {
			c.top = c.top[:0]
		}
		c.depth--
		return nil
	}
	sorted := true
	for {
		c.space()
		if c.i >= len(c.src) || c.src[c.i] != '"' {
			return c.fail("looking for the beginning of an object key string")
		}
		m := member{start: len(c.out), ka: len(c.keys)}
		if err := c.string(true); err != nil {
			return err
		}
		m.kb = len(c.keys)
		c.space()
		if c.i >= len(c.src) || c.src[c.i] != ':' {
			return c.fail("after object key")
		}
		c.i++
		c.out = append(c.out, ':')
		m.val = len(c.out)
		if err := c.value(); err != nil {
			return err
		}
		m.end = len(c.out)
		if n := len(c.members); n > base && bytes.Compare(c.key(c.members[n-1]), c.key(m)) >= 0 {
			sorted = false
		}
		c.members = append(c.members, m)
		c.space()
		if c.i >= len(c.src) {
			return c.fail("unexpected end")
		}
		if c.src[c.i] == ',' {
			c.i++
			c.out = append(c.out, ',')
			continue
		}
		if c.src[c.i] != '}' {
			return c.fail("after object key:value pair")
		}
		c.i++
		break
	}
	if !sorted {
		c.sortMembers(start, base)
	}
	c.out = append(c.out, '}')
	if c.depth == 1 {
		c.top = append(c.top[:0], c.members[base:]...)
	}
	c.members = c.members[:base]
	c.depth--
	return nil
}

// key returns the decoded key of m.
func (c *canon) key(m member) []byte { return c.keys[m.ka:m.kb] }

// sortMembers rewrites the members of the object at out[start:] in key
// order, keeping the last of a repeated key.
func (c *canon) sortMembers(start, base int) {
	ms := c.members[base:]
	slices.SortStableFunc(ms, func(a, b member) int { return bytes.Compare(c.key(a), c.key(b)) })
	tmp := append(c.scratch[:0], c.out[start:]...)
	c.scratch = tmp
	c.out = c.out[:start+1]
	kept := ms[:0]
	for i, m := range ms {
		if i+1 < len(ms) && bytes.Equal(c.key(ms[i+1]), c.key(m)) {
			continue // a later value of the same key wins
		}
		if len(c.out) > start+1 {
			c.out = append(c.out, ',')
		}
		at := len(c.out)
		c.out = append(c.out, tmp[m.start-start:m.end-start]...)
		kept = append(kept, member{ka: m.ka, kb: m.kb, start: at, val: at + m.val - m.start, end: len(c.out)})
	}
	c.members = c.members[:base+len(kept)]
}

// string reads a string literal and writes it canonically; with key it
// also appends the decoded text to c.keys.
func (c *canon) string(key bool) error {
	s := c.src
	i := c.i + 1
	for i < len(s) {
		b := s[i]
		if plainByte[b] {
			i++
			continue
		}
		if b == '"' {
			lit := s[c.i : i+1]
			c.out = append(c.out, lit...)
			c.i = i + 1
			if key {
				c.keys = append(c.keys, lit[1:len(lit)-1]...)
			}
			return nil
		}
		if b < utf8.RuneSelf { // \ or a control character
			break
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			break
		}
		i += size
	}
	return c.slowString(key)
}

// plainByte holds the ASCII bytes a canonical string has as they are.
var plainByte = func() (t [256]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

// slowString decodes a string with escapes, control characters or
// characters that are written escaped, as encoding/json does, and writes
// it re-escaped.
func (c *canon) slowString(key bool) error {
	s := c.src
	t := c.text[:0]
	i := c.i + 1
	for {
		if i >= len(s) {
			c.i = i
			return c.fail("unexpected end in string literal")
		}
		b := s[i]
		switch {
		case b == '"':
			c.i = i + 1
			c.text = t
			c.out = AppendJSONString(c.out, t)
			if key {
				c.keys = append(c.keys, t...)
			}
			return nil
		case b < 0x20:
			c.i = i
			return c.fail("in string literal")
		case b == '\\':
			if i+1 >= len(s) {
				c.i = i + 1
				return c.fail("unexpected end in string escape code")
			}
			switch e := s[i+1]; e {
			case '"', '\\', '/':
				t = append(t, e)
			case 'b':
				t = append(t, '\b')
			case 'f':
				t = append(t, '\f')
			case 'n':
				t = append(t, '\n')
			case 'r':
				t = append(t, '\r')
			case 't':
				t = append(t, '\t')
			case 'u':
				r := hex4(s[i+2:])
				if r < 0 {
					c.i = i + 2
					return c.fail("in \\u hexadecimal character escape")
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if r2 := hex4u(s[i:]); r2 >= 0 {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							t = utf8.AppendRune(t, d)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				t = utf8.AppendRune(t, r)
				continue
			default:
				c.i = i + 1
				return c.fail("in string escape code")
			}
			i += 2
		case b < utf8.RuneSelf:
			t = append(t, b)
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			t = utf8.AppendRune(t, r)
			i += size
		}
	}
}

// hex4 reads four hex digits; -1 when they are not.
func hex4(s string) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range []byte(s[:4]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// hex4u reads a \uXXXX escape; -1 when there is none.
func hex4u(s string) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	return hex4(s[2:])
}

const hexDigits = "0123456789abcdef"

// AppendJSONString writes s as a JSON string as encoding/json does with
// HTML escaping off: bad UTF-8 as U+FFFD, U+2028 and U+2029 escaped.
func AppendJSONString[S []byte | string](dst []byte, s S) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(string(s[i:min(len(s), i+utf8.UTFMax)]))
		if c == utf8.RuneError && size == 1 {
			dst = append(append(dst, s[start:i]...), `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(append(dst, s[start:i]...), '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(append(dst, s[start:]...), '"')
}

// Merging canonical objects.

// mergeMembers writes the merge of the canonical object patch into the
// canonical object target, given the members of both (in key order): as
// appendMerge, without reading the top level of either again. It also
// returns the members it wrote, appended to out.
func mergeMembers(dst []byte, out []member, keys, target []byte, tm []member, patch []byte, pm []member) ([]byte, []member) {
	dst = append(dst, '{')
	first := true
	comma := func() {
		if !first {
			dst = append(dst, ',')
		}
		first = false
	}
	// emitted records the member written from at, of key m's.
	emitted := func(m member, at int) {
		out = append(out, member{ka: m.ka, kb: m.kb, start: at, val: at + m.val - m.start, end: len(dst)})
	}
	for i, j := 0, 0; i < len(tm) || j < len(pm); {
		cmp := -1
		switch {
		case i == len(tm):
			cmp = 1
		case j < len(pm):
			cmp = bytes.Compare(keys[tm[i].ka:tm[i].kb], keys[pm[j].ka:pm[j].kb])
		}
		if cmp < 0 {
			comma()
			at := len(dst)
			dst = append(dst, target[tm[i].start:tm[i].end]...)
			emitted(tm[i], at)
			i++
			continue
		}
		var tv []byte
		if cmp == 0 {
			tv = target[tm[i].val:tm[i].end]
			i++
		}
		m := pm[j]
		j++
		switch pv := patch[m.val:m.end]; pv[0] {
		case 'n': // null: delete
		case '{':
			if tv == nil || tv[0] != '{' {
				tv = []byte(EmptyContext)
			}
			comma()
			at := len(dst)
			dst = appendMerge(append(dst, patch[m.start:m.val]...), tv, pv)
			emitted(m, at)
		default:
			comma()
			at := len(dst)
			dst = append(dst, patch[m.start:m.end]...)
			emitted(m, at)
		}
	}
	return append(dst, '}'), out
}

// appendMerge writes the merge of the canonical object patch into the
// canonical object target: both list their keys in order, so the result
// is one pass over both.
func appendMerge(dst, target, patch []byte) []byte {
	if len(target) == len(EmptyContext) && !bytes.Contains(patch, []byte("null")) {
		// Into an empty object, a patch without a null anywhere (nothing
		// to delete) is written as it is.
		return append(dst, patch...)
	}
	dst = append(dst, '{')
	first := true
	emit := func(k, v []byte) {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, k...)
		dst = append(dst, ':')
		dst = append(dst, v...)
	}
	emitPatch := func(k, pv, tv []byte) {
		switch pv[0] {
		case 'n': // null: delete
		case '{':
			if tv == nil || tv[0] != '{' {
				tv = []byte(EmptyContext)
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(dst, k...)
			dst = append(dst, ':')
			dst = appendMerge(dst, tv, pv)
		default:
			emit(k, pv)
		}
	}
	t, p := members(target), members(patch)
	tk, tv, tok := t.next()
	pk, pv, pok := p.next()
	for tok || pok {
		cmp := -1
		switch {
		case !tok:
			cmp = 1
		case pok:
			cmp = compareKeys(tk, pk)
		}
		switch {
		case cmp < 0:
			emit(tk, tv)
			tk, tv, tok = t.next()
		case cmp > 0:
			emitPatch(pk, pv, nil)
			pk, pv, pok = p.next()
		default:
			emitPatch(pk, pv, tv)
			tk, tv, tok = t.next()
			pk, pv, pok = p.next()
		}
	}
	return append(dst, '}')
}

// memberIter walks the members of a canonical object.
type memberIter struct {
	b []byte
	i int
}

func members(obj []byte) memberIter { return memberIter{obj, 1} }

// next returns the next key (quoted, as written) and value.
func (it *memberIter) next() (key, val []byte, ok bool) {
	b := it.b
	if it.i >= len(b) || b[it.i] == '}' {
		return nil, nil, false
	}
	if b[it.i] == ',' {
		it.i++
	}
	k := skipCanonical(b, it.i)
	v := skipCanonical(b, k+1)
	key, val = b[it.i:k], b[k+1:v]
	it.i = v
	return key, val, true
}

// skipCanonical returns the end of the canonical value at b[i].
func skipCanonical(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' {
		i++
	}
	return i
}

func skipString(b []byte, i int) int {
	for i++; ; i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
}

// compareKeys orders two canonical (quoted) keys by their decoded text.
func compareKeys(a, b []byte) int {
	a, b = a[1:len(a)-1], b[1:len(b)-1]
	if !hasBackslash(a) && !hasBackslash(b) {
		return bytes.Compare(a, b)
	}
	return strings.Compare(decodeKey(a), decodeKey(b))
}

func hasBackslash(b []byte) bool {
	for _, c := range b {
		if c == '\\' {
			return true
		}
	}
	return false
}

// decodeKey decodes the text of a canonical string.
func decodeKey(raw []byte) string {
	c := canon{src: `"` + string(raw) + `"`}
	if err := c.string(true); err != nil {
		panic("projection: a canonical key does not decode: " + err.Error())
	}
	return string(c.keys)
}
