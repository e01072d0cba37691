//go:build unix

package logidx

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow/store"
)

// BenchmarkWriter_Flush: one transaction of 1000 events (committed) on
// an index of 200k, the lists of flowbench gen's shape: 30 types, 10
// projects (300 project lists), 3 actors, 20 sessions.
func BenchmarkWriter_Flush(b *testing.B) {
	const perTx = 1000
	var evs [perTx]store.Event
	types, projects, sessions := make([]string, 30), make([]string, 10), make([]string, 20)
	for i := range types {
		types[i] = fmt.Sprintf("kind%02d.done", i)
	}
	for i := range projects {
		projects[i] = fmt.Sprintf("proj%03d", i)
	}
	for i := range sessions {
		sessions[i] = fmt.Sprintf("s%02d", i)
	}
	var seq uint64
	fill := func(st store.Store) {
		err := st.Update(func(tx store.Tx) error {
			var w Writer
			for i := range evs {
				seq++
				evs[i] = store.Event{Type: types[(seq*7)%30], Project: projects[seq/perTx%10],
					Actor: []string{"agent", "alice", "bob"}[seq%3], Session: sessions[seq/5000%20]}
				w.Add(seq, &evs[i])
			}
			return w.Flush(tx)
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	st := openStore(b)
	if err := st.Update(Reset); err != nil {
		b.Fatal(err)
	}
	for range 200 {
		fill(st)
	}
	cpu0 := cpuTime()
	b.ResetTimer()
	for range b.N {
		fill(st)
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N*perTx), "cpu-ns/event")
}

// cpuTime is the process's CPU time (user and system): the machine may be
// loaded.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
