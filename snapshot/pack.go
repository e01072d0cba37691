package snapshot

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"sync"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"
)

// MaxBody is the longest body, decompressed, a packed snapshot may
// declare: a longer one is refused as corrupt before it is decompressed,
// and decompression never allocates more.
const MaxBody = 1 << 30

// The one zstd encoder and decoder: EncodeAll and DecodeAll are safe for
// concurrent use, and each keeps its state between calls.
var (
	encoder = sync.OnceValue(func() *zstd.Encoder {
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(false),
			zstd.WithEncoderConcurrency(1), zstd.WithZeroFrames(true))
		if err != nil {
			panic(err) // the options are constant
		}
		return e
	})
	decoder = sync.OnceValue(func() *zstd.Decoder {
		d, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(MaxBody), zstd.WithDecoderConcurrency(0))
		if err != nil {
			panic(err)
		}
		return d
	})
)

// unpack returns the body of a snapshot of header h as it was encoded:
// body itself, or for a packed snapshot body decompressed, which must be
// exactly h.BodyLen bytes long.
func unpack(h Header, body []byte) ([]byte, error) {
	if !h.Packed() {
		return body, nil
	}
	out, err := decoder().DecodeAll(body, make([]byte, 0, h.BodyLen))
	switch {
	case err != nil:
		return nil, corruptf("body does not decompress: %v", err)
	case uint64(len(out)) != h.BodyLen:
		return nil, corruptf("body decompresses to %d bytes, the header says %d", len(out), h.BodyLen)
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
	return pack(h, body)
}

// PackDelta returns the packed delta snapshot (PackedDeltaVersion) whose
// body (AppendDeltaBody's bytes) is body, described by h, whose
// StateHash, BaseSeq and BaseHash the caller sets. It sets the format
// version and the body hash; it returns the completed header.
func PackDelta(h Header, body []byte) ([]byte, Header, error) {
	if h.BaseSeq >= h.Seq {
		return nil, h, fmt.Errorf("snapshot: a delta at seq %d needs a base before it, not at %d", h.Seq, h.BaseSeq)
	}
	h.Format = PackedDeltaVersion
	h.BodyHash = sha256.Sum256(body)
	return pack(h, body)
}

// pack writes the packed snapshot of header h (format, hashes set) and
// body.
func pack(h Header, body []byte) ([]byte, Header, error) {
	if len(h.Scope) > MaxScope || !utf8.ValidString(h.Scope) {
		return nil, h, fmt.Errorf("snapshot: scope %q is not a valid name", h.Scope)
	}
	if len(body) > MaxBody {
		return nil, h, fmt.Errorf("snapshot: a body of %d bytes is over the limit of %d", len(body), MaxBody)
	}
	h.BodyLen = uint64(len(body))
	b := make([]byte, 0, MinDeltaSize+bodyLenSize+len(h.Scope)+len(body)/8+64)
	b = append(b, Magic...)
	b = binary.BigEndian.AppendUint16(b, h.Format)
	b = binary.BigEndian.AppendUint32(b, h.ProjectionVersion)
	b = binary.BigEndian.AppendUint64(b, h.Seq)
	b = append(b, h.ChainHash[:]...)
	b = append(b, h.StateHash[:]...)
	if h.IsDelta() {
		b = binary.BigEndian.AppendUint64(b, h.BaseSeq)
		b = append(b, h.BaseHash[:]...)
		b = append(b, h.BodyHash[:]...)
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(h.Scope)))
	b = append(b, h.Scope...)
	b = binary.BigEndian.AppendUint64(b, h.BodyLen)
	at := len(b) + bodyLenSize
	b = encoder().EncodeAll(body, append(b, make([]byte, bodyLenSize)...))
	binary.BigEndian.PutUint64(b[at-bodyLenSize:], uint64(len(b)-at))
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli)), h, nil
}
