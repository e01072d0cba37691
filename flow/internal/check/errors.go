package check

import "errors"

// ErrInvalid is the engine's sentinel for input it refuses. Package flow
// exports this very value as flow.ErrInvalid, so errors.Is holds on both
// sides of the package line; its text is the engine's.
var ErrInvalid = errors.New("flow: invalid input")
