package main

import (
	"os"
	"syscall"
)

// peakRSS is the peak resident set of a finished process in KiB (Linux's
// ru_maxrss); 0 when it is not known.
func peakRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss
	}
	return 0
}
