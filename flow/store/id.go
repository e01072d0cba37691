package store

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"time"
)

// ID is a 16-byte event id. New ids are UUIDv7: a millisecond timestamp
// followed by random bits, so ids sort roughly by creation time.
type ID [16]byte

// NewID returns a UUIDv7 for time t.
func NewID(t time.Time) ID {
	var id ID
	ms := uint64(t.UnixMilli())
	binary.BigEndian.PutUint64(id[:8], ms<<16)
	if _, err := rand.Read(id[6:]); err != nil {
		panic(fmt.Sprintf("eventlog: reading random bytes: %v", err))
	}
	id[6] = id[6]&0x0f | 0x70 // version 7
	id[8] = id[8]&0x3f | 0x80 // RFC 9562 variant
	return id
}

// IsZero reports whether id is the zero id (no id).
func (id ID) IsZero() bool { return id == ID{} }

// String formats id as a canonical 36-character UUID.
func (id ID) String() string {
	var b [36]byte
	hex.Encode(b[0:8], id[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], id[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], id[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], id[8:10])
	b[23] = '-'
	hex.Encode(b[24:], id[10:])
	return string(b[:])
}

// ParseID parses a UUID in canonical form or as 32 hex digits. It
// returns ErrInvalid for anything else.
func ParseID(s string) (ID, error) {
	var id ID
	var h []byte
	switch len(s) {
	case 36:
		if s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
			return id, fmt.Errorf("%w: malformed id %q", ErrInvalid, s)
		}
		h = []byte(s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:])
	case 32:
		h = []byte(s)
	default:
		return id, fmt.Errorf("%w: malformed id %q", ErrInvalid, s)
	}
	if _, err := hex.Decode(id[:], h); err != nil {
		return id, fmt.Errorf("%w: malformed id %q", ErrInvalid, s)
	}
	return id, nil
}
