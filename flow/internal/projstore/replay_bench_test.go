package projstore_test

import (
	"os"
	"runtime"
	"testing"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow/internal/projstore"
)

// BenchmarkReplayOn folds the whole file named by FLOWCTL_BENCH_DB (a copy:
// it is opened read-only, but a flowbench gen file is big) on 1 and on
// GOMAXPROCS goroutines; -cpu 1,2 shows the speedup, e.g.
//
//	FLOWCTL_BENCH_DB=/tmp/m1.db go test -run XXX -bench ReplayOn -benchtime 3x -cpu 2 ./flow/internal/projstore
func BenchmarkReplayOn(b *testing.B) {
	path := os.Getenv("FLOWCTL_BENCH_DB")
	if path == "" {
		b.Skip("FLOWCTL_BENCH_DB names no file")
	}
	l, err := eventlog.Open(path, eventlog.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	for _, c := range []struct {
		name    string
		workers int
	}{{"serial", 1}, {"parallel", 0}} {
		b.Run(c.name, func(b *testing.B) {
			var events uint64
			for b.Loop() {
				err := l.View(func(tx *eventlog.Tx) error {
					workers := c.workers
					if workers == 0 {
						workers = max(2, runtimeProcs())
					}
					_, rep, err := projstore.ReplayOn(tx, workers, b.Logf, nil)
					events = rep.Events
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(events)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }
