package projstore_test

import (
	"errors"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/projection"
)

// BenchmarkReplayOn folds the whole file named by FLOWCTL_BENCH_DB (a copy:
// it is opened read-only, but a flowbench gen file is big) on 1 and on
// GOMAXPROCS goroutines; -cpu 1,2 shows the speedup, e.g.
//
//	FLOWCTL_BENCH_DB=/tmp/m1.db go test -run XXX -bench ReplayOn -benchtime 3x -cpu 2 ./flow/internal/projstore
//
// Speedup is issue 15's figure (≥ 1.7 on 2 cores): each op replays the
// file on one goroutine with GOMAXPROCS 1 (flowbench's replay_1core, the
// collector sharing the core) and on GOMAXPROCS goroutines, in turn, and
// the benchmark reports both rates and their ratio. flowbench's replay
// and replay_1core rows both fold on one goroutine: their ratio is the
// collector's use of the other core, not this.
func BenchmarkReplayOn(b *testing.B) {
	l := openBenchLog(b)
	for _, c := range []struct {
		name    string
		workers int
	}{{"serial", 1}, {"parallel", 0}} {
		b.Run(c.name, func(b *testing.B) {
			var events uint64
			cpu := cpuTime()
			for b.Loop() {
				events = replayOn(b, l, c.workers)
			}
			reportRates(b, events, cpuTime()-cpu)
		})
	}
	// flowbench's replay row: Log.Replay folded by projection.Apply into
	// a NewMemory, on the benchmark's goroutine (no size hint, no skip
	// of unknown events).
	b.Run("fold", func(b *testing.B) {
		var events uint64
		cpu := cpuTime()
		for b.Loop() {
			events = 0
			mem := projection.NewMemory()
			err := l.Replay(1, 0, func(r *eventlog.Record) error {
				events++
				if err := projection.Apply(mem, r); err != nil && !errors.Is(err, projection.ErrUnknown) {
					return err
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		reportRates(b, events, cpuTime()-cpu)
	})
	b.Run("speedup", func(b *testing.B) {
		var serial, parallel time.Duration
		var events uint64
		for b.Loop() {
			prev := runtime.GOMAXPROCS(1)
			start := time.Now()
			replayOn(b, l, 1)
			serial += time.Since(start)
			runtime.GOMAXPROCS(prev)
			start = time.Now()
			events = replayOn(b, l, 0)
			parallel += time.Since(start)
		}
		b.ReportMetric(float64(events)*float64(b.N)/serial.Seconds(), "serial-1core-events/s")
		b.ReportMetric(float64(events)*float64(b.N)/parallel.Seconds(), "parallel-events/s")
		b.ReportMetric(serial.Seconds()/parallel.Seconds(), "speedup")
	})
}

// reportRates reports the events/s of b's ops by the clock and, where
// the process's CPU time is known (cpu > 0), the CPU nanoseconds per
// event it spent on them, the garbage collector's on other cores
// included: the figure to compare on a busy machine.
func reportRates(b *testing.B, events uint64, cpu time.Duration) {
	n := float64(events) * float64(b.N)
	b.ReportMetric(n/b.Elapsed().Seconds(), "events/s")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/event")
	}
}

func openBenchLog(b *testing.B) *eventlog.Log {
	path := os.Getenv("FLOWCTL_BENCH_DB")
	if path == "" {
		b.Skip("FLOWCTL_BENCH_DB names no file")
	}
	l, err := eventlog.Open(path, eventlog.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	return l
}

// replayOn replays l's file on workers goroutines (0: GOMAXPROCS, at
// least 2) and returns how many events it read.
func replayOn(b *testing.B, l *eventlog.Log, workers int) uint64 {
	if workers == 0 {
		workers = max(2, runtime.GOMAXPROCS(0))
	}
	var events uint64
	err := l.View(func(tx *eventlog.Tx) error {
		_, rep, err := projstore.ReplayOn(tx, workers, b.Logf, nil)
		events = rep.Events
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return events
}
