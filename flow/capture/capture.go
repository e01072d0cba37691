package capture

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"strings"
	"unicode/utf8"

	"github.com/flowctl/flowctl/projection"
)

// Limit is how much of a command's stdout or stderr an exec record
// keeps at each end: the first Limit bytes (Head) and the last
// Limit bytes not already in Head (Tail).
const Limit = 16 << 10

// Writer is an io.Writer that keeps what an exec record stores of a
// stream: its first and last Limit bytes, its length and the
// SHA-256 of all of it, in bounded memory. It is not safe for concurrent
// use; give each stream its own.
type Writer struct {
	head []byte
	tail []byte // the last bytes written: at least min(n, Limit)
	n    int64
	sum  hash.Hash
}

// New returns an empty capture.
func New() *Writer { return &Writer{sum: sha256.New()} }

// Write keeps p; it never fails.
func (c *Writer) Write(p []byte) (int, error) {
	c.sum.Write(p)
	c.n += int64(len(p))
	if room := Limit - len(c.head); room > 0 {
		c.head = append(c.head, p[:min(room, len(p))]...)
	}
	if len(p) >= Limit {
		c.tail = append(c.tail[:0], p[len(p)-Limit:]...)
	} else if c.tail = append(c.tail, p...); len(c.tail) > 2*Limit {
		c.tail = append(c.tail[:0], c.tail[len(c.tail)-Limit:]...)
	}
	return len(p), nil
}

// Output returns what is kept. Head is the stream's first Limit
// bytes, cut back so as not to split a UTF-8 sequence; Tail is its last
// Limit bytes that are not in Head, starting on a rune boundary
// (empty when Head holds everything). Both are valid UTF-8 of at most
// Limit bytes: invalid bytes are replaced with U+FFFD. Bytes and
// SHA256 are those of the exact stream.
func (c *Writer) Output() projection.Output {
	out := projection.Output{Bytes: c.n, SHA256: hex.EncodeToString(c.sum.Sum(nil))}
	if c.n <= Limit {
		out.Head = validHead(c.head)
		return out
	}
	cut := runeCut(c.head)
	out.Head = validHead(c.head[:cut])
	rest := c.n - int64(cut)
	k := int(min(rest, Limit))
	tail := c.tail[len(c.tail)-k:]
	if int64(k) < rest {
		tail = skipContinuation(tail)
	}
	out.Tail = validTail(tail)
	return out
}

// String returns the kept part of a whole stream s.
func String(s string) projection.Output {
	c := New()
	c.Write([]byte(s))
	return c.Output()
}

// runeCut returns len(b) less an incomplete UTF-8 sequence at its end.
func runeCut(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}

// skipContinuation drops the continuation bytes of a rune cut at b's start.
func skipContinuation(b []byte) []byte {
	i := 0
	for i < len(b) && i < utf8.UTFMax-1 && !utf8.RuneStart(b[i]) {
		i++
	}
	return b[i:]
}

func validHead(b []byte) string {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if len(s) <= Limit {
		return s
	}
	i := Limit
	for !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

func validTail(b []byte) string {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if len(s) <= Limit {
		return s
	}
	i := len(s) - Limit
	for !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}
