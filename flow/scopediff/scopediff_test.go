package scopediff_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/flowctl/flowctl/flow/scopediff"
	"github.com/flowctl/flowctl/projection"
)

func changeLines(cs []scopediff.Change) []string {
	var out []string
	for _, c := range cs {
		s := c.Kind + " " + c.ID + " " + c.Op
		for _, f := range c.Fields {
			s += fmt.Sprintf(" %s:%s->%s", f.Field, f.From, f.To)
		}
		out = append(out, s)
	}
	return out
}

func TestOf(t *testing.T) {
	project := &projection.Project{Name: "p"}
	a := &projection.Scope{Project: project, Tasks: []*projection.Task{
		{ID: "T-1", Title: "one", Status: "todo", Context: `{"branch":"main"}`},
		{ID: "T-2", Title: "two", Status: "todo"},
	}}
	b := &projection.Scope{Project: project,
		Plans: []*projection.Plan{{ID: "P-1", Title: "plan"}},
		Tasks: []*projection.Task{
			{ID: "T-1", Title: "one", Status: "doing", Context: `{"branch":"dev"}`},
			{ID: "T-10", Title: "ten", Status: "todo"},
		}}
	b.Tasks[0].Version = 7 // meta fields are not state
	t.Run("OK", func(t *testing.T) {
		got := changeLines(scopediff.Of(a, b))
		want := []string{
			"plan P-1 added",
			`task T-1 changed context.branch:"main"->"dev" status:"todo"->"doing"`,
			"task T-2 removed",
			"task T-10 added",
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("Of = %q\nwant %q", got, want)
		}
	})
	t.Run("SameIsEmptyNotNil", func(t *testing.T) {
		got := scopediff.Of(a, a)
		if b, _ := json.Marshal(got); string(b) != "[]" {
			t.Errorf("Of(a, a) = %s, want []", b)
		}
	})
}
