package store

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every backend returns these, wrapped with context, so
// that callers test them with errors.Is whatever the backend. The messages
// keep the words they had when they were eventlog's (the adapters strip
// the prefix), so that no output changed when they moved here.
var (
	// ErrConflict: an expected-version check failed, or an event id was
	// reused with different content.
	ErrConflict = errors.New("eventlog: conflict")
	// ErrBusy: the store's lock could not be taken within Options.Timeout.
	ErrBusy = errors.New("eventlog: busy")
	// ErrTooLarge: an event payload is over MaxPayload.
	ErrTooLarge = errors.New("eventlog: payload too large")
	// ErrInvalid: an append or read request is malformed.
	ErrInvalid = errors.New("eventlog: invalid request")
	// ErrNewerFormat: the store was written by a newer flowctl.
	ErrNewerFormat = errors.New("eventlog: file format is newer than this binary")
	// ErrReadOnly: a write was attempted on a store opened read-only, or
	// in a read transaction.
	ErrReadOnly = errors.New("eventlog: log is read-only")
	// ErrNotExist: the store does not exist and Options.Create was not set.
	ErrNotExist = errors.New("eventlog: file does not exist")
	// ErrClosed: the store was used after Close.
	ErrClosed = errors.New("eventlog: log is closed")
	// ErrCorrupt is matched by every *CorruptionError.
	ErrCorrupt = errors.New("eventlog: corrupt")
	// ErrStop, returned by a read's callback, ends the read early without
	// an error.
	ErrStop = errors.New("eventlog: stop")
	// ErrNoDriver: no driver is registered for a data source name's scheme.
	ErrNoDriver = errors.New("store: no driver")
)

// CorruptionError reports damage found in the store. Seq is the first
// record found bad, or 0 when the damage is not tied to one record (the
// backend's own structures: meta, pages, tables).
type CorruptionError struct {
	Seq    uint64
	Reason string
}

func (e *CorruptionError) Error() string {
	if e.Seq == 0 {
		return fmt.Sprintf("eventlog: corrupt: %s", e.Reason)
	}
	return fmt.Sprintf("eventlog: corrupt at seq %d: %s", e.Seq, e.Reason)
}

// Is makes errors.Is(err, ErrCorrupt) true for every CorruptionError.
func (e *CorruptionError) Is(target error) bool { return target == ErrCorrupt }

// VersionConflict is returned when a stream is not at the expected
// version. errors.Is(err, ErrConflict) is true for it.
type VersionConflict struct {
	Stream   string
	Expected uint64
	Actual   uint64
}

func (e *VersionConflict) Error() string {
	return fmt.Sprintf("eventlog: conflict: stream %q is at version %d, expected %d", e.Stream, e.Actual, e.Expected)
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *VersionConflict) Is(target error) bool { return target == ErrConflict }
