package digest

import (
	"path/filepath"
	"testing"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/internal/flowtest"
)

func TestDescribe(t *testing.T) {
	t.Parallel()
	e, err := flow.Open(filepath.Join(t.TempDir(), "flow.db"), flow.Options{Create: true, NoSync: true, Actor: "ann"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.CreateProject(flow.NewProject{Name: "p"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.AddTask(flow.NewTask{Project: "p", Title: "first"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.MoveTask(flow.Move{Project: "p", ID: "T-1", To: "doing"}); err != nil {
		t.Fatal(err)
	}
	withRaw := flowtest.Events(t, e, flow.Filter{Raw: true})
	plain := flowtest.Events(t, e, flow.Filter{})
	for i, want := range []struct{ raw, plain string }{
		{"#1 p project.created by ann: project p created", "#1 p project.created by ann"},
		{"#2 T-1 task.created by ann: T-1 created: first", "#2 T-1 task.created by ann"},
		{"#3 T-1 task.status_changed by ann: todo -> doing", "#3 T-1 task.status_changed by ann"},
	} {
		if got := Describe(withRaw[i]); got != want.raw {
			t.Errorf("Describe(seq %d) = %q, want %q", i+1, got, want.raw)
		}
		if got := Describe(plain[i]); got != want.plain {
			t.Errorf("Describe(seq %d, no payload) = %q, want %q", i+1, got, want.plain)
		}
	}
}
