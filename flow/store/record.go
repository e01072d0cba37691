package store

import (
	"crypto/sha256"
	"fmt"
	"time"
)

// MaxPayload is the largest event payload (Event.Data) accepted, in bytes.
const MaxPayload = 1 << 20

// Limits on the metadata of an event, in bytes.
const (
	MaxStreamLen = 1024
	MaxTypeLen   = 256
	MaxFieldLen  = 1024 // actor, session, project
)

// Hash is a SHA-256 chain hash.
type Hash [sha256.Size]byte

// Event is what a caller appends: the payload and its metadata. The store
// assigns the stream, version, seq and chain hashes.
type Event struct {
	ID          ID        // zero: the store assigns a new UUIDv7
	Type        string    // e.g. "task.created"; never empty
	Schema      uint32    // schema version of Data for Type
	Time        time.Time // when the event happened (stored as unix ns, UTC)
	Actor       string
	Session     string
	Project     string // indexed: a project's events are one index read
	Correlation ID
	Causation   ID
	Data        []byte // the payload, msgpack; at most MaxPayload bytes
}

// Record is a stored event: the Event plus what the store assigned.
type Record struct {
	Seq     uint64 // global, gap-free, from 1, in commit order
	Stream  string
	Version uint64 // position in Stream, from 1
	Event
	Prev Hash // Hash of the record at Seq-1; zero for Seq 1
	Hash Hash // SHA-256(Prev || envelope without the hash field)
}

// Expect is the expected-version condition of an append.
type Expect struct {
	version uint64
	any     bool
}

// Any appends whatever the stream's version.
var Any = Expect{any: true}

// NoStream appends only if the stream does not exist yet.
var NoStream = Expect{}

// Exact appends only if the stream is at version v (0: does not exist).
func Exact(v uint64) Expect { return Expect{version: v} }

// IsAny reports whether e accepts any version (Any).
func (e Expect) IsAny() bool { return e.any }

// Version is the version e expects; meaningless when IsAny.
func (e Expect) Version() uint64 { return e.version }

// Allows reports whether a stream at version v meets e.
func (e Expect) Allows(v uint64) bool { return e.any || e.version == v }

func (e Expect) String() string {
	if e.any {
		return "any"
	}
	return fmt.Sprint(e.version)
}

// Appended reports the outcome of an append.
type Appended struct {
	Seqs      []uint64 // the seq of each event, in order
	Version   uint64   // the stream's version after the last event
	Duplicate bool     // every event was already stored: nothing was appended
}
