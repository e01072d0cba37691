package digest

import (
	"os"
	"testing"

	"github.com/flowctl/flowctl/flow"
)

// BenchmarkStats_File is Stats of one project of FLOWCTL_BENCH_DB (a
// flowbench gen file, opened read-only; copy it first: the benchmark
// never writes, but it takes the file's shared lock), project
// FLOWCTL_BENCH_PROJECT (default proj000):
//
//	FLOWCTL_BENCH_DB=/tmp/m1.db go test -run XXX -bench Stats_File ./digest
func BenchmarkStats_File(b *testing.B) {
	path := os.Getenv("FLOWCTL_BENCH_DB")
	if path == "" {
		b.Skip("FLOWCTL_BENCH_DB names no file")
	}
	project := os.Getenv("FLOWCTL_BENCH_PROJECT")
	if project == "" {
		project = "proj000"
	}
	for b.Loop() {
		e, err := flow.Open(path, flow.Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		st, err := Stats(e, project, StatsOptions{})
		e.Close()
		if err != nil {
			b.Fatal(err)
		}
		if st.Total.Runs == 0 {
			b.Fatal("no exec records")
		}
	}
}
