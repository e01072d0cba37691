package snapshot

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"unicode/utf8"

	"github.com/flowctl/flowctl/projection"
	"github.com/vmihailenco/msgpack/v5"
)

// Magic opens every snapshot.
const Magic = "FLOWSNAP"

// FormatVersion is the snapshot format this package writes and reads.
const FormatVersion = 1

// Sizes of the fixed parts.
const (
	fixedHeader = 8 + 2 + 4 + 8 + 32 + 32 + 2 // up to the scope
	bodyLenSize = 8
	crcSize     = 4
	// MinSize is the size of a snapshot with an empty scope and body.
	MinSize = fixedHeader + bodyLenSize + crcSize
	// MaxScope is the longest scope name.
	MaxScope = 1 << 10
)

// ErrCorrupt is matched by every *CorruptError.
var ErrCorrupt = errors.New("snapshot: corrupt")

// CorruptError reports a snapshot that failed a check.
type CorruptError struct{ Reason string }

func (e *CorruptError) Error() string { return "snapshot: corrupt: " + e.Reason }

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

func corruptf(format string, args ...any) error {
	return &CorruptError{Reason: fmt.Sprintf(format, args...)}
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Header describes a snapshot.
type Header struct {
	Format            uint16
	ProjectionVersion uint32
	Scope             string
	Seq               uint64
	ChainHash         [32]byte
	StateHash         [32]byte
}

// EncodeState returns the deterministic msgpack body of a state.
func EncodeState(s *projection.Scope) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	if err := enc.Encode(s); err != nil {
		return nil, fmt.Errorf("snapshot: encoding the state: %w", err)
	}
	return buf.Bytes(), nil
}

// StateHash returns the SHA-256 of a state's body.
func StateHash(s *projection.Scope) ([32]byte, error) {
	body, err := EncodeState(s)
	if err != nil {
		return [32]byte{}, err
	}
	return sha256.Sum256(body), nil
}

// Encode returns the snapshot of state s described by h. It sets the
// format version and the state hash; it returns the completed header.
func Encode(h Header, s *projection.Scope) ([]byte, Header, error) {
	if len(h.Scope) > MaxScope || !utf8.ValidString(h.Scope) {
		return nil, h, fmt.Errorf("snapshot: scope %q is not a valid name", h.Scope)
	}
	body, err := EncodeState(s)
	if err != nil {
		return nil, h, err
	}
	h.Format, h.StateHash = FormatVersion, sha256.Sum256(body)
	b := make([]byte, 0, MinSize+len(h.Scope)+len(body))
	b = append(b, Magic...)
	b = binary.BigEndian.AppendUint16(b, h.Format)
	b = binary.BigEndian.AppendUint32(b, h.ProjectionVersion)
	b = binary.BigEndian.AppendUint64(b, h.Seq)
	b = append(b, h.ChainHash[:]...)
	b = append(b, h.StateHash[:]...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(h.Scope)))
	b = append(b, h.Scope...)
	b = binary.BigEndian.AppendUint64(b, uint64(len(body)))
	b = append(b, body...)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)), h, nil
}

// Check verifies everything but the body's decoding: length, magic,
// format, declared lengths, CRC and state hash. It returns the header and
// the body.
func Check(b []byte) (Header, []byte, error) {
	var h Header
	if len(b) < MinSize {
		return h, nil, corruptf("%d bytes, shorter than the smallest snapshot (%d)", len(b), MinSize)
	}
	if string(b[:8]) != Magic {
		return h, nil, corruptf("bad magic %q", b[:8])
	}
	h.Format = binary.BigEndian.Uint16(b[8:])
	if h.Format != FormatVersion {
		return h, nil, corruptf("format version %d, this binary reads %d", h.Format, FormatVersion)
	}
	n := int(binary.BigEndian.Uint16(b[86:]))
	if fixedHeader+n+bodyLenSize+crcSize > len(b) {
		return h, nil, corruptf("scope length %d runs past the end", n)
	}
	m := binary.BigEndian.Uint64(b[fixedHeader+n:])
	if m != uint64(len(b)-MinSize-n) {
		return h, nil, corruptf("body length %d, but %d bytes follow the header", m, len(b)-MinSize-n)
	}
	crcAt := len(b) - crcSize
	if got, want := crc32.Checksum(b[:crcAt], castagnoli), binary.BigEndian.Uint32(b[crcAt:]); got != want {
		return h, nil, corruptf("checksum mismatch (crc32c %08x, stored %08x)", got, want)
	}
	h.ProjectionVersion = binary.BigEndian.Uint32(b[10:])
	h.Seq = binary.BigEndian.Uint64(b[14:])
	copy(h.ChainHash[:], b[22:54])
	copy(h.StateHash[:], b[54:86])
	h.Scope = string(b[fixedHeader : fixedHeader+n])
	body := b[fixedHeader+n+bodyLenSize : crcAt]
	if sha256.Sum256(body) != h.StateHash {
		return h, nil, corruptf("state hash does not match the body")
	}
	return h, body, nil
}

// Decode checks b (see Check) and decodes the state.
func Decode(b []byte) (Header, *projection.Scope, error) {
	h, body, err := Check(b)
	if err != nil {
		return h, nil, err
	}
	if err := checkShape(body); err != nil {
		return h, nil, corruptf("body is not one well-formed value: %v", err)
	}
	var s projection.Scope
	if err := msgpack.Unmarshal(body, &s); err != nil {
		return h, nil, corruptf("body does not decode: %v", err)
	}
	if s.Project != nil && s.Project.Name != h.Scope {
		return h, nil, corruptf("body is the state of project %q, the header says %q", s.Project.Name, h.Scope)
	}
	return h, &s, nil
}

// maxDepth bounds the nesting of a body; a state nests a few levels.
const maxDepth = 32

// checkShape walks a msgpack body without decoding it, iteratively: it
// must be exactly one value, nested at most maxDepth deep, and every
// array or map must claim no more elements than bytes follow it (each
// element takes at least one). Decoding then allocates in proportion to
// the body, never to a count the body claims (msgpack v5.4.1 preallocates
// a slice of whatever length an array header says), and its recursion
// stays shallow.
func checkShape(b []byte) error {
	pending := []uint64{1} // values still to read at each open level
	for i := 0; ; {
		for len(pending) > 0 && pending[len(pending)-1] == 0 {
			pending = pending[:len(pending)-1]
		}
		if len(pending) == 0 {
			if i != len(b) {
				return fmt.Errorf("%d bytes after the value", len(b)-i)
			}
			return nil
		}
		if i >= len(b) {
			return errors.New("truncated")
		}
		pending[len(pending)-1]--
		skip, n, next, err := msgpackItem(b, i)
		if err != nil {
			return err
		}
		if skip > uint64(len(b)-next) {
			return fmt.Errorf("a value at byte %d runs past the end", i)
		}
		i = next + int(skip)
		if n == 0 {
			continue
		}
		if n > uint64(len(b)-i) {
			return fmt.Errorf("a container at byte %d claims %d elements in %d bytes", i, n, len(b)-i)
		}
		if len(pending) >= maxDepth {
			return fmt.Errorf("nested deeper than %d", maxDepth)
		}
		pending = append(pending, n)
	}
}

// msgpackItem reads the header of the value at b[i]: the bytes of data
// that follow its header, the values it contains (a map's keys and values
// both count), and where its data starts.
func msgpackItem(b []byte, i int) (skip, n uint64, next int, err error) {
	c := b[i]
	i++
	size := func(width int) (uint64, int, error) {
		if len(b)-i < width {
			return 0, i, errors.New("truncated")
		}
		var v uint64
		for _, x := range b[i : i+width] {
			v = v<<8 | uint64(x)
		}
		return v, i + width, nil
	}
	switch {
	case c <= 0x7f || c >= 0xe0, c == 0xc0, c == 0xc2, c == 0xc3: // fixint, nil, false, true
		return 0, 0, i, nil
	case c <= 0x8f: // fixmap
		return 0, 2 * uint64(c&0x0f), i, nil
	case c <= 0x9f: // fixarray
		return 0, uint64(c & 0x0f), i, nil
	case c <= 0xbf: // fixstr
		return uint64(c & 0x1f), 0, i, nil
	}
	switch c {
	case 0xcc, 0xd0:
		return 1, 0, i, nil
	case 0xcd, 0xd1:
		return 2, 0, i, nil
	case 0xca, 0xce, 0xd2:
		return 4, 0, i, nil
	case 0xcb, 0xcf, 0xd3:
		return 8, 0, i, nil
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1, 2, 4, 8, 16, after a type byte
		return 1 + 1<<(c-0xd4), 0, i, nil
	case 0xc4, 0xd9: // bin8, str8
		skip, next, err = size(1)
	case 0xc5, 0xda:
		skip, next, err = size(2)
	case 0xc6, 0xdb:
		skip, next, err = size(4)
	case 0xc7, 0xc8, 0xc9: // ext 8, 16, 32, after a type byte
		skip, next, err = size(1 << (c - 0xc7))
		skip++
	case 0xdc, 0xde: // array16, map16
		n, next, err = size(2)
	case 0xdd, 0xdf: // array32, map32
		n, next, err = size(4)
	default: // 0xc1: never used
		return 0, 0, i, fmt.Errorf("code %#x at byte %d is not msgpack", c, i-1)
	}
	if c == 0xde || c == 0xdf {
		n *= 2
	}
	return skip, n, next, err
}
