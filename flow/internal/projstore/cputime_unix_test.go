//go:build unix

package projstore_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system) the process has used so far:
// on a machine others share, the figure a benchmark can compare.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
