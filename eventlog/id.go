package eventlog

import (
	"time"

	"github.com/flowctl/flowctl/flow/store"
)

// ID is a 16-byte event id (store.ID). New ids are UUIDv7: a millisecond
// timestamp followed by random bits, so ids sort roughly by creation time.
type ID = store.ID

// NewID returns a UUIDv7 for time t.
func NewID(t time.Time) ID { return store.NewID(t) }

// ParseID parses a UUID in canonical form or as 32 hex digits.
func ParseID(s string) (ID, error) { return store.ParseID(s) }
