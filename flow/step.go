package flow

import (
	"fmt"
	"slices"
	"strings"

	"github.com/flowctl/flowctl/flow/internal/check"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// KindStep names steps in a Ref.
const KindStep = "step"

// TaskStep is a step as commands return it: the step, its task, and the
// task's stream version (the --if-version of the next step command).
type TaskStep struct {
	projection.Step
	Task    string `json:"task"`
	Version uint64 `json:"version"`
}

// NewStep is the input of AddStep.
type NewStep struct {
	Project string `json:"project"`
	Task    string `json:"task"` // T-n
	Title   string `json:"title"`
	Write
}

// AddStep adds a pending step to a task, with the next id T-n.m of the
// task. Errors: ErrInvalid (title), ErrNotFound (task), and
// store.ErrConflict when the task is done or cancelled, the project
// archived, or IfVersion stale.
func (e *Engine) AddStep(in NewStep) (*TaskStep, error) {
	if err := check.Line("title", in.Title, MaxTitle, true); err != nil {
		return nil, err
	}
	var task string // the step's task's id, as the command found it
	ref, err := e.command(in.Write, "step.add", in, func(w *writer) (Ref, error) {
		t, err := w.stepTask(in.Project, in.Task)
		if err != nil {
			return Ref{}, err
		}
		task = t.ID
		id := projection.StepID(t.ID, len(t.Steps)+1)
		_, err = w.emit(projection.TaskStream(in.Project, t.ID), in.expect(), in.Project, projection.TypeStepAdded,
			projection.StepAdded{ID: id, Title: in.Title})
		return Ref{Kind: KindStep, Project: in.Project, ID: id}, err
	})
	if err != nil {
		return nil, err
	}
	if task == "" { // a replayed idempotency key: the command did not run
		return e.Step(ref.Project, ref.ID)
	}
	return e.step(ref.Project, task, ref.ID)
}

// stepTask returns the task whose steps a command changes: it must exist,
// in a project that is not archived, and be neither done nor cancelled.
func (w *writer) stepTask(project, id string) (*projection.Task, error) {
	if _, err := openProject(w, project); err != nil {
		return nil, err
	}
	t, err := mustTask(w, project, id)
	if err != nil {
		return nil, err
	}
	if t.Status == projection.StatusDone || t.Status == projection.StatusCancelled {
		return nil, fmt.Errorf("%w: task %s is %s, its steps cannot change (reopen it first: 'task reopen %s')",
			store.ErrConflict, t.ID, t.Status, t.ID)
	}
	return t, nil
}

// StepMove is the input of MoveStep: a status change of one step, with
// what it records.
type StepMove struct {
	Project  string `json:"project"`
	ID       string `json:"id"` // step id, T-n.m
	To       string `json:"to"` // in_progress, completed, failed or skipped
	Progress *int   `json:"progress,omitempty"`
	Note     string `json:"note,omitempty"`
	Result   string `json:"result,omitempty"`
	Error    string `json:"error,omitempty"`
	// ResultData is a structured result, a JSON value (an object, say),
	// kept as given beside the text of Result.
	ResultData string `json:"result_data,omitempty"`
	// Retry marks a move of a failed step back to in_progress: it is
	// refused from any other status (StepRetry).
	Retry bool `json:"retry,omitempty"`
	Write
}

// stepTransitions is the step status machine (DESIGN.md §4).
var stepTransitions = map[string][]string{
	projection.StepPending:    {projection.StepInProgress, projection.StepSkipped},
	projection.StepInProgress: {projection.StepCompleted, projection.StepFailed, projection.StepSkipped},
	projection.StepCompleted:  nil,
	projection.StepFailed:     nil,
	projection.StepSkipped:    nil,
}

// stepVerbs name the command that makes each move.
var stepVerbs = map[string]string{
	projection.StepInProgress: "step start",
	projection.StepCompleted:  "step done",
	projection.StepFailed:     "step fail",
	projection.StepSkipped:    "step skip",
}

// MoveStep moves a step along pending -> in_progress -> completed|failed|
// skipped (pending -> skipped too). Moving an in_progress step to
// in_progress updates its progress and note; a pending step given a
// progress is started by it. Completed sets progress 100. A move that
// changes nothing appends nothing. Errors: ErrInvalid (status, progress
// outside 0-100, text), ErrNotFound, store.ErrConflict (a move the
// machine refuses, a done or cancelled task, a stale IfVersion).
func (e *Engine) MoveStep(in StepMove) (*TaskStep, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	task, id, err := ParseStepID(in.ID)
	if err != nil {
		return nil, err
	}
	in.ID = id
	_, err = e.command(in.Write, "step.move", in, func(w *writer) (Ref, error) {
		ref := Ref{Kind: KindStep, Project: in.Project, ID: in.ID}
		return ref, w.moveStep(task, in)
	})
	if err != nil {
		return nil, err
	}
	return e.step(in.Project, task, in.ID)
}

func (in *StepMove) check() error {
	if _, ok := stepVerbs[in.To]; !ok {
		return fmt.Errorf("%w: step status %q: use in_progress, completed, failed or skipped", ErrInvalid, in.To)
	}
	if in.Progress != nil {
		if in.To != projection.StepInProgress {
			return fmt.Errorf("%w: progress can only be set on a step in progress", ErrInvalid)
		}
		if p := *in.Progress; p < 0 || p > 100 {
			return fmt.Errorf("%w: progress %d is outside 0-100", ErrInvalid, p)
		}
	}
	for _, f := range [][2]string{{"note", in.Note}, {"result", in.Result}, {"error", in.Error}} {
		if err := check.Text(f[0], f[1], MaxText, false); err != nil {
			return err
		}
	}
	if in.Retry && in.To != projection.StepInProgress {
		return fmt.Errorf("%w: a retry moves a step to in_progress, not %s", ErrInvalid, in.To)
	}
	return checkResultData(in.ResultData)
}

// checkResultData refuses a structured result that is not one valid JSON
// value within MaxInput bytes.
func checkResultData(data string) error {
	if data == "" {
		return nil
	}
	if len(data) > MaxInput {
		return fmt.Errorf("%w: result is %d bytes, the limit is %d", ErrInvalid, len(data), MaxInput)
	}
	if err := CheckJSON([]byte(data)); err != nil {
		return fmt.Errorf("%w: result is not valid JSON: %v", ErrInvalid, err)
	}
	return nil
}

// StepRetry moves a failed step back to in_progress for another attempt:
// its attempt grows by one, and its error, end time and progress are
// cleared (the log keeps them). A step that is not failed is a conflict.
func (e *Engine) StepRetry(project, id string, note string, wr Write) (*TaskStep, error) {
	return e.MoveStep(StepMove{Project: project, ID: id, To: projection.StepInProgress, Note: note, Retry: true, Write: wr})
}

func (w *writer) moveStep(task string, in StepMove) error {
	t, err := w.stepTask(in.Project, task)
	if err != nil {
		return err
	}
	s := t.Step(in.ID)
	if s == nil {
		return fmt.Errorf("%w: step %s of task %s", ErrNotFound, in.ID, task)
	}
	ev := stepEvent(in)
	stream := projection.TaskStream(in.Project, task)
	if in.Retry {
		if s.Status != projection.StepFailed {
			return fmt.Errorf("%w: step %s is %s; only a failed step can be retried", store.ErrConflict, s.ID, s.Status)
		}
		_, err = w.emit(stream, in.expect(), in.Project, projection.TypeStepStatusChanged, ev)
		return err
	}
	if stepUnchanged(s, ev) {
		return checkVersion(in.Write, t.Version, stream)
	}
	if s.Status != in.To || in.To != projection.StepInProgress {
		if !slices.Contains(stepTransitions[s.Status], in.To) {
			return errStepTransition(s, in.To)
		}
	}
	_, err = w.emit(stream, in.expect(), in.Project, projection.TypeStepStatusChanged, ev)
	return err
}

func stepEvent(in StepMove) projection.StepStatusChanged {
	ev := projection.StepStatusChanged{ID: in.ID, To: in.To, Progress: in.Progress, Note: in.Note, Result: in.Result, Error: in.Error,
		ResultData: in.ResultData}
	if in.To == projection.StepCompleted {
		full := 100
		ev.Progress = &full
	}
	return ev
}

// stepUnchanged reports whether ev would leave s as it is: the same
// status and nothing new to record.
func stepUnchanged(s *projection.Step, ev projection.StepStatusChanged) bool {
	same := func(cur, v string) bool { return v == "" || v == cur }
	return s.Status == ev.To && (ev.Progress == nil || *ev.Progress == s.Progress) &&
		same(s.Note, ev.Note) && same(s.Result, ev.Result) && same(s.Error, ev.Error) && same(string(s.ResultData), ev.ResultData)
}

// errStepTransition is a refused step move; it names the allowed moves.
func errStepTransition(s *projection.Step, to string) error {
	allowed := stepTransitions[s.Status]
	if s.Status == projection.StepFailed && to == projection.StepInProgress {
		return fmt.Errorf("%w: step %s is failed and cannot move to in_progress; retry it for another attempt: 'step retry %s'",
			store.ErrConflict, s.ID, s.ID)
	}
	if len(allowed) == 0 {
		return fmt.Errorf("%w: step %s is %s and cannot move to %s; %s is final, it can move to: nothing",
			store.ErrConflict, s.ID, s.Status, to, s.Status)
	}
	names := make([]string, len(allowed))
	for i, st := range allowed {
		names[i] = st + " (" + stepVerbs[st] + ")"
	}
	return fmt.Errorf("%w: step %s is %s and cannot move to %s; from %s it can move to: %s",
		store.ErrConflict, s.ID, s.Status, to, s.Status, strings.Join(names, ", "))
}

// Step returns one step (T-n.m) with its task's version, or ErrNotFound.
func (e *Engine) Step(project, id string) (*TaskStep, error) {
	task, _, err := ParseStepID(id)
	if err != nil {
		return nil, err
	}
	return e.step(project, task, id)
}

// step is Step of the step id of task, both parsed.
func (e *Engine) step(project, task, id string) (*TaskStep, error) {
	return readTask(e, project, task, func(t *projection.Task) (*TaskStep, error) {
		s := t.Step(id)
		if s == nil {
			return nil, fmt.Errorf("%w: step %s of task %s", ErrNotFound, id, task)
		}
		return &TaskStep{Step: *s, Task: t.ID, Version: t.Version}, nil // a Step holds no slice or pointer
	})
}

// Steps lists a task's steps in order; ErrNotFound for an unknown task.
func (e *Engine) Steps(project, task string) ([]TaskStep, error) {
	t, err := e.Task(project, task)
	if err != nil {
		return nil, err
	}
	out := make([]TaskStep, len(t.Steps))
	for i, s := range t.Steps {
		out[i] = TaskStep{Step: s, Task: t.ID, Version: t.Version}
	}
	return out, nil
}
