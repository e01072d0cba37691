package flow

import (
	"errors"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/projection"
)

// noteAdd adds a note and fails the test on error.
func noteAdd(t *testing.T, e *Engine, in NewNote) *Note {
	t.Helper()
	in.Project = "p"
	n, err := e.AddNote(in)
	if err != nil {
		t.Fatalf("AddNote(%+v): %v", in, err)
	}
	return n
}

func TestEngine_AddNote(t *testing.T) {
	t.Run("OnTask", func(t *testing.T) {
		e := ctxFixture(t)
		n := noteAdd(t, e, NewNote{Task: "T-1", Text: "looked at the parser"})
		if n.Task != "T-1" || n.Kind != "note" || n.Text != "looked at the parser" || n.Actor != "tester" || n.Project != "p" || n.Seq == 0 {
			t.Errorf("note = %+v", n)
		}
		evs := collect(t, e, Filter{Type: projection.TypeNoteAdded})
		if len(evs) != 1 || evs[0].Stream != "task/p/T-1" || evs[0].Seq != n.Seq || !evs[0].Time.Equal(n.Time) {
			t.Errorf("events = %+v, want one on task/p/T-1 at seq %d", evs, n.Seq)
		}
		task, err := e.Task("p", "T-1")
		if err != nil || task.Notes != 1 {
			t.Errorf("task notes = %d, %v; want 1", task.Notes, err)
		}
	})
	t.Run("OnProject", func(t *testing.T) {
		e := ctxFixture(t)
		n := noteAdd(t, e, NewNote{Kind: "memory", Text: "tests need -race"})
		if n.Task != "" || n.Kind != "memory" {
			t.Errorf("note = %+v", n)
		}
		evs := collect(t, e, Filter{Type: projection.TypeNoteAdded})
		if len(evs) != 1 || evs[0].Stream != "project/p" {
			t.Errorf("events = %+v, want one on project/p", evs)
		}
		p, err := e.Project("p")
		if err != nil || p.Seq != n.Seq {
			t.Errorf("project = %+v, %v; want it touched at seq %d", p, err, n.Seq)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		e := ctxFixture(t)
		for name, in := range map[string]NewNote{
			"Empty":    {Text: " "},
			"BadUTF8":  {Text: "a\xffb"},
			"TooLong":  {Text: strings.Repeat("x", MaxText+1)},
			"BadKind":  {Text: "x", Kind: "todo"},
			"KindCase": {Text: "x", Kind: "Memory"},
		} {
			in.Project = "p"
			if _, err := e.AddNote(in); !errors.Is(err, ErrInvalid) {
				t.Errorf("%s: %v, want ErrInvalid", name, err)
			}
		}
		if evs := collect(t, e, Filter{Type: projection.TypeNoteAdded}); len(evs) != 0 {
			t.Errorf("invalid notes appended %d events", len(evs))
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		e := ctxFixture(t)
		if _, err := e.AddNote(NewNote{Project: "p", Task: "T-9", Text: "x"}); !errors.Is(err, ErrNotFound) {
			t.Errorf("unknown task: %v, want ErrNotFound", err)
		}
		if _, err := e.AddNote(NewNote{Project: "q", Text: "x"}); !errors.Is(err, ErrNotFound) {
			t.Errorf("unknown project: %v, want ErrNotFound", err)
		}
	})
	t.Run("ErrConflict", func(t *testing.T) {
		e := ctxFixture(t)
		task, err := e.Task("p", "T-1")
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.AddNote(NewNote{Project: "p", Task: "T-1", Text: "x", Write: Write{IfVersion: task.Version + 1}})
		if !errors.Is(err, eventlog.ErrConflict) {
			t.Errorf("stale IfVersion: %v, want a conflict", err)
		}
		if _, err := e.AddNote(NewNote{Project: "p", Task: "T-1", Text: "x", Write: Write{IfVersion: task.Version}}); err != nil {
			t.Errorf("current IfVersion: %v", err)
		}
	})
	t.Run("Idempotent", func(t *testing.T) {
		e := ctxFixture(t)
		in := NewNote{Task: "T-2", Text: "once", Write: Write{Key: "n1"}}
		first := noteAdd(t, e, in)
		noteAdd(t, e, NewNote{Text: "between"})
		again := noteAdd(t, e, in)
		if *again != *first {
			t.Errorf("retry = %+v, want %+v", again, first)
		}
		if evs := collect(t, e, Filter{Type: projection.TypeNoteAdded}); len(evs) != 2 {
			t.Errorf("%d note events, want 2", len(evs))
		}
	})
}

func TestEngine_Notes(t *testing.T) {
	e := ctxFixture(t)
	noteAdd(t, e, NewNote{Task: "T-1", Text: "one"})
	noteAdd(t, e, NewNote{Text: "project-wide", Kind: "memory"})
	noteAdd(t, e, NewNote{Task: "T-2", Text: "two", Kind: "memory"})
	noteAdd(t, e, NewNote{Task: "T-1", Text: "three"})
	texts := func(ns []Note) string {
		out := make([]string, len(ns))
		for i, n := range ns {
			out[i] = n.Text
		}
		return strings.Join(out, ",")
	}
	tests := []struct {
		name string
		f    NoteFilter
		want string
	}{
		{"All", NoteFilter{}, "one,project-wide,two,three"},
		{"Task", NoteFilter{Task: "T-1"}, "one,three"},
		{"Memory", NoteFilter{Kind: "memory"}, "project-wide,two"},
		{"TaskAndKind", NoteFilter{Task: "T-2", Kind: "note"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns, err := e.Notes("p", tt.f)
			if err != nil || ns == nil {
				t.Fatalf("Notes(%+v) = %v, %v", tt.f, ns, err)
			}
			if got := texts(ns); got != tt.want {
				t.Errorf("Notes(%+v) = %s, want %s", tt.f, got, tt.want)
			}
		})
	}
	t.Run("ErrNotFound", func(t *testing.T) {
		if _, err := e.Notes("p", NoteFilter{Task: "T-5"}); !errors.Is(err, ErrNotFound) {
			t.Errorf("unknown task: %v, want ErrNotFound", err)
		}
		if _, err := e.Notes("nope", NoteFilter{}); !errors.Is(err, ErrNotFound) {
			t.Errorf("unknown project: %v, want ErrNotFound", err)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		if _, err := e.Notes("p", NoteFilter{Kind: "todo"}); !errors.Is(err, ErrInvalid) {
			t.Errorf("bad kind: %v, want ErrInvalid", err)
		}
	})
}
