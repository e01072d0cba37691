package legacy

import (
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/internal/flowtest"
	"github.com/flowctl/flowctl/projection"
)

// textFixture opens an engine with project "p", task T-1 (doing) with
// step T-1.1, and plan P-1.
func textFixture(t *testing.T) *flow.Engine {
	t.Helper()
	e := flowtest.Open(t)
	steps := []func() error{
		func() error { _, err := e.CreateProject(flow.NewProject{Name: "p"}); return err },
		func() error { _, err := e.AddTask(flow.NewTask{Project: "p", Title: "t"}); return err },
		func() error { _, err := e.AddStep(flow.NewStep{Project: "p", Task: "T-1", Title: "s"}); return err },
		func() error { _, err := e.AddPlan(flow.NewPlan{Project: "p", Title: "plan"}); return err },
		func() error {
			_, err := e.MoveTask(flow.Move{Project: "p", ID: "T-1", To: projection.StatusDoing})
			return err
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// wantTimesFollowSeq fails t unless every event's time is at or after the
// time of the event before it.
func wantTimesFollowSeq(t *testing.T, events []flow.Event) {
	t.Helper()
	for i := 1; i < len(events); i++ {
		if events[i].Time.Before(events[i-1].Time) {
			t.Errorf("seq %d at %s is before seq %d at %s", events[i].Seq, events[i].Time, events[i-1].Seq, events[i-1].Time)
		}
	}
}

// seqAt resolves --at TIME in project: the head of the view At that time.
func seqAt(t *testing.T, e *flow.Engine, project string, at time.Time) uint64 {
	t.Helper()
	var seq uint64
	err := e.At(project, flow.Point{Time: at}).Read(func(r *flow.Reader) error {
		seq = r.Head()
		return nil
	})
	if err != nil {
		t.Fatalf("At(%s): %v", at, err)
	}
	return seq
}
