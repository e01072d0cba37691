package eventlog

import (
	"errors"
	"fmt"
)

// Sentinel errors. Callers test them with errors.Is; the messages carry the
// package prefix so that wrapped errors read well on a terminal.
var (
	// ErrConflict: an expected-version check failed, or an event id was
	// reused with different content.
	ErrConflict = errors.New("eventlog: conflict")
	// ErrBusy: the file lock could not be taken within Options.Timeout.
	ErrBusy = errors.New("eventlog: busy")
	// ErrTooLarge: an event payload is over MaxPayload.
	ErrTooLarge = errors.New("eventlog: payload too large")
	// ErrInvalid: an append or read request is malformed.
	ErrInvalid = errors.New("eventlog: invalid request")
	// ErrNewerFormat: the file was written by a newer flowctl.
	ErrNewerFormat = errors.New("eventlog: file format is newer than this binary")
	// ErrReadOnly: a write was attempted on a log opened read-only.
	ErrReadOnly = errors.New("eventlog: log is read-only")
	// ErrNotExist: the file does not exist and Options.Create was not set.
	ErrNotExist = errors.New("eventlog: file does not exist")
	// ErrClosed: the log was used after Close.
	ErrClosed = errors.New("eventlog: log is closed")
	// ErrCorrupt is matched by every *CorruptionError.
	ErrCorrupt = errors.New("eventlog: corrupt")
)

// CorruptionError reports damage found in the file. Seq is the first record
// found bad, or 0 when the damage is not tied to one record (meta, bbolt pages).
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

func corruptf(seq uint64, format string, args ...any) error {
	return &CorruptionError{Seq: seq, Reason: fmt.Sprintf(format, args...)}
}
