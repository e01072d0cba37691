package flowrun_test

import (
	"context"
	"testing"

	"github.com/flowctl/flowctl/internal/workload"
	"github.com/flowctl/flowctl/internal/workload/flowrun"
)

// BenchmarkWrite writes the workload of flowbench gen (10 projects,
// BatchOps ops a transaction, no fsync) to a new file: events/s, and
// allocations per event (b.N is the events).
func BenchmarkWrite(b *testing.B) {
	e := mustOpen(b)
	g := workload.New(workload.Options{Projects: 10, Seed: 1})
	b.ReportAllocs()
	b.ResetTimer()
	if err := flowrun.Write(context.Background(), e, g, uint64(b.N)+10, nil); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
