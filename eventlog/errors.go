package eventlog

import (
	"fmt"

	"github.com/flowctl/flowctl/flow/store"
)

// Sentinel errors: flow/store's, which every backend returns, named here
// too so that this package's callers need not import store. Callers test
// them with errors.Is.
var (
	ErrConflict    = store.ErrConflict
	ErrBusy        = store.ErrBusy
	ErrTooLarge    = store.ErrTooLarge
	ErrInvalid     = store.ErrInvalid
	ErrNewerFormat = store.ErrNewerFormat
	ErrReadOnly    = store.ErrReadOnly
	ErrNotExist    = store.ErrNotExist
	ErrClosed      = store.ErrClosed
	ErrCorrupt     = store.ErrCorrupt
	// ErrStop ends a Read* scan early without an error.
	ErrStop = store.ErrStop
)

// CorruptionError reports damage found in the file (store.CorruptionError).
// Seq is the first record found bad, or 0 when the damage is not tied to
// one record (meta, bbolt pages).
type CorruptionError = store.CorruptionError

func corruptf(seq uint64, format string, args ...any) error {
	return &CorruptionError{Seq: seq, Reason: fmt.Sprintf(format, args...)}
}
