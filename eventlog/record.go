package eventlog

import (
	"crypto/sha256"
	"encoding/binary"
	"hash/crc32"
	"math"
	"time"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/internal/msgp"
)

// MaxPayload is the largest event payload (Event.Data) accepted, in bytes.
const MaxPayload = store.MaxPayload

// envelopeFields is the number of elements of the msgpack array that
// encodes a record in format 1; envelopeFieldsV2 in format 2, which
// leaves out the seq (the record's key says it) and the prev hash (the
// hash of the record before). The hash is always the last element.
const (
	envelopeFields   = store.EnvelopeFields
	envelopeFieldsV2 = 13
)

// format is a file's format version (meta "format"): it picks how the
// file's records and ids values are encoded (doc.go, "File format").
type format uint32

const (
	formatV1 format = 1
	formatV2 format = 2
)

// envelopeHeader is the first byte of a record of format f.
func (f format) envelopeHeader() byte {
	if f == formatV1 {
		return mpFixArray | envelopeFields
	}
	return mpFixArray | envelopeFieldsV2
}

// formatOfRecord guesses a record's format from its first byte (0 if
// it is neither's): for Salvage, which may not know the file's.
func formatOfRecord(v []byte) format {
	switch {
	case len(v) == 0:
		return 0
	case v[0] == formatV1.envelopeHeader():
		return formatV1
	case v[0] == formatV2.envelopeHeader():
		return formatV2
	}
	return 0
}

// hashFieldLen is the encoded size of the trailing hash element:
// a bin8 header (0xc4, 0x20) and 32 bytes.
const hashFieldLen = 2 + sha256.Size

// crcLen is the size of the CRC32C trailer that follows the envelope.
const crcLen = 4

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// The record types are flow/store's: every backend speaks them.
type (
	// Hash is a SHA-256 chain hash.
	Hash = store.Hash
	// Event is what a caller appends: the payload and its metadata. The
	// log assigns the stream, version, seq and chain hashes.
	Event = store.Event
	// Record is a stored event: the Event plus what the log assigned.
	Record = store.Record
)

// encodeRecord returns the stored bytes of r: the msgpack envelope followed
// by the CRC32C of the envelope, big-endian. It computes r.Hash.
func encodeRecord(r *Record) []byte {
	b := appendBody(make([]byte, 0, recordSizeBound(r)), r)
	r.Hash = chainHash(r.Prev, b)
	b = append(append(b, mpBin8, sha256.Size), r.Hash[:]...)
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// encode returns the stored bytes of r in format f and computes r.Hash
// from r.Prev and r's content: the same hash in every format.
func (f format) encode(r *Record) []byte {
	if f == formatV1 {
		return encodeRecord(r)
	}
	b := appendBodyV2(make([]byte, 0, recordSizeBound(r)), r)
	r.Hash = chainHashV2(r.Prev, r.Seq, b)
	b = append(append(b, mpBin8, sha256.Size), r.Hash[:]...)
	return binary.BigEndian.AppendUint32(b, f.checksum(r.Seq, b))
}

// checksum is the CRC32C a record of format f stored under seq ends with:
// of its envelope in format 1, which holds the seq; in format 2, of the
// seq (8 bytes big-endian, the record's key) and the envelope, so that a
// record stored under another key fails it.
func (f format) checksum(seq uint64, env []byte) uint32 {
	if f == formatV1 {
		return crc32.Checksum(env, castagnoli)
	}
	return crc32.Update(crcSeq(seq), castagnoli, env)
}

// crcSeq is the CRC32C of seq as 8 bytes big-endian, from the slicing
// tables: eight lookups that do not wait on each other, where a byte at
// a time waits on the byte before (crc32.Update would make a slice of
// the bytes escape, an allocation per record).
func crcSeq(seq uint64) uint32 {
	t := &castagnoli8
	// The first four bytes (seq's high half, most significant first)
	// meet the initial ^0; the last four are data alone.
	hi := ^uint32(0) ^ (uint32(seq>>56) | uint32(seq>>48&0xff)<<8 | uint32(seq>>40&0xff)<<16 | uint32(seq>>32&0xff)<<24)
	crc := t[7][hi&0xff] ^ t[6][hi>>8&0xff] ^ t[5][hi>>16&0xff] ^ t[4][hi>>24] ^
		t[3][seq>>24&0xff] ^ t[2][seq>>16&0xff] ^ t[1][seq>>8&0xff] ^ t[0][seq&0xff]
	return ^crc
}

// castagnoli8 are the slicing-by-8 tables of CRC32C: [0] is the byte
// table, [k][b] the CRC of byte b followed by k zero bytes.
var castagnoli8 = func() (t [8][256]uint32) {
	for b := range 256 {
		t[0][b] = castagnoli[b]
	}
	for k := 1; k < 8; k++ {
		for b := range 256 {
			v := t[k-1][b]
			t[k][b] = v>>8 ^ t[0][v&0xff]
		}
	}
	return t
}()

// recordSizeBound is at least the encoded size of r: the variable fields
// plus the largest header and fixed part of each element.
func recordSizeBound(r *Record) int {
	const fixed = 1 + 9 + 18 + 5 + 9 + 5 + 5 + 9 + 3*5 + 2*18 + 5 + 2*hashFieldLen + crcLen
	return fixed + len(r.Stream) + len(r.Type) + len(r.Actor) + len(r.Session) + len(r.Project) + len(r.Data)
}

// appendBody appends the envelope of r up to, not including, the hash
// element: the bytes the hash covers.
func appendBody(b []byte, r *Record) []byte { return store.AppendEnvelope(b, r) }

// appendBodyV2 appends the format-2 envelope of r up to, not including,
// the hash element: the format-1 body without the seq and the prev hash.
func appendBodyV2(b []byte, r *Record) []byte {
	return store.AppendEnvelopeFields(append(b, mpFixArray|envelopeFieldsV2), r)
}

// chainHashV2 is chainHash of the format-1 body of the record at seq
// whose format-2 body is body2: it puts the seq and prev back where
// format 1 has them (elements 0 and 13) as it feeds SHA-256, so that
// both formats chain the same hashes.
func chainHashV2(prev Hash, seq uint64, body2 []byte) Hash {
	// One buffer on the stack for the common record (a hash.Hash's
	// Write makes what it is given escape: an allocation per record).
	var stack [1024]byte
	n := sha256.Size + 1 + 9 + len(body2) - 1 + 2 + sha256.Size
	b := stack[:0]
	if n > len(stack) {
		b = make([]byte, 0, n)
	}
	b = append(b, prev[:]...)
	b = msgp.AppendUint(append(b, mpFixArray|envelopeFields), seq)
	b = append(b, body2[1:]...)
	b = append(append(b, mpBin8, sha256.Size), prev[:]...)
	return sha256.Sum256(b)
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

// hashOnRead makes every read recompute the record's hash (checkHash).
// Without it, CRC32C guards reads against damage and the hash is Verify's
// to check (doc.go, "Reads and the hash chain").
const hashOnRead = true

// decodeRecord decodes the format-1 record b stored under seq: decode
// for format 1.
func decodeRecord(seq uint64, b []byte) (*Record, error) {
	return formatV1.decode(seq, b, Hash{})
}

// decode checks the CRC and the framing of the record b stored under
// seq in format f, then decodes it, and checks the hash if hashOnRead.
// prev is the hash of the record at seq-1, which a format-2 record does
// not store (format 1 ignores it). It never returns a record whose bytes
// failed a check.
//
// The record owns all its memory: its strings and Data are copies, never
// aliases of b, so it stays valid after the transaction that read b.
func (f format) decode(seq uint64, b []byte, prev Hash) (*Record, error) {
	r := new(Record)
	if err := f.decodeInto(r, seq, b, prev, false); err != nil {
		return nil, err
	}
	return r, nil
}

// decodeInto is decode into r. With lend (Replay's reads) it does not
// check the hash, and r.Data aliases b: valid only as long as b is. The
// strings are copies either way. On error r is undefined.
func (f format) decodeInto(r *Record, seq uint64, b []byte, prev Hash, lend bool) error {
	return f.decodeCached(r, seq, b, prev, lend, nil)
}

// decodeLent is decodeInto with lend, its strings from (and into) c:
// Replay's read, which hands on one record at a time.
func (f format) decodeLent(r *Record, seq uint64, b []byte, prev Hash, c *internCache) error {
	return f.decodeCached(r, seq, b, prev, true, c)
}

// decodeCached is decodeInto with the record's strings taken from c
// when it holds them (c nil: copied).
func (f format) decodeCached(r *Record, seq uint64, b []byte, prev Hash, lend bool, c *internCache) error {
	env, err := f.checkFrame(seq, b)
	if err != nil {
		return err
	}
	if err := decodeEnvelopeInto(r, env, lend, f, c); err != nil {
		return corruptf(seq, "record does not decode: %v", err)
	}
	if f != formatV1 {
		r.Seq, r.Prev = seq, prev
	} else if r.Seq != seq {
		return corruptf(seq, "record stored under seq %d says seq %d", seq, r.Seq)
	}
	if hashOnRead && !lend {
		return f.checkHash(r, env)
	}
	return nil
}

// storedHash returns the hash the record b of format f stored under seq
// holds, after checking its CRC and framing (not the hash): the prev of
// the format-2 record at seq+1.
func (f format) storedHash(seq uint64, b []byte) (Hash, error) {
	var h Hash
	if _, err := f.checkFrame(seq, b); err != nil {
		return h, err
	}
	copy(h[:], b[len(b)-crcLen-sha256.Size:])
	return h, nil
}

// checkFrame checks b's length (stored under seq, in format f), CRC and hash field and returns the
// envelope (b without the CRC).
func (f format) checkFrame(seq uint64, b []byte) ([]byte, error) {
	if len(b) < 1+hashFieldLen+crcLen {
		return nil, corruptf(seq, "record is %d bytes, too short", len(b))
	}
	env := b[:len(b)-crcLen]
	if got, want := f.checksum(seq, env), binary.BigEndian.Uint32(b[len(b)-crcLen:]); got != want {
		return nil, corruptf(seq, "record checksum mismatch (crc32c %08x, stored %08x)", got, want)
	}
	// The hash field is the one part of the envelope the hash does not
	// cover: it must have its one encoding (bin8 of 32 bytes), so that a
	// record has exactly one byte form.
	if h := env[len(env)-hashFieldLen:]; h[0] != mpBin8 || h[1] != sha256.Size {
		return nil, corruptf(seq, "record hash field is not a 32-byte bin8")
	}
	return env, nil
}

// checkHash checks that r, decoded from env of format f, holds the hash
// of its content.
func (f format) checkHash(r *Record, env []byte) error {
	body := env[:len(env)-hashFieldLen]
	if f == formatV1 {
		if chainHash(r.Prev, body) != r.Hash {
			return corruptf(r.Seq, "record hash does not match its content")
		}
		return nil
	}
	// The prev hash is the record before's: a rewrite of that record
	// with a recomputed hash shows here, as format 1's chain check
	// shows it.
	if chainHashV2(r.Prev, r.Seq, body) != r.Hash {
		return corruptf(r.Seq, "record hash does not match its content and the hash chain (the hash of seq %d)", r.Seq-1)
	}
	return nil
}

// decodeEnvelope parses the msgpack array of a record. The strings of the
// record share one allocation, Data has its own.
func decodeEnvelope(env []byte) (*Record, error) {
	r := new(Record)
	if err := decodeEnvelopeInto(r, env, false, formatV1, nil); err != nil {
		return nil, err
	}
	return r, nil
}

// decodeEnvelopeInto is decodeEnvelope into r, for an envelope of format
// f. It sets every field of r but, for format 2, Seq and Prev, which the
// envelope does not hold. With lend, r.Data aliases env instead of being
// a copy. With c, the strings come from c (copies either way).
func decodeEnvelopeInto(r *Record, env []byte, lend bool, f format, c *internCache) error {
	p := parser{b: env}
	if c := p.code(); p.err == nil && c != f.envelopeHeader() {
		return errorf("envelope starts with 0x%02x, want an array of %d fields", c, f.envelopeHeader()&0x0f)
	}
	r.Correlation, r.Causation = ID{}, ID{}
	v1 := f == formatV1
	if v1 {
		r.Seq = p.uint()
	}
	p.fixed(r.ID[:])
	stream := p.str()
	first := p.off - len(stream) // the strings lie in env[first:p.off]
	r.Version = p.uint()
	typ := p.str()
	typEnd := p.off
	schema := p.uint()
	nanos := p.int()
	actor := p.str()
	actorEnd := p.off
	session := p.str()
	sessionEnd := p.off
	project := p.str()
	last := p.off
	p.optional(&r.Correlation)
	p.optional(&r.Causation)
	data := p.bin()
	if v1 {
		p.fixed(r.Prev[:])
	}
	p.fixed(r.Hash[:])
	switch {
	case p.err != nil:
		return p.err
	case p.off != len(env):
		return errorf("%d trailing bytes after the envelope", len(env)-p.off)
	case schema > math.MaxUint32:
		return errorf("schema version %d out of range", schema)
	}
	if c != nil {
		// r holds the record before's strings (Replay reuses it).
		r.Stream, r.Type, r.Actor = c.stream(stream, r.Stream), c.name(typ, r.Type), c.name(actor, r.Actor)
		r.Session, r.Project = c.name(session, r.Session), c.name(project, r.Project)
	} else {
		s := string(env[first:last])
		sub := func(end, n int) string { return s[end-first-n : end-first] }
		r.Stream = s[:len(stream)]
		r.Type = sub(typEnd, len(typ))
		r.Actor = sub(actorEnd, len(actor))
		r.Session = sub(sessionEnd, len(session))
		r.Project = sub(last, len(project))
	}
	r.Schema = uint32(schema)
	r.Time = time.Unix(0, nanos).UTC()
	switch {
	case data == nil:
		r.Data = nil
	case lend:
		r.Data = data[:len(data):len(data)]
	default:
		r.Data = make([]byte, len(data))
		copy(r.Data, data)
	}
	return nil
}
