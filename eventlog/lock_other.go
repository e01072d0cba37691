//go:build !unix

package eventlog

import (
	"os"
	"time"
)

// lockingOpener leaves locking to bbolt's own flock on platforms without
// syscall.Flock; bbolt honours Options.Timeout there.
func lockingOpener(exclusive bool, timeout time.Duration) func(string, int, os.FileMode) (*os.File, error) {
	return os.OpenFile
}
