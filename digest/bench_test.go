package digest

import (
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/flow/capture"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// digestBenchEngine: project "bench" with 500 tasks, each with a step,
// a context merge, a note and an exec record (~2,500 events), ann holding T-1.
func digestBenchEngine(b *testing.B) *flow.Engine {
	b.Helper()
	path := filepath.Join(b.TempDir(), "flow.db")
	e, err := flow.Open(path, flow.Options{Create: true, NoSync: true, Actor: "ann", Session: "s-ann"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	must := func(_ any, err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	must(e.CreateProject(flow.NewProject{Name: "bench"}))
	for i := 1; i <= 500; i++ {
		id := "T-" + strconv.Itoa(i)
		must(e.AddTask(flow.NewTask{Project: "bench", Title: "task " + strconv.Itoa(i)}))
		must(e.AddStep(flow.NewStep{Project: "bench", Task: id, Title: "step"}))
		must(e.MergeContext(flow.ContextPatch{Project: "bench", ID: id, Patch: `{"k":"v` + strconv.Itoa(i) + `"}`}))
		must(e.AddNote(flow.NewNote{Project: "bench", Task: id, Kind: flow.NoteKindMemory, Text: "remember " + strconv.Itoa(i)}))
		must(e.RecordExec(flow.NewExec{Project: "bench", Task: id, Command: "go test", Success: true, Stdout: capture.String("ok\n")}))
	}
	must(e.ClaimTask(flow.Claim{Project: "bench", ID: "T-1", Lease: 24 * time.Hour}))
	return e
}

func BenchmarkDigest(b *testing.B) {
	e := digestBenchEngine(b)
	b.Run("Prime", func(b *testing.B) {
		for b.Loop() {
			if _, err := Prime(e, PrimeInput{Project: "bench", Actor: "ann", Session: "s-ann"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("TaskReport", func(b *testing.B) {
		for b.Loop() {
			if _, err := ReportTask(e, "bench", "T-250"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ProjectReport", func(b *testing.B) {
		for b.Loop() {
			if _, err := ReportProject(e, "bench"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
