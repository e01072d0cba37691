package flow

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/flowctl/flowctl/flow/capture"
	"github.com/flowctl/flowctl/flow/internal/check"
	"github.com/flowctl/flowctl/projection"
)

// OutputLimit is how much of a command's stdout or stderr an exec record
// keeps at each end (capture.Limit): the first OutputLimit bytes (Head)
// and the last OutputLimit bytes not already in Head (Tail).
const OutputLimit = capture.Limit

// Bounds of an exec record's numbers: exit codes are those of a process
// (0-255; a command killed by signal n is 128+n, as shells report it),
// and a command runs for at most a year.
const (
	MaxExitCode  = 255
	MaxElapsedMS = 365 * 24 * 3600 * 1000
)

// kindExec names exec records in a Ref.
const kindExec = "exec"

// NewExec is the input of RecordExec: one command (or code snippet) that
// was run, with what it printed already captured.
type NewExec struct {
	Project      string            `json:"project"`
	Task         string            `json:"task,omitempty"` // empty: an exec of the project
	Step         string            `json:"step,omitempty"` // implies its task
	Plan         string            `json:"plan,omitempty"` // empty: the task's plan
	Command      string            `json:"command,omitempty"`
	Code         string            `json:"code,omitempty"`
	Cwd          string            `json:"cwd,omitempty"`
	ExitCode     int               `json:"exit_code"`
	Success      bool              `json:"success"` // must be ExitCode == 0
	ElapsedMS    float64           `json:"elapsed_ms"`
	Stdout       projection.Output `json:"stdout"`
	Stderr       projection.Output `json:"stderr"`
	AddedVars    []string          `json:"added_vars,omitempty"`
	AddedImports []string          `json:"added_imports,omitempty"`
	GitHead      string            `json:"git_head,omitempty"`
	// OccurredAt is when the command ran, if not just now: the time a
	// record given to flowctl says (its timestamp). Zero: none.
	OccurredAt time.Time `json:"occurred_at,omitzero"`
	Write
}

func (in *NewExec) check() error {
	if strings.TrimSpace(in.Command) == "" && strings.TrimSpace(in.Code) == "" {
		return fmt.Errorf("%w: an exec record needs a command or code", ErrInvalid)
	}
	texts := []struct {
		field, v string
		check    func(field, s string, limit int, required bool) error
		limit    int
	}{{"command", in.Command, check.Text, MaxText}, {"code", in.Code, check.Text, MaxCode},
		{"cwd", in.Cwd, check.Line, 4096}, {"git_head", in.GitHead, check.Line, 128}}
	for _, t := range texts {
		if err := t.check(t.field, t.v, t.limit, false); err != nil {
			return err
		}
	}
	if err := in.checkResult(); err != nil {
		return err
	}
	if err := checkNames("added_vars", in.AddedVars); err != nil {
		return err
	}
	if err := checkNames("added_imports", in.AddedImports); err != nil {
		return err
	}
	return in.checkIDs()
}

func (in *NewExec) checkResult() error {
	if in.ExitCode < 0 || in.ExitCode > MaxExitCode {
		return fmt.Errorf("%w: exit_code %d is outside 0-%d (a command killed by signal n is recorded as 128+n)",
			ErrInvalid, in.ExitCode, MaxExitCode)
	}
	if in.Success != (in.ExitCode == 0) {
		return fmt.Errorf("%w: success is %t but exit_code is %d (success means exit code 0)", ErrInvalid, in.Success, in.ExitCode)
	}
	if math.IsNaN(in.ElapsedMS) || math.IsInf(in.ElapsedMS, 0) || in.ElapsedMS < 0 || in.ElapsedMS > MaxElapsedMS {
		return fmt.Errorf("%w: elapsed_ms %v is not a duration of at most a year", ErrInvalid, in.ElapsedMS)
	}
	if err := checkOutput("stdout", in.Stdout); err != nil {
		return err
	}
	return checkOutput("stderr", in.Stderr)
}

func checkOutput(field string, o projection.Output) error {
	_, err := hex.DecodeString(o.SHA256)
	switch {
	case len(o.Head) > OutputLimit || len(o.Tail) > OutputLimit:
		return fmt.Errorf("%w: %s head and tail are limited to %d bytes each", ErrInvalid, field, OutputLimit)
	case !utf8.ValidString(o.Head) || !utf8.ValidString(o.Tail):
		return fmt.Errorf("%w: %s is not valid UTF-8", ErrInvalid, field)
	case o.Bytes < 0:
		return fmt.Errorf("%w: %s bytes is negative", ErrInvalid, field)
	case err != nil || (o.SHA256 != "" && len(o.SHA256) != 2*sha256.Size):
		return fmt.Errorf("%w: %s sha256 is not a hex SHA-256", ErrInvalid, field)
	}
	return nil
}

func checkNames(field string, names []string) error {
	if len(names) > 10000 {
		return fmt.Errorf("%w: %s has %d entries, the limit is 10000", ErrInvalid, field, len(names))
	}
	for _, n := range names {
		if err := check.Line(field+" entry", n, MaxTitle, true); err != nil {
			return err
		}
	}
	return nil
}

func (in *NewExec) checkIDs() error {
	if in.Plan != "" {
		id, err := ParsePlanID(in.Plan)
		if err != nil {
			return err
		}
		in.Plan = id
	}
	return taskStep(&in.Task, &in.Step)
}

// CheckExec validates an exec record without recording it: the checks of
// RecordExec (--if-version included), in a read transaction. It returns
// the input as RecordExec would record it: ids normalized, the task taken
// from the step, the plan from the task. `exec run` calls it before
// running the command, so that a bad id fails before anything runs.
func (e *Engine) CheckExec(in NewExec) (NewExec, error) {
	if err := in.check(); err != nil {
		return in, err
	}
	err := e.read(func(src source) error {
		p, t, err := validateExec(src, &in)
		if err != nil {
			return err
		}
		version := p.Version
		if t != nil {
			version = t.Version
		}
		return checkVersion(in.Write, version, subjectStream(in.Project, in.Task))
	})
	return in, versionConflict(err)
}

// validateExec checks the project, task, step and plan of an exec record,
// filling its plan from its task, and returns the project and task.
func validateExec(src projection.Store, in *NewExec) (*projection.Project, *projection.Task, error) {
	p, err := openProject(src, in.Project)
	if err != nil {
		return nil, nil, err
	}
	t, err := subject(src, in.Project, in.Task, in.Step)
	if err != nil {
		return nil, nil, err
	}
	if in.Plan == "" && t != nil {
		in.Plan = t.Plan
	}
	if in.Plan != "" {
		if _, err := mustPlan(src, in.Project, in.Plan); err != nil {
			return nil, nil, err
		}
	}
	return p, t, nil
}

// RecordExec records an exec with the next X-n of its project, on its
// task's stream, or the project's when it has no task.
func (e *Engine) RecordExec(in NewExec) (*projection.Exec, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	ref, err := e.command(in.Write, "exec.record", in, func(w *writer) (Ref, error) {
		return w.recordExec(in)
	})
	if err != nil {
		return nil, err
	}
	return e.Exec(ref.Project, ref.ID)
}

func (w *writer) recordExec(in NewExec) (Ref, error) {
	p, _, err := validateExec(w, &in)
	if err != nil {
		return Ref{}, err
	}
	id := projection.ShortID(projection.PrefixExec, p.Counters.Execs+1)
	_, err = w.emit(subjectStream(in.Project, in.Task), in.expect(), in.Project, projection.TypeExecRecorded,
		projection.ExecRecorded{ID: id, Task: in.Task, Step: in.Step, Plan: in.Plan, Command: in.Command,
			Code: in.Code, Cwd: in.Cwd, ExitCode: in.ExitCode, Success: in.Success, ElapsedMS: in.ElapsedMS,
			Stdout: in.Stdout, Stderr: in.Stderr, AddedVars: in.AddedVars, AddedImports: in.AddedImports, GitHead: in.GitHead,
			OccurredAt: occurredAt(in.OccurredAt)})
	return Ref{Kind: kindExec, Project: in.Project, ID: id}, err
}

// Exec returns an exec record, or ErrNotFound.
func (e *Engine) Exec(project, id string) (*projection.Exec, error) {
	var x *projection.Exec
	err := e.read(func(src source) error {
		var err error
		x, err = src.Exec(project, id)
		if err == nil && x == nil {
			err = fmt.Errorf("%w: exec record %s in project %s", ErrNotFound, id, project)
		}
		return err
	})
	return x, err
}

// ExecFilter selects exec records for Execs. Zero fields match all.
type ExecFilter struct {
	Task   string // T-n
	Failed bool   // only records that did not succeed
}

// Execs lists a project's exec records that match f, in id order
// (EachExec, collected).
func (e *Engine) Execs(project string, f ExecFilter) ([]*projection.Exec, error) {
	var out []*projection.Exec
	err := e.EachExec(project, f, appendTo(&out))
	return out, err
}

// EachExec calls fn with each of a project's exec records that match f, in
// id order, decoding only those that can match: the status index serves
// f.Failed, and a record whose stored bytes lack f.Task is skipped
// undecoded. fn returning ErrStop ends the walk (see EachTask). Errors:
// ErrInvalid (the task id), ErrNotFound (the project, or the task filtered
// on).
func (e *Engine) EachExec(project string, f ExecFilter, fn func(*projection.Exec) error) error {
	if f.Task != "" {
		id, err := ParseTaskID(f.Task)
		if err != nil {
			return err
		}
		f.Task = id
	}
	return e.read(func(src source) error {
		if err := checkScope(src, project, f.Task); err != nil {
			return err
		}
		return f.walk(src).each(src, project, fn)
	})
}

func (f ExecFilter) walk(src source) walk[projection.Exec] {
	w := execWalk(src)
	w.maybe = containing(f.Task)
	w.match = func(x *projection.Exec) bool { return (f.Task == "" || x.Task == f.Task) && !(f.Failed && x.Success) }
	if f.Failed {
		w.status = "failed" // the index's status of a record that did not succeed
	}
	return w
}

// ExecJSON is an exec record as JSON, in the shape of the seeds' JSONL
// execution log. Code or command is required; success and exit_code
// default from each other (a missing exit code is 0 on success, else 1).
// A line of seed 003's log is taken verbatim: task_id and plan_id name
// the task and plan ("unknown" and "local", what its logger writes when
// FLOW_TASK_ID and FLOW_PLAN_ID are not set, name none), and timestamp
// is when the code ran (OccurredAt).
type ExecJSON struct {
	Code         string   `json:"code"`
	Command      string   `json:"command"`
	Stdout       string   `json:"stdout"`
	Stderr       string   `json:"stderr"`
	Success      *bool    `json:"success"`
	ExitCode     *int     `json:"exit_code"`
	ElapsedMS    float64  `json:"elapsed_ms"`
	AddedVars    []string `json:"added_vars"`
	AddedImports []string `json:"added_imports"`
	Cwd          string   `json:"cwd"`
	Task         string   `json:"task"`
	Step         string   `json:"step"`
	Plan         string   `json:"plan"`
	// Seed 003's names.
	TaskID    string          `json:"task_id,omitempty"`
	PlanID    string          `json:"plan_id,omitempty"`
	Timestamp json.RawMessage `json:"timestamp,omitempty"`
}

// execFields are the keys ExecJSON accepts, matched exactly.
var execFields = []string{"code", "command", "stdout", "stderr", "success", "exit_code", "elapsed_ms",
	"added_vars", "added_imports", "cwd", "task", "step", "plan", "task_id", "plan_id", "timestamp"}

// DecodeExec parses an exec record given as JSON (see ExecJSON) into the
// input of RecordExec, strictly: one object, valid UTF-8, no duplicate,
// unknown or miscased keys, values of the right types. Errors are
// ErrInvalid. The project is left for the caller to set.
func DecodeExec(b []byte) (NewExec, error) {
	if err := CheckJSON(b); err != nil {
		return NewExec{}, fmt.Errorf("%w: exec record is not valid JSON: %v", ErrInvalid, err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil || keys == nil {
		return NewExec{}, fmt.Errorf("%w: an exec record is a JSON object", ErrInvalid)
	}
	for k := range keys {
		if !slices.Contains(execFields, k) {
			return NewExec{}, fmt.Errorf("%w: exec record: unknown field %q (known: %s)", ErrInvalid, k, strings.Join(execFields, ", "))
		}
	}
	var x ExecJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&x); err != nil {
		return NewExec{}, fmt.Errorf("%w: exec record: %v", ErrInvalid, err)
	}
	return x.input()
}

func (x ExecJSON) input() (NewExec, error) {
	in := NewExec{Step: x.Step, Command: x.Command, Code: x.Code, Cwd: x.Cwd,
		ElapsedMS: x.ElapsedMS, Stdout: capture.String(x.Stdout), Stderr: capture.String(x.Stderr),
		AddedVars: x.AddedVars, AddedImports: x.AddedImports}
	var err error
	if in.Task, err = seedName("task", x.Task, "task_id", x.TaskID, noTask); err != nil {
		return in, err
	}
	if in.Plan, err = seedName("plan", x.Plan, "plan_id", x.PlanID, noPlan); err != nil {
		return in, err
	}
	if in.OccurredAt, _, err = timestampOf("timestamp", x.Timestamp); err != nil {
		return in, fmt.Errorf("exec record: %w", err)
	}
	return in, x.result(&in)
}

// seedName is the value of a field given by its name or by seed 003's
// alias for it, not both; an alias value that none says names nothing is
// "".
func seedName(name, v, alias, av string, none func(string) bool) (string, error) {
	switch {
	case v != "" && av != "":
		return "", fmt.Errorf("%w: exec record: give %s or %s, not both", ErrInvalid, name, alias)
	case av != "" && none(av):
		return "", nil
	case av != "":
		return av, nil
	}
	return v, nil
}

// noPlan reports whether a plan_id stands for no plan: the seeds' logger
// writes "local" when FLOW_PLAN_ID is not set.
func noPlan(id string) bool {
	id = strings.TrimSpace(id)
	return id == "" || strings.EqualFold(id, "local")
}

// result sets in's exit code and success from x's.
func (x ExecJSON) result(in *NewExec) error {
	switch {
	case x.Success == nil && x.ExitCode == nil:
		return fmt.Errorf("%w: exec record: give success or exit_code", ErrInvalid)
	case x.ExitCode != nil:
		in.ExitCode = *x.ExitCode
		in.Success = in.ExitCode == 0
		if x.Success != nil && *x.Success != in.Success {
			return fmt.Errorf("%w: exec record: success is %t but exit_code is %d", ErrInvalid, *x.Success, in.ExitCode)
		}
	case !*x.Success:
		in.ExitCode = 1
	default:
		in.Success = true
	}
	return nil
}
