package flow_test

import (
	"os"
	"testing"

	"github.com/flowctl/flowctl/flow"
)

// BenchmarkRebuild rebuilds the projections of the file named by
// FLOWCTL_BENCH_REBUILD_DB, which it writes to: name a copy. -cpu 1,2
// compares the serial and the parallel fold.
func BenchmarkRebuild(b *testing.B) {
	path := os.Getenv("FLOWCTL_BENCH_REBUILD_DB")
	if path == "" {
		b.Skip("FLOWCTL_BENCH_REBUILD_DB names no file (a copy: the benchmark writes to it)")
	}
	e, err := flow.Open(path, flow.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	var events uint64
	for b.Loop() {
		rep, err := e.Rebuild()
		if err != nil {
			b.Fatal(err)
		}
		events = rep.Events
	}
	b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
