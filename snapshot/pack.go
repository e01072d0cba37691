package snapshot

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"unicode/utf8"

	"github.com/klauspost/compress/s2"
)

// MaxBody is the longest body, decompressed, a packed snapshot may
// declare: a longer one is refused as corrupt before it is decompressed,
// and decompression never allocates more.
const MaxBody = 1 << 30

// unpack returns the body of a snapshot of header h as it was encoded:
// body itself, or for a packed snapshot body decompressed (an S2 block),
// which must be exactly h.BodyLen bytes long. The length the block
// declares is checked before anything is allocated for it.
func unpack(h Header, body []byte) ([]byte, error) {
	if !h.Packed() {
		return body, nil
	}
	n, err := decodedLen(h, body)
	if err != nil {
		return nil, err
	}
	return decodeBlock(make([]byte, n), body)
}

// decodedLen is the length the packed body of h declares, checked
// against the header's.
func decodedLen(h Header, body []byte) (int, error) {
	n, err := s2.DecodedLen(body)
	switch {
	case err != nil:
		return 0, corruptf("body does not decompress: %v", err)
	case uint64(n) != h.BodyLen:
		return 0, corruptf("body decompresses to %d bytes, the header says %d", n, h.BodyLen)
	}
	return n, nil
}

// decodeBlock decompresses the S2 block body into dst, exactly its
// length (decodedLen's).
func decodeBlock(dst, body []byte) ([]byte, error) {
	out, err := s2.Decode(dst, body)
	if err != nil || len(out) != len(dst) {
		return nil, corruptf("body does not decompress: %v", err)
	}
	return out, nil
}

// PackFull returns the packed full snapshot (PackedFullVersion) of the
// state whose body (EncodeState's bytes, or AppendRawScope's) is body,
// described by h. It sets the format version and the state hash (the
// SHA-256 of body); it returns the completed header.
func PackFull(h Header, body []byte) ([]byte, Header, error) {
	h.Format, h.BaseSeq, h.BaseHash = PackedFullVersion, 0, [32]byte{}
	h.StateHash = sha256.Sum256(body)
	h.BodyHash = h.StateHash
	return pack(h, body, nil)
}

// PackDelta returns the packed delta snapshot (PackedDeltaVersion) whose
// body (AppendDeltaBody's bytes) is body, described by h, whose
// StateHash, BaseSeq and BaseHash the caller sets. It sets the format
// version and the body hash; it returns the completed header.
func PackDelta(h Header, body []byte) ([]byte, Header, error) {
	return packDelta(PackedDeltaVersion, h, body)
}

// PackFullSum returns the summed full snapshot (SumFullVersion) of the
// state whose body (AppendRawScope's bytes) is body and whose sum
// (StateSum.Hash, RawSum) is sum, described by h. It sets the format
// version, the state hash (sum) and the body hash (the SHA-256 of body);
// it returns the completed header.
func PackFullSum(h Header, body []byte, sum [32]byte) ([]byte, Header, error) {
	h.Format, h.BaseSeq, h.BaseHash = SumFullVersion, 0, [32]byte{}
	h.StateHash, h.BodyHash = sum, sha256.Sum256(body)
	return pack(h, body, nil)
}

// PackDeltaSum is PackDelta for a delta of version SumDeltaVersion: h's
// StateHash is the sum of the state the delta resolves to; its BaseHash
// is its base's state hash, whatever the base's version.
func PackDeltaSum(h Header, body []byte) ([]byte, Header, error) {
	return packDelta(SumDeltaVersion, h, body)
}

// PackDeltaNames is PackDeltaSum for a delta of version
// NamesDeltaVersion, the one the engine writes: the delta's names
// section (doc.go) is read from body, which must read as a delta's body
// (EachDeltaEntity).
func PackDeltaNames(h Header, body []byte) ([]byte, Header, error) {
	return packDelta(NamesDeltaVersion, h, body)
}

// packDelta packs a delta of version format: it sets the body hash.
func packDelta(format uint16, h Header, body []byte) ([]byte, Header, error) {
	if h.BaseSeq >= h.Seq {
		return nil, h, fmt.Errorf("snapshot: a delta at seq %d needs a base before it, not at %d", h.Seq, h.BaseSeq)
	}
	h.Format = format
	h.BodyHash = sha256.Sum256(body)
	var names []byte
	if h.HasNames() {
		raw, err := appendNames(nil, body)
		if err != nil {
			return nil, h, fmt.Errorf("snapshot: a delta's names: %w", err)
		}
		names = s2.Encode(nil, raw)
	}
	return pack(h, body, names)
}

// pack writes the packed snapshot of header h (format, hashes set) and
// body, and for a format with a names section, names (compressed) and
// the head's CRC before the body.
func pack(h Header, body, names []byte) ([]byte, Header, error) {
	if len(h.Scope) > MaxScope || !utf8.ValidString(h.Scope) {
		return nil, h, fmt.Errorf("snapshot: scope %q is not a valid name", h.Scope)
	}
	if len(body) > MaxBody {
		return nil, h, fmt.Errorf("snapshot: a body of %d bytes is over the limit of %d", len(body), MaxBody)
	}
	h.BodyLen = uint64(len(body))
	b := make([]byte, 0, MinDeltaSize+sumFields+2*bodyLenSize+namesLenSize+len(names)+crcSize+len(h.Scope)+s2.MaxEncodedLen(len(body))+crcSize)
	b = append(b, Magic...)
	b = binary.BigEndian.AppendUint16(b, h.Format)
	b = binary.BigEndian.AppendUint32(b, h.ProjectionVersion)
	b = binary.BigEndian.AppendUint64(b, h.Seq)
	b = append(b, h.ChainHash[:]...)
	b = append(b, h.StateHash[:]...)
	if h.Format == SumFullVersion {
		b = append(b, h.BodyHash[:]...)
	}
	if h.IsDelta() {
		b = binary.BigEndian.AppendUint64(b, h.BaseSeq)
		b = append(b, h.BaseHash[:]...)
		b = append(b, h.BodyHash[:]...)
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(h.Scope)))
	b = append(b, h.Scope...)
	if h.HasNames() {
		b = binary.BigEndian.AppendUint64(b, uint64(len(names)))
		b = append(b, names...)
	}
	b = binary.BigEndian.AppendUint64(b, h.BodyLen)
	at := len(b) + bodyLenSize
	if h.HasNames() {
		at += crcSize
	}
	lenAt := len(b)
	b = append(b, make([]byte, at-len(b))...)
	b = b[:at+len(s2.Encode(b[at:cap(b)], body))]
	binary.BigEndian.PutUint64(b[lenAt:], uint64(len(b)-at))
	if h.HasNames() { // the head's CRC, of all before it
		binary.BigEndian.PutUint32(b[at-crcSize:], crc32.Checksum(b[:at-crcSize], castagnoli))
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)), h, nil
}
