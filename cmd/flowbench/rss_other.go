//go:build !linux

package main

import (
	"os"
	"time"
)

// peakRSS is known only on Linux (where ru_maxrss is in KiB): 0, and the
// rows report no RSS and judge none.
func peakRSS(*os.ProcessState) int64 { return 0 }

// cpuTime is known only on Linux: 0.
func cpuTime() time.Duration { return 0 }
