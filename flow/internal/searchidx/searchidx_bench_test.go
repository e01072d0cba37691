package searchidx

import (
	"fmt"
	"testing"

	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// benchEvents are events like flowbench gen's: a task, its context
// merges, notes and exec records.
func benchEvents(tb testing.TB) []store.Event {
	pay := func(v any) []byte {
		b, ok := projection.AppendPayload(nil, v)
		if !ok {
			tb.Fatalf("no codec for %T", v)
		}
		return b
	}
	ev := func(typ string, v any) store.Event {
		return store.Event{Type: typ, Schema: projection.SchemaVersion, Project: "proj000", Data: pay(v)}
	}
	return []store.Event{
		ev(projection.TypeTaskCreated, projection.TaskCreated{ID: "T-1", Title: "implement part 1 of the feature"}),
		ev(projection.TypeTaskContextMerged, projection.TaskContextMerged{Patch: `{"files":["parser/part1.go","parser/part1_test.go"],"k3":{"decision":"use a table-driven parser","merge":3},"phase":"test"}`}),
		ev(projection.TypeNoteAdded, projection.NoteAdded{Task: "T-1", Kind: "note", Text: "found that the parser needs a second pass for nested blocks; noted for the reviewer"}),
		ev(projection.TypeExecRecorded, projection.ExecRecorded{ID: "X-1", Task: "T-1", Command: "go test ./...", Success: true}),
		ev(projection.TypeStepStatusChanged, projection.StepStatusChanged{ID: "T-1.1", To: "completed"}),
	}
}

func BenchmarkWriter_Add(b *testing.B) {
	evs := benchEvents(b)
	var w Writer
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		ev := &evs[i%len(evs)]
		w.Add(uint64(i+1), ev)
		if i%100000 == 0 {
			w = Writer{}
		}
	}
}

// BenchmarkRead_Top is the query path of the worst search of flowbench's
// rows (cli_search_all_two): two words in every event's command, over
// ten projects, 8×20 candidates wanted.
func BenchmarkRead_Top(b *testing.B) {
	const events = 300_000
	var w Writer
	for seq := uint64(1); seq <= events; seq++ {
		w.AddText(seq, fmt.Sprintf("proj%03d", seq%10), Text{FieldCommand, "go test ./..."})
	}
	st := openStore(b)
	if err := st.Update(func(tx store.Tx) error { return w.Rebuild(tx, events) }); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name    string
		project string
	}{{"Project", "proj003"}, {"All", ""}} {
		b.Run(bc.name, func(b *testing.B) {
			q := Query{Words: []string{"go", "test"}, Project: bc.project, Events: events}
			b.ReportAllocs()
			for b.Loop() {
				err := st.View(func(tx store.Tx) error {
					l, err := Read(tx, nil, q)
					if err != nil {
						return err
					}
					_, err = l.Top(160)
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
