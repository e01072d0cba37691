package flow

import (
	"fmt"
	"slices"
	"testing"

	"github.com/flowctl/flowctl/projection"
)

// TestEachTask_After: pages of a list, each after the last id of the page
// before, put together are the whole list, with and without a status, on
// the committed projections and on a view at a point.
func TestEachTask_After(t *testing.T) {
	e := mustOpen(t)
	if _, err := e.CreateProject(NewProject{Name: "p"}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 23; i++ {
		if _, err := e.AddTask(NewTask{Project: "p", Title: fmt.Sprint("t", i)}); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			if _, err := e.MoveTask(Move{Project: "p", ID: fmt.Sprint("T-", i), To: "doing"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var head uint64
	if err := e.Read(func(r *Reader) error { head = r.Head(); return nil }); err != nil {
		t.Fatal(err)
	}
	for _, eng := range []struct {
		name string
		e    *Engine
	}{{"committed", e}, {"at", e.At("p", Point{Seq: head})}} {
		for _, status := range []string{"", "doing", "todo"} {
			all, err := eng.e.Tasks("p", TaskFilter{Status: status})
			if err != nil {
				t.Fatal(err)
			}
			for _, size := range []int{1, 4, 7, 100} {
				var got []string
				after := ""
				for range 100 {
					var page []*projection.Task
					err := eng.e.EachTask("p", TaskFilter{Status: status, After: after}, func(tk *projection.Task) error {
						if len(page) == size {
							return ErrStop
						}
						page = append(page, tk)
						return nil
					})
					if err != nil {
						t.Fatal(err)
					}
					if len(page) == 0 {
						break
					}
					got = append(got, ids(page, nil)...)
					after = page[len(page)-1].ID
				}
				if want := ids(all, nil); !slices.Equal(got, want) || len(want) == 0 {
					t.Errorf("%s status %q pages of %d: got %v, want %v", eng.name, status, size, got, want)
				}
			}
		}
	}
}
