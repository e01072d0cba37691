package flow

import (
	"testing"

	"github.com/flowctl/flowctl/projection"
)

// BenchmarkEachTask lists the tasks of one project of the generated
// workload (100k events, about 3,500 tasks, nearly all done: a project of
// the 1M-event file) the way `task ls` does, streamed, and the way it did
// before (every task decoded, then filtered), so that allocations per
// listing compare: a page of 20 done tasks, the one doing task, all.
func BenchmarkEachTask(b *testing.B) {
	f := ttFixtureFor(b, 100_000, 1, 0)
	const project = "proj000"
	cases := []struct {
		name  string
		f     TaskFilter
		limit int
	}{{"Doing", TaskFilter{Status: projection.StatusDoing}, 0}, {"DoneLimit20", TaskFilter{Status: projection.StatusDone}, 20}, {"All", TaskFilter{}, 0}}
	for _, c := range cases {
		b.Run("Streamed/"+c.name, func(b *testing.B) {
			for b.Loop() {
				n := 0
				err := f.e.EachTask(project, c.f, func(*projection.Task) error {
					if c.limit > 0 && n == c.limit {
						return ErrStop
					}
					n++
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("Before/"+c.name, func(b *testing.B) {
			for b.Loop() {
				err := f.e.read(func(src source) error {
					all, err := src.Tasks(project)
					n := 0
					for _, t := range all {
						if c.f.match(t) && (c.limit == 0 || n < c.limit) {
							n++
						}
					}
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
