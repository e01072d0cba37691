package eventlog

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"hash/crc32"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// MaxPayload is the largest event payload (Event.Data) accepted, in bytes.
const MaxPayload = 1 << 20

// envelopeFields is the number of elements of the msgpack array that
// encodes a record. The hash is always the last element.
const envelopeFields = 15

// hashFieldLen is the encoded size of the trailing hash element:
// a bin8 header (0xc4, 0x20) and 32 bytes.
const hashFieldLen = 2 + sha256.Size

// crcLen is the size of the CRC32C trailer that follows the envelope.
const crcLen = 4

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Hash is a SHA-256 chain hash.
type Hash [sha256.Size]byte

// Event is what a caller appends: the payload and its metadata. The log
// assigns the stream, version, seq and chain hashes.
type Event struct {
	ID          ID        // zero: the log assigns a new UUIDv7
	Type        string    // e.g. "task.created"; never empty
	Schema      uint32    // schema version of Data for Type
	Time        time.Time // when the event happened (stored as unix ns, UTC)
	Actor       string
	Session     string
	Project     string // indexed: a project's events are one index scan
	Correlation ID
	Causation   ID
	Data        []byte // the payload, msgpack; at most MaxPayload bytes
}

// Record is a stored event: the Event plus what the log assigned.
type Record struct {
	Seq     uint64 // global, gap-free, from 1, in commit order
	Stream  string
	Version uint64 // position in Stream, from 1
	Event
	Prev Hash // Hash of the record at Seq-1; zero for Seq 1
	Hash Hash // SHA-256(Prev || envelope without the hash field)
}

// encodeRecord returns the stored bytes of r: the msgpack envelope followed
// by the CRC32C of the envelope, big-endian. It computes r.Hash.
func encodeRecord(r *Record) []byte {
	var buf bytes.Buffer
	buf.Grow(160 + len(r.Stream) + len(r.Type) + len(r.Actor) + len(r.Session) + len(r.Project) + len(r.Data))
	enc := msgpack.NewEncoder(&buf)
	// Errors from a bytes.Buffer writer cannot happen; the encoder only
	// returns the writer's errors for these primitives.
	_ = enc.EncodeArrayLen(envelopeFields)
	_ = enc.EncodeUint(r.Seq)
	_ = enc.EncodeBytes(r.ID[:])
	_ = enc.EncodeString(r.Stream)
	_ = enc.EncodeUint(r.Version)
	_ = enc.EncodeString(r.Type)
	_ = enc.EncodeUint(uint64(r.Schema))
	_ = enc.EncodeInt(r.Time.UnixNano())
	_ = enc.EncodeString(r.Actor)
	_ = enc.EncodeString(r.Session)
	_ = enc.EncodeString(r.Project)
	_ = enc.EncodeBytes(optionalID(r.Correlation))
	_ = enc.EncodeBytes(optionalID(r.Causation))
	_ = enc.EncodeBytes(r.Data)
	_ = enc.EncodeBytes(r.Prev[:])
	r.Hash = chainHash(r.Prev, buf.Bytes())
	_ = enc.EncodeBytes(r.Hash[:])
	return binary.BigEndian.AppendUint32(buf.Bytes(), crc32.Checksum(buf.Bytes(), castagnoli))
}

// chainHash is SHA-256(prev || body), body being the envelope bytes up to
// (not including) the hash field.
func chainHash(prev Hash, body []byte) Hash {
	h := sha256.New()
	h.Write(prev[:])
	h.Write(body)
	var out Hash
	h.Sum(out[:0])
	return out
}

func optionalID(id ID) []byte {
	if id.IsZero() {
		return nil
	}
	return id[:]
}

// decodeRecord checks the CRC and the hash, then decodes b. It never
// returns a record whose bytes failed a check. seq is the key the record
// was stored under, used for error reports.
func decodeRecord(seq uint64, b []byte) (*Record, error) {
	if len(b) < 1+hashFieldLen+crcLen {
		return nil, corruptf(seq, "record is %d bytes, too short", len(b))
	}
	env := b[:len(b)-crcLen]
	if got, want := crc32.Checksum(env, castagnoli), binary.BigEndian.Uint32(b[len(b)-crcLen:]); got != want {
		return nil, corruptf(seq, "record checksum mismatch (crc32c %08x, stored %08x)", got, want)
	}
	// The hash field is the one part of the envelope the hash does not
	// cover: it must have its one encoding (bin8 of 32 bytes), so that a
	// record has exactly one byte form.
	if h := env[len(env)-hashFieldLen:]; h[0] != 0xc4 || h[1] != sha256.Size {
		return nil, corruptf(seq, "record hash field is not a 32-byte bin8")
	}
	r, err := decodeEnvelope(env)
	if err != nil {
		return nil, corruptf(seq, "record does not decode: %v", err)
	}
	if r.Seq != seq {
		return nil, corruptf(seq, "record stored under seq %d says seq %d", seq, r.Seq)
	}
	if want := chainHash(r.Prev, env[:len(env)-hashFieldLen]); want != r.Hash {
		return nil, corruptf(seq, "record hash does not match its content")
	}
	return r, nil
}

func decodeEnvelope(env []byte) (*Record, error) {
	d := newDecoder(env)
	n, err := d.DecodeArrayLen()
	if err != nil {
		return nil, err
	}
	if n != envelopeFields {
		return nil, errorf("envelope has %d fields, want %d", n, envelopeFields)
	}
	r := &Record{}
	r.Seq = d.uint(&err)
	d.fixed(r.ID[:], &err)
	r.Stream = d.str(&err)
	r.Version = d.uint(&err)
	r.Type = d.str(&err)
	schema := d.uint(&err)
	r.Time = time.Unix(0, d.int(&err)).UTC()
	r.Actor = d.str(&err)
	r.Session = d.str(&err)
	r.Project = d.str(&err)
	d.optional(r.Correlation[:], &err)
	d.optional(r.Causation[:], &err)
	r.Data = d.bytes(&err)
	d.fixed(r.Prev[:], &err)
	d.fixed(r.Hash[:], &err)
	if err != nil {
		return nil, err
	}
	if schema > 1<<32-1 {
		return nil, errorf("schema version %d out of range", schema)
	}
	r.Schema = uint32(schema)
	if d.remaining() != 0 {
		return nil, errorf("trailing bytes after envelope")
	}
	return r, nil
}
