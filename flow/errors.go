package flow

import (
	"errors"
	"io/fs"

	"github.com/flowctl/flowctl/flow/internal/check"
	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/snapshot"
)

// Sentinel errors of the engine. The store's own errors (store.ErrBusy,
// store.ErrConflict, store.ErrCorrupt, ...) pass through wrapped.
var (
	ErrNotFound = errors.New("flow: not found")
	// ErrInvalid: input the engine refuses. It is package check's
	// sentinel, so that the checks below flow wrap this very value.
	ErrInvalid = check.ErrInvalid
	ErrExists  = errors.New("flow: already exists")
	// ErrPending: an approval is not decided yet (exit 6).
	ErrPending = errors.New("flow: pending")
	// ErrDamagedProjection: a projection record (an entity or an entry
	// of the status index) fails its checksum or does not decode (exit
	// 7). The log is untouched; a rebuild makes the record again.
	ErrDamagedProjection = projstore.ErrDamaged
)

// Code is the stable, transport-neutral name of an error class: the CLI
// maps it to an exit code, the MCP server to a tool error code.
type Code string

// The codes of DESIGN.md §8.
const (
	CodeOK       Code = "ok"
	CodeInternal Code = "internal"
	CodeInvalid  Code = "invalid"
	CodeNotFound Code = "not_found"
	CodeConflict Code = "conflict"
	CodeBusy     Code = "busy"
	CodePending  Code = "pending"
	CodeCorrupt  Code = "corrupt"
	CodeVetoed   Code = "vetoed" // a pre-commit hook refused the command (Hooks)
)

// ErrorCode classifies err. It is the one table from errors to codes.
func ErrorCode(err error) Code {
	switch {
	case err == nil:
		return CodeOK
	case errors.Is(err, store.ErrCorrupt), errors.Is(err, store.ErrNewerFormat), errors.Is(err, snapshot.ErrCorrupt),
		errors.Is(err, ErrDamagedProjection):
		return CodeCorrupt
	case errors.Is(err, ErrVetoed):
		return CodeVetoed
	case errors.Is(err, store.ErrBusy):
		return CodeBusy
	case errors.Is(err, ErrPending):
		return CodePending
	case errors.Is(err, ErrNotFound), errors.Is(err, store.ErrNotExist), errors.Is(err, fs.ErrNotExist):
		return CodeNotFound
	case errors.Is(err, ErrExists), errors.Is(err, ErrBlocked), errors.Is(err, store.ErrConflict):
		return CodeConflict
	case errors.Is(err, ErrInvalid), errors.Is(err, store.ErrInvalid), errors.Is(err, store.ErrTooLarge),
		errors.Is(err, store.ErrNoDriver):
		return CodeInvalid
	}
	return CodeInternal
}
