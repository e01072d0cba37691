package main

import (
	"os"
	"syscall"
	"time"
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

// cpuTime is the CPU time (user and system) this process has used so far;
// 0 when it is not known.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
