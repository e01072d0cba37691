package snapshot

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"unicode/utf8"

	"github.com/flowctl/flowctl/projection"
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
	return projection.AppendScope(nil, s), nil
}

// StateHash returns the SHA-256 of a state's body.
func StateHash(s *projection.Scope) ([32]byte, error) {
	return sha256.Sum256(projection.AppendScope(nil, s)), nil
}

// Encode returns the snapshot of state s described by h. It sets the
// format version and the state hash; it returns the completed header.
func Encode(h Header, s *projection.Scope) ([]byte, Header, error) {
	if len(h.Scope) > MaxScope || !utf8.ValidString(h.Scope) {
		return nil, h, fmt.Errorf("snapshot: scope %q is not a valid name", h.Scope)
	}
	h.Format = FormatVersion
	b := make([]byte, 0, sizeHint(s))
	b = append(b, Magic...)
	b = binary.BigEndian.AppendUint16(b, h.Format)
	b = binary.BigEndian.AppendUint32(b, h.ProjectionVersion)
	b = binary.BigEndian.AppendUint64(b, h.Seq)
	b = append(b, h.ChainHash[:]...)
	b = append(b, make([]byte, 32)...) // the state hash, once the body is written
	b = binary.BigEndian.AppendUint16(b, uint16(len(h.Scope)))
	b = append(b, h.Scope...)
	bodyAt := len(b) + bodyLenSize
	b = projection.AppendScope(append(b, make([]byte, bodyLenSize)...), s)
	body := b[bodyAt:]
	binary.BigEndian.PutUint64(b[bodyAt-bodyLenSize:], uint64(len(body)))
	h.StateHash = sha256.Sum256(body)
	copy(b[54:86], h.StateHash[:])
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)), h, nil
}

// sizeHint is about the size of the snapshot of s, so that Encode
// rarely grows its buffer.
func sizeHint(s *projection.Scope) int {
	n := MinSize + MaxScope + 512*(len(s.Plans)+len(s.Approvals)+len(s.Execs)+len(s.Checkpoints))
	for _, t := range s.Tasks {
		if t != nil {
			n += 384 + 192*len(t.Steps) + len(t.Context) + len(t.Description)
		}
	}
	return n
}

// Check verifies everything but the body's decoding: length, magic,
// format, declared lengths, CRC and state hash. It returns the header and
// the body.
func Check(b []byte) (Header, []byte, error) {
	h, body, err := checkFrame(b)
	if err != nil {
		return h, nil, err
	}
	if sha256.Sum256(body) != h.StateHash {
		return h, nil, errStateHash
	}
	return h, body, nil
}

var errStateHash = &CorruptError{Reason: "state hash does not match the body"}

// checkFrame is Check but for the state hash.
func checkFrame(b []byte) (Header, []byte, error) {
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
	return h, b[fixedHeader+n+bodyLenSize : crcAt], nil
}

// Decode checks b (see Check) and decodes the state. The length, the
// framing and the CRC are checked before a byte of the body is decoded;
// the state hash of a big body is computed on another goroutine while
// the body decodes, and a mismatch fails Decode as it fails Check. The
// state keeps no reference to b: b may be bytes that are valid only for
// the length of a read transaction.
func Decode(b []byte) (Header, *projection.Scope, error) {
	h, body, err := checkFrame(b)
	if err != nil {
		return h, nil, err
	}
	var s *projection.Scope
	var n int
	if len(body) < parallelHash {
		if sha256.Sum256(body) != h.StateHash {
			return h, nil, errStateHash
		}
		s, n, err = projection.DecodeScope(body)
	} else {
		hashed := make(chan [32]byte, 1)
		go func() { hashed <- sha256.Sum256(body) }()
		s, n, err = projection.DecodeScope(body)
		if <-hashed != h.StateHash {
			return h, nil, errStateHash
		}
	}
	switch {
	case err != nil:
		return h, nil, corruptf("body does not decode: %v", err)
	case n != len(body):
		return h, nil, corruptf("body has %d bytes after the state", len(body)-n)
	case s.Project != nil && s.Project.Name != h.Scope:
		return h, nil, corruptf("body is the state of project %q, the header says %q", s.Project.Name, h.Scope)
	}
	return h, s, nil
}

// parallelHash is the body size from which Decode hashes the body while
// it decodes it: a goroutine costs about a microsecond, hashing 256 KB
// about a hundred.
const parallelHash = 256 << 10
