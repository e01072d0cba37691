package capture

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"
)

// execPattern returns n bytes of ASCII that differ with position, so that
// a misplaced cut shows.
func execPattern(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(strings.Repeat(string(rune('a'+i%26)), 1+i%7))
	}
	return b.String()[:n]
}

func execSHA(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestWriter_Output(t *testing.T) {
	const k = Limit
	for _, n := range []int{0, 1, 100, k - 1, k, k + 1, k + 100, 2*k - 1, 2 * k, 2*k + 1, 5*k + 3} {
		s := execPattern(n)
		c := New()
		c.Write([]byte(s))
		got := c.Output()
		wantHead, wantTail := s[:min(n, k)], s[min(n, max(k, n-k)):]
		if got.Head != wantHead || got.Tail != wantTail {
			t.Errorf("n=%d: head %d bytes, tail %d bytes; want %d and %d", n, len(got.Head), len(got.Tail), len(wantHead), len(wantTail))
		}
		if got.Bytes != int64(n) || got.SHA256 != execSHA(s) {
			t.Errorf("n=%d: bytes %d sha %s; want %d %s", n, got.Bytes, got.SHA256, n, execSHA(s))
		}
		if n <= 2*k && got.Head+got.Tail != s {
			t.Errorf("n=%d: head+tail is not the whole stream", n)
		}
	}
}

func TestWriter_ChunkedWritesKeepTheSame(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, n := range []int{10, Limit + 7, 3*Limit + 11, 9 * Limit} {
		s := []byte(execPattern(n))
		c := New()
		for rest := s; len(rest) > 0; {
			m := min(len(rest), 1+rng.Intn(3*Limit))
			if rng.Intn(3) == 0 {
				m = min(len(rest), 1+rng.Intn(10))
			}
			c.Write(rest[:m])
			rest = rest[m:]
		}
		if got, want := c.Output(), String(string(s)); got != want {
			t.Errorf("n=%d: chunked output differs from one write", n)
		}
	}
}

func TestString_UTF8(t *testing.T) {
	const k = Limit
	t.Run("HeadCutBeforeRune", func(t *testing.T) {
		s := strings.Repeat("a", k-1) + "é" + strings.Repeat("b", 100)
		got := String(s)
		if got.Head != strings.Repeat("a", k-1) || got.Tail != "é"+strings.Repeat("b", 100) {
			t.Errorf("head ends %q, tail starts %q; want the rune moved whole to the tail", got.Head[len(got.Head)-3:], got.Tail[:4])
		}
	})
	t.Run("TailStartsOnRune", func(t *testing.T) {
		s := strings.Repeat("a", 20000) + "€" + strings.Repeat("b", k-1)
		got := String(s)
		if got.Tail != strings.Repeat("b", k-1) {
			t.Errorf("tail = %d bytes starting %q, want the %d b's after the cut rune", len(got.Tail), got.Tail[:3], k-1)
		}
	})
	t.Run("HeadEndsWithFourByteRune", func(t *testing.T) {
		s := strings.Repeat("a", k-2) + "😀" + strings.Repeat("c", 3*k)
		got := String(s)
		if got.Head != strings.Repeat("a", k-2) || !utf8.ValidString(got.Tail) {
			t.Errorf("head = %d bytes, want %d", len(got.Head), k-2)
		}
	})
	t.Run("InvalidBytesReplaced", func(t *testing.T) {
		s := "ok\xff\xfe then\x80"
		got := String(s)
		if got.Head != "ok\uFFFD then\uFFFD" || got.Bytes != int64(len(s)) || got.SHA256 != execSHA(s) {
			t.Errorf("output = %+v, want invalid bytes replaced, bytes and sha of the raw stream", got)
		}
	})
	t.Run("InvalidBytesStayWithinLimit", func(t *testing.T) {
		var b strings.Builder
		for b.Len() < 3*k {
			b.WriteString("\xffa") // each bad byte becomes 3 bytes
		}
		got := String(b.String())
		if len(got.Head) > k || len(got.Tail) > k || !utf8.ValidString(got.Head) || !utf8.ValidString(got.Tail) {
			t.Errorf("head %d, tail %d bytes; want valid UTF-8 of at most %d each", len(got.Head), len(got.Tail), k)
		}
	})
	t.Run("Property", func(t *testing.T) {
		rng := rand.New(rand.NewSource(7))
		runes := []string{"a", "é", "€", "😀", "\n"}
		for i := 0; i < 200; i++ {
			var b strings.Builder
			n := rng.Intn(3 * k)
			for b.Len() < n {
				b.WriteString(runes[rng.Intn(len(runes))])
			}
			s := b.String()
			got := String(s)
			ok := utf8.ValidString(got.Head) && utf8.ValidString(got.Tail) && len(got.Head) <= k && len(got.Tail) <= k &&
				strings.HasPrefix(s, got.Head) && strings.HasSuffix(s, got.Tail) && len(got.Head)+len(got.Tail) <= len(s) &&
				(len(s) <= k || len(got.Head) > k-utf8.UTFMax) && (len(s) > 2*k-utf8.UTFMax || got.Head+got.Tail == s)
			if !ok {
				t.Fatalf("len %d: head %d, tail %d bytes break the rules", len(s), len(got.Head), len(got.Tail))
			}
		}
	})
}
