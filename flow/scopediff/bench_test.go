package scopediff_test

import (
	"fmt"
	"testing"

	"github.com/flowctl/flowctl/flow/scopediff"
	"github.com/flowctl/flowctl/projection"
)

// BenchmarkOf_ManyAdded: a diff of a project that grew, as `diff HALF
// HEAD` on the 1M file is (9k entities added, a few changed), the lists
// in no order as DiffScopes gives them.
func BenchmarkOf_ManyAdded(b *testing.B) {
	x := &projection.Scope{Project: &projection.Project{Name: "p"}}
	y := &projection.Scope{Project: &projection.Project{Name: "p"}}
	for i := range 9000 {
		id := fmt.Sprintf("T-%d", (i*7919)%9000+1)
		t := &projection.Task{ID: id, Title: "task " + id, Status: "todo"}
		if i%1000 == 0 {
			u := *t
			u.Status = "done"
			x.Tasks = append(x.Tasks, &u)
		}
		y.Tasks = append(y.Tasks, t)
	}
	b.ReportAllocs()
	for b.Loop() {
		if n := len(scopediff.Of(x, y)); n != 9000 {
			b.Fatalf("%d changes", n)
		}
	}
}
