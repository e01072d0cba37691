//go:build !linux

package eventlog

import "time"

// cpuTime is 0 here: see verify_linux_test.go.
func cpuTime() time.Duration { return 0 }
