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

// FormatVersion is the newest snapshot format this package reads: 1, a
// full snapshot, 2, a delta, 3 and 4 the same with a compressed body, 5
// and 6 the same as 3 and 4 with the state hash a sum of the entities'
// digests (StateSum), 7 version 6 with a names section (doc.go). A
// version above it is refused.
const FormatVersion = NamesDeltaVersion

// The layouts, told apart by the format version field.
const (
	// FullVersion is the layout of a full snapshot: a whole state.
	FullVersion = 1
	// DeltaVersion is the layout of a delta snapshot: the entities that
	// changed since a base snapshot.
	DeltaVersion = 2
	// PackedFullVersion is FullVersion with its body compressed (an S2 block).
	PackedFullVersion = 3
	// PackedDeltaVersion is DeltaVersion with its body compressed (an S2 block).
	PackedDeltaVersion = 4
	// SumFullVersion is PackedFullVersion whose state hash is the state's
	// sum (StateSum), with the body's SHA-256 in a field of its own.
	SumFullVersion = 5
	// SumDeltaVersion is PackedDeltaVersion whose state hash (and its
	// base's, when the base is of version 5 or 6) is the state's sum.
	SumDeltaVersion = 6
	// NamesDeltaVersion is SumDeltaVersion with a names section before
	// the body: the ids and names of the entities the delta holds, read
	// without the body (Head, NamesReader).
	NamesDeltaVersion = 7
)

// Sizes of the fixed parts.
const (
	fixedHeader  = 8 + 2 + 4 + 8 + 32 + 32 + 2 // up to the scope, full
	deltaFields  = 8 + 32 + 32                 // base seq, base state hash, body hash
	sumFields    = 32                          // a summed full snapshot's body hash
	bodyLenSize  = 8
	crcSize      = 4
	namesLenSize = 8 // a names section's length (version 7)
	// MinSize is the size of a full snapshot with an empty scope and body.
	MinSize = fixedHeader + bodyLenSize + crcSize
	// MinDeltaSize is the size of a delta with an empty scope and body.
	MinDeltaSize = MinSize + deltaFields
	// MaxScope is the longest scope name.
	MaxScope = 1 << 10
)

// ErrCorrupt is matched by every *CorruptError.
var ErrCorrupt = errors.New("snapshot: corrupt")

// ErrDelta is Decode's refusal of a sound delta snapshot, which holds
// only what changed since its base: DecodeDelta reads it.
var ErrDelta = errors.New("snapshot: a delta snapshot, not a whole state")

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
	Format            uint16 // FullVersion or DeltaVersion
	ProjectionVersion uint32
	Scope             string
	Seq               uint64
	ChainHash         [32]byte
	// StateHash is the SHA-256 of the whole state's body: of a full
	// snapshot's body, of the state a delta resolves to.
	StateHash [32]byte
	// A delta's base: the seq of the snapshot it applies to and that
	// snapshot's StateHash. Zero in a full snapshot.
	BaseSeq  uint64
	BaseHash [32]byte
	// BodyHash is the SHA-256 of this snapshot's body: StateHash for a
	// full snapshot, the delta's own for a delta.
	BodyHash [32]byte
	// BodyLen is the length of the body, decompressed.
	BodyLen uint64
}

// IsDelta reports whether h is a delta's header.
func (h Header) IsDelta() bool {
	return h.Format == DeltaVersion || h.Format == PackedDeltaVersion || h.Format == SumDeltaVersion || h.Format == NamesDeltaVersion
}

// Packed reports whether h's body is stored compressed.
func (h Header) Packed() bool { return h.Format >= PackedFullVersion && h.Format <= NamesDeltaVersion }

// Summed reports whether h's state hash is the state's sum (StateSum:
// formats 5, 6 and 7), rather than the SHA-256 of its body.
func (h Header) Summed() bool {
	return h.Format == SumFullVersion || h.Format == SumDeltaVersion || h.Format == NamesDeltaVersion
}

// HasNames reports whether h's snapshot has a names section (format 7).
func (h Header) HasNames() bool { return h.Format == NamesDeltaVersion }

// HashState returns the state hash of s as a snapshot of h's format
// names it: its sum (SumOf) for formats 5 and 6, else the SHA-256 of its
// body (StateHash). A resolved chain is checked with its top's.
func (h Header) HashState(s *projection.Scope) [32]byte {
	if h.Summed() {
		return SumOf(s)
	}
	hash, _ := StateHash(s)
	return hash
}

// EncodeState returns the deterministic msgpack body of a state.
func EncodeState(s *projection.Scope) ([]byte, error) {
	return projection.AppendScope(nil, s), nil
}

// StateHash returns the SHA-256 of a state's body.
func StateHash(s *projection.Scope) ([32]byte, error) {
	return sha256.Sum256(projection.AppendScope(make([]byte, 0, sizeHint(s)), s)), nil
}

// Encode returns the snapshot of state s described by h. It sets the
// format version and the state hash; it returns the completed header.
func Encode(h Header, s *projection.Scope) ([]byte, Header, error) {
	if len(h.Scope) > MaxScope || !utf8.ValidString(h.Scope) {
		return nil, h, fmt.Errorf("snapshot: scope %q is not a valid name", h.Scope)
	}
	h.Format, h.BaseSeq, h.BaseHash = FullVersion, 0, [32]byte{}
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
	h.BodyHash, h.BodyLen = h.StateHash, uint64(len(body))
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
// format, declared lengths, CRC and body hash, of a full snapshot or a
// delta. It returns the header and the body.
func Check(b []byte) (Header, []byte, error) {
	h, body, err := checkFrame(b)
	if err == nil {
		body, err = unpack(h, body)
	}
	if err != nil {
		return h, nil, err
	}
	if sha256.Sum256(body) != h.BodyHash {
		return h, nil, errBodyHash
	}
	return h, body, nil
}

var errBodyHash = &CorruptError{Reason: "state hash does not match the body"}

// IsDelta reports whether b says it is a delta snapshot. It checks
// nothing else: Check and DecodeDelta do.
func IsDelta(b []byte) bool {
	return len(b) >= 10 && string(b[:8]) == Magic && (Header{Format: binary.BigEndian.Uint16(b[8:])}).IsDelta()
}

// Frame checks b as Check does but for the body hash (length, magic,
// format, declared lengths, CRC) and returns the header: what a reader
// of a chain of snapshots needs to find and check the links before it
// decodes a body (Decode and DecodeDelta then check the body hash).
func Frame(b []byte) (Header, error) {
	h, _, err := checkFrame(b)
	return h, err
}

// checkFrame is Check but for the body hash.
func checkFrame(b []byte) (Header, []byte, error) {
	h, f, err := frameOf(b, len(b))
	if err != nil {
		return h, nil, err
	}
	crcAt := len(b) - crcSize
	if got, want := crc32.Checksum(b[:crcAt], castagnoli), binary.BigEndian.Uint32(b[crcAt:]); got != want {
		return h, nil, corruptf("checksum mismatch (crc32c %08x, stored %08x)", got, want)
	}
	if f.headEnd > 0 {
		if err := checkHeadCRC(b[:f.headEnd]); err != nil {
			return h, nil, err
		}
	}
	if f.late != nil {
		return f.lateHeader, nil, f.late
	}
	return h, b[f.bodyAt:crcAt], nil
}

// framing is where the parts of a snapshot lie (frameOf).
type framing struct {
	namesAt, namesEnd int // a names section's (compressed), in version 7; else 0
	headEnd           int // the end of version 7's head (after its CRC); else 0
	bodyAt            int // the body's (stored)
	// late is what the header says that is refused once the CRC it is
	// under checks (a body over MaxBody, a delta's base not before it),
	// and lateHeader the header as far as it was read then.
	late       error
	lateHeader Header
}

// frameOf reads the header and framing of a snapshot of size bytes from
// b, its first bytes (all of them, or at least a version 7 delta's head):
// the magic, the format version, that the declared lengths fit in b and
// add up to size. It checks no CRC: what the header says that is refused
// once its CRC checks is in the framing's late.
func frameOf(b []byte, size int) (Header, framing, error) {
	var h Header
	var f framing
	if len(b) < MinSize {
		return h, f, corruptf("%d bytes, shorter than the smallest snapshot (%d)", len(b), MinSize)
	}
	if string(b[:8]) != Magic {
		return h, f, corruptf("bad magic %q", b[:8])
	}
	h.Format = binary.BigEndian.Uint16(b[8:])
	fixed, lens := fixedHeader, bodyLenSize
	if h.Packed() {
		lens += bodyLenSize // the body's length decompressed, then stored
	}
	switch h.Format {
	case FullVersion, PackedFullVersion:
	case SumFullVersion:
		fixed += sumFields
	case DeltaVersion, PackedDeltaVersion, SumDeltaVersion, NamesDeltaVersion:
		fixed += deltaFields
	default:
		return h, f, corruptf("format version %d: this binary reads versions %d (full), %d (delta), %d and %d (the same, compressed), %d and %d (the same, summed), %d (a summed delta with names)",
			h.Format, FullVersion, DeltaVersion, PackedFullVersion, PackedDeltaVersion, SumFullVersion, SumDeltaVersion, NamesDeltaVersion)
	}
	names := 0 // a names section's length field, the section and the head's CRC
	if h.HasNames() {
		names = namesLenSize + crcSize
	}
	min := fixed + names + lens + crcSize
	if size < min || len(b) < fixed || (!h.HasNames() && len(b) != size) { // only a delta with names is read from its head
		return h, f, corruptf("%d bytes, shorter than the smallest snapshot of version %d (%d)", size, h.Format, min)
	}
	n := int(binary.BigEndian.Uint16(b[fixed-2:]))
	if min+n > size {
		return h, f, corruptf("scope length %d runs past the end", n)
	}
	at := fixed + n // after the scope
	if h.HasNames() {
		if len(b) < at+namesLenSize {
			return h, f, corruptf("%d bytes, shorter than the head of the snapshot", len(b))
		}
		k := binary.BigEndian.Uint64(b[at:])
		if k > uint64(size-min-n) {
			return h, f, corruptf("names section length %d runs past the end", k)
		}
		f.namesAt, f.namesEnd = at+namesLenSize, at+namesLenSize+int(k)
		f.headEnd = f.namesEnd + lens + crcSize
		if len(b) < f.headEnd {
			return h, f, corruptf("%d bytes, shorter than the head of the snapshot (%d)", len(b), f.headEnd)
		}
		at = f.namesEnd
	}
	f.bodyAt = at + lens
	if h.HasNames() {
		f.bodyAt += crcSize
	}
	m := binary.BigEndian.Uint64(b[at+lens-bodyLenSize:])
	if follow := size - f.bodyAt - crcSize; m != uint64(follow) {
		return h, f, corruptf("body length %d, but %d bytes follow the header", m, follow)
	}
	h.BodyLen = m
	if h.Packed() {
		if h.BodyLen = binary.BigEndian.Uint64(b[at:]); h.BodyLen > MaxBody {
			f.late = corruptf("a body of %d bytes decompressed, over the limit of %d", h.BodyLen, MaxBody)
			f.lateHeader = h
		}
	}
	h.ProjectionVersion = binary.BigEndian.Uint32(b[10:])
	h.Seq = binary.BigEndian.Uint64(b[14:])
	copy(h.ChainHash[:], b[22:54])
	copy(h.StateHash[:], b[54:86])
	h.BodyHash = h.StateHash
	if h.Format == SumFullVersion {
		copy(h.BodyHash[:], b[86:118])
	}
	if h.IsDelta() {
		h.BaseSeq = binary.BigEndian.Uint64(b[86:])
		copy(h.BaseHash[:], b[94:126])
		copy(h.BodyHash[:], b[126:158])
		if h.BaseSeq >= h.Seq && f.late == nil {
			f.late = corruptf("a delta at seq %d on a base at seq %d, not before it", h.Seq, h.BaseSeq)
			f.lateHeader = h
		}
	}
	h.Scope = string(b[fixed : fixed+n])
	return h, f, nil
}

// checkHeadCRC checks the CRC that ends a version 7 delta's head.
func checkHeadCRC(head []byte) error {
	crcAt := len(head) - crcSize
	if got, want := crc32.Checksum(head[:crcAt], castagnoli), binary.BigEndian.Uint32(head[crcAt:]); got != want {
		return corruptf("head checksum mismatch (crc32c %08x, stored %08x)", got, want)
	}
	return nil
}

// Decode checks b (see Check) and decodes the state. The length, the
// framing and the CRC are checked before a byte of the body is decoded;
// the state hash of a big body is computed on another goroutine while
// the body decodes, and a mismatch fails Decode as it fails Check. The
// state keeps no reference to b: b may be bytes that are valid only for
// the length of a read transaction.
//
// A delta (which IsDelta tells) is refused with ErrDelta once it passed
// the checks: DecodeDelta reads it.
func Decode(b []byte) (Header, *projection.Scope, error) {
	h, body, err := checkFrame(b)
	if err == nil {
		body, err = unpack(h, body)
	}
	if err != nil {
		return h, nil, err
	}
	if h.IsDelta() {
		if sha256.Sum256(body) != h.BodyHash {
			return h, nil, errBodyHash
		}
		return h, nil, ErrDelta
	}
	s, err := decodeFull(h, body)
	return h, s, err
}

// decodeFull checks the body of full snapshot h against its hash and
// decodes it.
func decodeFull(h Header, body []byte) (*projection.Scope, error) {
	var s *projection.Scope
	var n int
	err := hashWhile(body, h.BodyHash, func() (err error) {
		s, n, err = projection.DecodeScope(body)
		return err
	})
	switch {
	case err == errBodyHash:
		return nil, err
	case err != nil:
		return nil, corruptf("body does not decode: %v", err)
	case n != len(body):
		return nil, corruptf("body has %d bytes after the state", len(body)-n)
	case s.Project != nil && s.Project.Name != h.Scope:
		return nil, corruptf("body is the state of project %q, the header says %q", s.Project.Name, h.Scope)
	}
	return s, nil
}

// hashWhile runs decode and checks that body hashes to want: first for a
// small body, on another goroutine while decode runs for a big one. A
// mismatch is errBodyHash, whatever decode returned.
func hashWhile(body []byte, want [32]byte, decode func() error) error {
	if len(body) < parallelHash {
		if sha256.Sum256(body) != want {
			return errBodyHash
		}
		return decode()
	}
	hashed := make(chan [32]byte, 1)
	go func() { hashed <- sha256.Sum256(body) }()
	err := decode()
	if <-hashed != want {
		return errBodyHash
	}
	return err
}

// parallelHash is the body size from which Decode hashes the body while
// it decodes it: a goroutine costs about a microsecond, hashing 256 KB
// about a hundred.
const parallelHash = 256 << 10
