package flow

import (
	"bytes"
	"io"
	"path/filepath"
	"testing"
)

// benchExport is a file of random history and its export, shared by the
// bulk benchmarks.
func benchExport(b *testing.B) (*Engine, []byte) {
	b.Helper()
	e := mustOpen(b)
	randomHistory(b, e, 1, 5000)
	return e, exportOf(b, e)
}

// BenchmarkExport: events/s of export (target ≥ 300k events/s, issue 15).
func BenchmarkExport(b *testing.B) {
	e, out := benchExport(b)
	n := bytes.Count(out, []byte("\n"))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := e.Export(io.Discard, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkImport: events/s of a staged import (batches of 1000 events)
// into a new file (target ≥ 100k events/s, issue 15).
func BenchmarkImport(b *testing.B) {
	_, out := benchExport(b)
	n := bytes.Count(out, []byte("\n"))
	lim := importLimits{line: maxImportLine, batch: 1000, batchBytes: importBatchBytes}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		dst, err := Open(filepath.Join(b.TempDir(), "f.db"), Options{Create: true, NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := dst.importWith(bytes.NewReader(out), lim); err != nil {
			b.Fatal(i, err)
		}
		b.StopTimer()
		dst.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkVerify: events/s of verify (target ≥ 500k events/s, issue 15).
func BenchmarkVerify(b *testing.B) {
	e, out := benchExport(b)
	n := bytes.Count(out, []byte("\n"))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := e.Verify(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "events/s")
}
