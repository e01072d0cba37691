package store

import (
	"crypto/sha256"

	"github.com/flowctl/flowctl/internal/msgp"
)

// The chain hash of a record is SHA-256 over the previous record's hash
// and the record's envelope up to, not including, its hash element: a
// msgpack array of EnvelopeFields values (seq, id, stream, version, type,
// schema, time in unix ns, actor, session, project, correlation,
// causation, data, prev, hash), each in its shortest form, the zero
// correlation and causation as nil. Every backend chains the same hashes,
// whatever it stores: eventlog stores this envelope (format 1) or one
// without the seq and prev (format 2), pgstore stores columns.

// EnvelopeFields is the number of elements of the envelope.
const EnvelopeFields = 15

// AppendEnvelope appends the envelope of r up to, not including, its
// hash element: the bytes its chain hash covers after r.Prev.
func AppendEnvelope(b []byte, r *Record) []byte {
	b = msgp.AppendUint(append(b, msgp.FixArray|EnvelopeFields), r.Seq)
	return msgp.AppendBin(AppendEnvelopeFields(b, r), r.Prev[:])
}

// AppendEnvelopeFields appends the envelope's elements from the id to
// the data.
func AppendEnvelopeFields(b []byte, r *Record) []byte {
	b = msgp.AppendBin(b, r.ID[:])
	b = msgp.AppendStr(b, r.Stream)
	b = msgp.AppendUint(b, r.Version)
	b = msgp.AppendStr(b, r.Type)
	b = msgp.AppendUint(b, uint64(r.Schema))
	b = msgp.AppendInt(b, r.Time.UnixNano())
	b = msgp.AppendStr(b, r.Actor)
	b = msgp.AppendStr(b, r.Session)
	b = msgp.AppendStr(b, r.Project)
	b = msgp.AppendBin(b, OptionalID(r.Correlation))
	b = msgp.AppendBin(b, OptionalID(r.Causation))
	return msgp.AppendBin(b, r.Data)
}

// OptionalID is id's bytes, or nil for the zero id: how the envelope
// writes a correlation or causation.
func OptionalID(id ID) []byte {
	if id.IsZero() {
		return nil
	}
	return id[:]
}

// ChainHash returns the chain hash of r from its fields and r.Prev; r.Hash
// is not read.
func ChainHash(r *Record) Hash {
	// One buffer on the stack for the common record (a hash.Hash's Write
	// makes what it is given escape: an allocation per record).
	var stack [1024]byte
	b := stack[:0]
	if n := 256 + len(r.Stream) + len(r.Type) + len(r.Actor) + len(r.Session) + len(r.Project) + len(r.Data); n > len(stack) {
		b = make([]byte, 0, n)
	}
	b = AppendEnvelope(append(b, r.Prev[:]...), r)
	return sha256.Sum256(b)
}
