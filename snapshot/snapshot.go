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
	var s projection.Scope
	if err := msgpack.Unmarshal(body, &s); err != nil {
		return h, nil, corruptf("body does not decode: %v", err)
	}
	if s.Project != nil && s.Project.Name != h.Scope {
		return h, nil, corruptf("body is the state of project %q, the header says %q", s.Project.Name, h.Scope)
	}
	return h, &s, nil
}
