//go:build !unix

package hooks

import (
	"errors"
	"io"
)

// Supported reports whether hooks run on this system.
const Supported = false

const unsupported = "hooks are not supported on this system (Unix only)"

func run(string, Input, io.Writer) (int, error) { return 0, errors.New(unsupported) }

func refusal(string) string { return unsupported }
