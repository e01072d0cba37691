package eventlog

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// BenchmarkVerify times Verify and its parts on one file: the file
// FLOW_BENCH_FILE names (opened read-only, never written), or else a log
// of FLOW_BENCH_EVENTS events (default 100000) built as BenchmarkReadDecode
// builds it. shape is the shape check (verify_shape.go), pages the check
// of the page structure (verify_pages.go), bolt bbolt's Tx.Check that it
// replaced (for comparison), verify the whole of Verify (both of ours,
// and the record walk beside the second).
func BenchmarkVerify(b *testing.B) {
	path := os.Getenv("FLOW_BENCH_FILE")
	if path == "" {
		n := 100_000
		if s := os.Getenv("FLOW_BENCH_EVENTS"); s != "" {
			v, err := strconv.Atoi(s)
			if err != nil || v <= 0 {
				b.Fatalf("FLOW_BENCH_EVENTS=%q: want a positive number", s)
			}
			n = v
		}
		path = filepath.Join(b.TempDir(), "verify.db")
		buildReadFixture(b, path, n)
	}
	l, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	var head uint64
	_ = l.View(func(tx *Tx) error { head, _ = tx.Head(); return nil })
	b.Run("shape", func(b *testing.B) {
		defer reportCPU(b)()
		for b.Loop() {
			err := l.view(func(btx *bolt.Tx) error { return l.checkShape(btx, l.newPager(btx)) })
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("pages", func(b *testing.B) {
		defer reportCPU(b)()
		for b.Loop() {
			err := l.view(func(btx *bolt.Tx) error { return l.checkPages(btx) })
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bolt", func(b *testing.B) {
		defer reportCPU(b)()
		for b.Loop() {
			err := l.view(func(btx *bolt.Tx) error {
				for err := range btx.Check() {
					return err
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("verify", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			if _, err := l.Verify(); err != nil {
				b.Fatal(err)
			}
		}
		reportEventsPerSec(b, b.N*int(head))
	})
}

// reportCPU reports the process's CPU time per op (user and system) from
// now until the returned function is called, after b's loop.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		if start > 0 {
			b.ReportMetric(float64(cpuTime()-start)/1e6/float64(b.N), "cpu-ms/op")
		}
	}
}
