package eventlog

import (
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TestPager_FileResident: the pager reads the process's resident file
// pages from /proc/self/statm, again and again through one descriptor
// (the binary's own text is such pages), rather than the value it gives
// on an error, which would trim on every call.
func TestPager_FileResident(t *testing.T) {
	l := mustOpen(t)
	mustAppend(t, l, "task/p/T-1", Any, ev("task.created", "x"))
	err := l.view(func(btx *bolt.Tx) error {
		pg := l.newPager(btx)
		for range 3 {
			if got := pg.fileResident(); got == 0 || got == residentLimit+1 {
				t.Errorf("fileResident = %d, want the resident file pages", got)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// cpuTime is the process's CPU time so far, user and system: the
// benchmarks report it, since on a machine others load a wall-clock time
// says little.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestKeepTrimmed_Scans: while KeepTrimmed runs, the scans of any
// transaction trim as they go (the log's pager); once stopped, none do.
func TestKeepTrimmed_Scans(t *testing.T) {
	l := mustOpen(t)
	if l.trimming.Load() != nil {
		t.Fatal("a pager before KeepTrimmed")
	}
	stop := logStore{l}.KeepTrimmed()
	pg := l.trimming.Load()
	if pg == nil || pg.size == 0 {
		t.Fatalf("KeepTrimmed's pager = %+v, want the file's map", pg)
	}
	stop()
	if l.trimming.Load() != nil {
		t.Error("a pager after KeepTrimmed stopped")
	}
}
