package flow

import (
	"errors"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/projection"
)

// textFixture opens an engine with project "p", task T-1 (doing) with
// step T-1.1, and plan P-1.
func textFixture(t *testing.T) *Engine {
	t.Helper()
	e := mustOpen(t)
	steps := []func() error{
		func() error { _, err := e.CreateProject(NewProject{Name: "p"}); return err },
		func() error { _, err := e.AddTask(NewTask{Project: "p", Title: "t"}); return err },
		func() error { _, err := e.AddStep(NewStep{Project: "p", Task: "T-1", Title: "s"}); return err },
		func() error { _, err := e.AddPlan(NewPlan{Project: "p", Title: "plan"}); return err },
		func() error {
			_, err := e.MoveTask(Move{Project: "p", ID: "T-1", To: projection.StatusDoing})
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

// TestText_OneLineFieldsRefuseControls: titles, labels, names and ids
// refuse every control character, through the engine (so every front
// door), and leave the file as it was.
func TestText_OneLineFieldsRefuseControls(t *testing.T) {
	e := textFixture(t)
	for _, bad := range []string{"a\nb", "a\x1b[31mb", "a\x07b", "a\x00b", "a\tb", "a\rb", "a\u009bb"} {
		s := bad
		cases := map[string]func() error{
			"TaskTitle": func() error { _, err := e.AddTask(NewTask{Project: "p", Title: s}); return err },
			"TaskOwner": func() error { _, err := e.AddTask(NewTask{Project: "p", Title: "x", Owner: s}); return err },
			"TaskTag":   func() error { _, err := e.AddTask(NewTask{Project: "p", Title: "x", Tags: []string{s}}); return err },
			"TaskRef":   func() error { _, err := e.AddTask(NewTask{Project: "p", Title: "x", Ref: s}); return err },
			"EditTitle": func() error { _, err := e.EditTask(TaskEdit{Project: "p", ID: "T-1", Title: &s}); return err },
			"EditOwner": func() error { _, err := e.EditTask(TaskEdit{Project: "p", ID: "T-1", Owner: &s}); return err },
			"PlanTitle": func() error { _, err := e.AddPlan(NewPlan{Project: "p", Title: s}); return err },
			"StepTitle": func() error { _, err := e.AddStep(NewStep{Project: "p", Task: "T-1", Title: s}); return err },
			"Label":     func() error { _, err := e.CreateCheckpoint(NewCheckpoint{Project: "p", Label: s}); return err },
			"CtxKey": func() error {
				_, err := e.SetContextKey(ContextKey{Project: "p", ID: "T-1", Key: s, Value: "1"})
				return err
			},
			"ExecCwd": func() error {
				_, err := e.RecordExec(NewExec{Project: "p", Command: "ls", Success: true, Cwd: s})
				return err
			},
			"ExecVar": func() error {
				_, err := e.RecordExec(NewExec{Project: "p", Command: "ls", Success: true, AddedVars: []string{s}})
				return err
			},
			"IdempotencyKey": func() error {
				_, err := e.AddTask(NewTask{Project: "p", Title: "x", Write: Write{Key: s}})
				return err
			},
			"Actor":   func() error { return withOpts(e, Options{Actor: s}).addNote() },
			"Session": func() error { return withOpts(e, Options{Actor: "a", Session: s}).addNote() },
		}
		textRefused(t, e, cases, s)
	}
}

// TestText_MultiLineKeepsNewlinesAndTabs: descriptions, notes, messages
// and reasons keep newlines, tabs and CRLF, and refuse other controls.
func TestText_MultiLineKeepsNewlinesAndTabs(t *testing.T) {
	e := textFixture(t)
	good := "line 1\n\tline 2\r\nline 3"
	d := good
	if tk, err := e.EditTask(TaskEdit{Project: "p", ID: "T-1", Description: &d}); err != nil || tk.Description != good {
		t.Fatalf("description %q = %+v, %v", good, tk, err)
	}
	if n, err := e.AddNote(NewNote{Project: "p", Task: "T-1", Text: good}); err != nil || n.Text != good {
		t.Fatalf("note %q = %+v, %v", good, n, err)
	}
	for _, bad := range []string{"a\x1b[2Jb", "a\x07b", "a\x00b", "a\rb", "a\x7fb", "a\u0085b"} {
		s := bad
		cases := map[string]func() error{
			"TaskDescription": func() error { _, err := e.AddTask(NewTask{Project: "p", Title: "x", Description: s}); return err },
			"EditDescription": func() error { _, err := e.EditTask(TaskEdit{Project: "p", ID: "T-1", Description: &s}); return err },
			"ProjectDescription": func() error {
				_, err := e.CreateProject(NewProject{Name: "q", Description: s})
				return err
			},
			"PlanDescription": func() error { _, err := e.AddPlan(NewPlan{Project: "p", Title: "x", Description: s}); return err },
			"PlanCloseReason": func() error { _, err := e.ClosePlan(ClosePlan{Project: "p", ID: "P-1", Reason: s}); return err },
			"ArchiveReason":   func() error { _, err := e.ArchiveProject(ArchiveProject{Name: "p", Reason: s}); return err },
			"Note":            func() error { _, err := e.AddNote(NewNote{Project: "p", Text: s}); return err },
			"MoveReason": func() error {
				_, err := e.MoveTask(Move{Project: "p", ID: "T-1", To: projection.StatusBlocked, Reason: s})
				return err
			},
			"StepNote": func() error {
				_, err := e.MoveStep(StepMove{Project: "p", ID: "T-1.1", To: projection.StepInProgress, Note: s})
				return err
			},
			"ApprovalMessage": func() error { _, err := e.RequestApproval(NewApproval{Project: "p", Message: s}); return err },
			"ExecCommand": func() error {
				_, err := e.RecordExec(NewExec{Project: "p", Command: s, Success: true})
				return err
			},
		}
		textRefused(t, e, cases, s)
	}
}

// textRefused runs each case, wanting ErrInvalid naming the control
// character and no event appended.
func textRefused(t *testing.T, e *Engine, cases map[string]func() error, s string) {
	t.Helper()
	before := len(collect(t, e, Filter{}))
	for name, try := range cases {
		err := try()
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "control character") {
			t.Errorf("%s %q = %v, want ErrInvalid naming the control character", name, s, err)
		}
	}
	if n := len(collect(t, e, Filter{})); n != before {
		t.Errorf("refused input %q appended %d events", s, n-before)
	}
}

// optsEngine is a view of an engine with other actor and session.
type optsEngine struct{ *Engine }

func withOpts(e *Engine, o Options) optsEngine {
	v := *e
	v.opts.Actor, v.opts.Session = o.Actor, o.Session
	return optsEngine{&v}
}

func (v optsEngine) addNote() error {
	_, err := v.AddNote(NewNote{Project: "p", Text: "hello"})
	return err
}
