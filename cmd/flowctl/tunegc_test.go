package main

import (
	"runtime/debug"
	"testing"
)

// TestTuneGC: an import (as a verify, with its own settings) sets the
// collector's settings and puts back those it found; GOGC or GOMEMLIMIT
// given, it leaves them alone.
func TestTuneGC(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	gc, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(-1)
	defer func() { debug.SetGCPercent(gc); debug.SetMemoryLimit(limit) }()
	restore := tuneGC(importGCPercent, importMemoryLimit)
	if got := debug.SetGCPercent(importGCPercent); got != importGCPercent {
		t.Errorf("GC percent during an import = %d, want %d", got, importGCPercent)
	}
	if got := debug.SetMemoryLimit(-1); got != importMemoryLimit {
		t.Errorf("memory limit during an import = %d, want %d", got, importMemoryLimit)
	}
	restore()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent after = %d, want 100", got)
	}
	t.Setenv("GOGC", "50")
	restore = tuneGC(importGCPercent, importMemoryLimit)
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent with GOGC set = %d, want 100 (untouched)", got)
	}
	restore()
}
