package snapshot

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/projection"
)

// TestSkip_AgreesWithTheRecursiveWalk: skip (without recursion) ends
// every value where a plain recursive walk of msgpack ends it, and
// refuses what it refuses (truncations, bytes flipped, nesting past
// maxDepth), on entity encodings and bytes mutated from them.
func TestSkip_AgreesWithTheRecursiveWalk(t *testing.T) {
	var seeds [][]byte
	for i := range 30 {
		task := &projection.Task{ID: fmt.Sprintf("T-%d", i), Title: strings.Repeat("a task ", i), Status: "doing", Context: projection.JSON(fmt.Sprintf(`{"k":%d}`, i))}
		e, ok := projection.AppendEntity(nil, task)
		if !ok {
			t.Fatal("a task does not encode")
		}
		seeds = append(seeds, e)
	}
	deep := func(n int) []byte {
		b := make([]byte, 0, n+1)
		for range n {
			b = append(b, 0x91) // an array of one
		}
		return append(b, 0x01)
	}
	// maps and arrays in each other, every scalar form
	nested := []byte{0x83, 0xa1, 'a', 0x92, 0xcc, 0xff, 0xd9, 0x02, 'h', 'i', 0xa1, 'b', 0x81, 0xc4, 0x01, 'z', 0xdc, 0x00, 0x02, 0xcb, 0, 0, 0, 0, 0, 0, 0, 0, 0xd4, 0x01, 0x02,
		0xa1, 'c', 0xde, 0x00, 0x01, 0xc7, 0x01, 0x05, 0x07, 0xdd, 0, 0, 0, 1, 0xc3}
	seeds = append(seeds, nested, deep(maxDepth-1), deep(maxDepth), deep(maxDepth+1), deep(maxDepth+5), []byte{0xdf, 0xff, 0xff, 0xff, 0xff})
	r := rand.New(rand.NewPCG(1, 2))
	check := func(b []byte, depth int) {
		t.Helper()
		for at := 0; at <= len(b); at++ {
			got, gok := skip(b, at, depth)
			want, wok := skipRecursive(b, at, depth)
			if gok != wok || (gok && got != want) {
				t.Fatalf("skip(%x, %d, %d) = %d, %v; the recursive walk gives %d, %v", b, at, depth, got, gok, want, wok)
			}
		}
	}
	for _, s := range seeds {
		for depth := range 3 {
			check(s, depth)
		}
		for range 300 {
			b := append([]byte(nil), s...)
			for range 1 + r.IntN(3) {
				b[r.IntN(len(b))] = byte(r.IntN(256))
			}
			check(b[:r.IntN(len(b)+1)], 0)
			check(b, 0)
		}
	}
}

// skipRecursive is the walk skip replaced: the reference it is tested
// against.
func skipRecursive(b []byte, at, depth int) (int, bool) {
	if at >= len(b) || depth > maxDepth {
		return 0, false
	}
	c := b[at]
	var size uint64 // bytes of data after the header
	hdr := 1
	switch {
	case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
	case c&0xe0 == 0xa0:
		size = uint64(c & 0x1f)
	case c&0xf0 == 0x80 || c&0xf0 == 0x90 || c == 0xdc || c == 0xdd || c == 0xde || c == 0xdf:
		var n, next int
		var ok bool
		isMap := c&0xf0 == 0x80 || c == 0xde || c == 0xdf
		if isMap {
			n, next, ok = mapLen(b, at)
			n *= 2
		} else {
			n, next, ok = arrayLen(b, at)
		}
		if !ok {
			return 0, false
		}
		for range n {
			if next, ok = skipRecursive(b, next, depth+1); !ok {
				return 0, false
			}
		}
		return next, true
	case c == 0xcc || c == 0xd0:
		size = 1
	case c == 0xcd || c == 0xd1:
		size = 2
	case c == 0xce || c == 0xd2 || c == 0xca:
		size = 4
	case c == 0xcf || c == 0xd3 || c == 0xcb:
		size = 8
	case c == 0xd9 || c == 0xc4:
		v, ok := be(b, at+1, 1)
		size, hdr = v, 2
		if !ok {
			return 0, false
		}
	case c == 0xda || c == 0xc5:
		v, ok := be(b, at+1, 2)
		size, hdr = v, 3
		if !ok {
			return 0, false
		}
	case c == 0xdb || c == 0xc6:
		v, ok := be(b, at+1, 4)
		size, hdr = v, 5
		if !ok {
			return 0, false
		}
	case c >= 0xd4 && c <= 0xd8: // fixext: a type byte and 1, 2, 4, 8 or 16 bytes
		size, hdr = 1<<(c-0xd4), 2
	case c == 0xc7 || c == 0xc8 || c == 0xc9: // ext 8, 16, 32: a length, a type byte
		w := 1 << (c - 0xc7)
		v, ok := be(b, at+1, w)
		size, hdr = v, 2+w
		if !ok {
			return 0, false
		}
	default:
		return 0, false
	}
	end := uint64(at) + uint64(hdr) + size
	if end > uint64(len(b)) {
		return 0, false
	}
	return int(end), true
}
