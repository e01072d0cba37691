package digest_test

import (
	"os"
	"testing"

	"github.com/flowctl/flowctl/digest"
	_ "github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow"
)

func zzOpen(b *testing.B) *flow.Engine {
	p := os.Getenv("ZZDB")
	if p == "" {
		b.Skip()
	}
	e, err := flow.Open(p, flow.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	return e
}

func BenchmarkZZStatusAt(b *testing.B) {
	e := zzOpen(b)
	defer e.Close()
	for i := 0; i < b.N; i++ {
		if _, err := e.At("proj000", flow.Point{Seq: 500000}).Status("proj000"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkZZDiff(b *testing.B) {
	e := zzOpen(b)
	defer e.Close()
	for i := 0; i < b.N; i++ {
		if _, err := digest.Diff(e, "proj000", flow.Point{Seq: 500000}, flow.Point{Seq: 1000000}); err != nil {
			b.Fatal(err)
		}
	}
}
