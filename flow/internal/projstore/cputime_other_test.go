//go:build !unix

package projstore_test

import "time"

// cpuTime is 0 where getrusage is not: the benchmarks then report no CPU
// figure.
func cpuTime() time.Duration { return 0 }
