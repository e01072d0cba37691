package legacy

import (
	"bytes"
	"fmt"
	"github.com/flowctl/flowctl/flow"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// execLine is one record of an execution log.
type execLine struct {
	key  string // the line as compact JSON: its identity
	task string // task_id: a ref or a T-n id; "" or "unknown" for none
	ts   time.Time
	in   flow.NewExec
	o    *object
}

// importExecLog records one exec per line of a JSONL execution log, at
// the line's timestamp, on the task its task_id names (a ref, else a T-n
// id; "unknown" or none: the project). plan_id is not imported: the
// legacy plans have no counterpart, and an exec takes its task's plan.
// Each record's event id is derived from the line, so a second import
// finds it and skips it.
func importExecLog(e *flow.Engine, in Input) (*Result, error) {
	data, err := in.read()
	if err != nil {
		return nil, err
	}
	lines, warns, err := parseExecLog(in.Name, data)
	if err != nil {
		return nil, err
	}
	res := &Result{Format: FromExecJSONL, Project: in.Project, Read: len(lines), Warnings: warns}
	err = runImport(e, FromExecJSONL, in.Project, res, func(im *flow.Importer, res *Result) error {
		return importExecs(im, lines, in.Project, res)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// unknownKeys gathers the keys no line's fields use: key -> lines.
type unknownKeys map[string][]int

func (u unknownKeys) warnings(file string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(u)) {
		lines := u[k]
		out = append(out, fmt.Sprintf("%s:%d: ignored %q (not a field flowctl imports) on %d line(s)", file, lines[0], k, len(lines)))
	}
	return out
}

func parseExecLog(file string, data []byte) ([]execLine, []string, error) {
	var out []execLine
	unknown := unknownKeys{}
	var bad badEntries
	for n, raw := range bytes.Split(data, []byte{'\n'}) {
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			continue
		}
		x, err := parseExecLine(file, n+1, raw)
		if err != nil {
			if bad.add(err) {
				continue
			}
			return nil, nil, err
		}
		for _, k := range x.o.unusedKeys() {
			unknown[k] = append(unknown[k], n+1)
		}
		out = append(out, x)
	}
	if err := bad.err(); err != nil {
		return nil, nil, err
	}
	return out, unknown.warnings(file), nil
}

func parseExecLine(file string, line int, raw []byte) (execLine, error) {
	o, err := newObject(file, line, "", raw)
	if err != nil {
		return execLine{}, err
	}
	x := execLine{key: compactJSON(raw), o: o}
	if x.ts, _, err = o.timestamp("timestamp", true); err != nil {
		return x, err
	}
	if x.task, err = o.ident("task_id", false); err != nil {
		return x, err
	}
	if _, err := o.ident("plan_id", false); err != nil {
		return x, err
	}
	j, err := execJSONOf(o)
	if err != nil {
		return x, err
	}
	if x.in, err = j.Input(); err != nil {
		return x, o.wrap(err)
	}
	x.in.Clean()
	return x, o.wrap(x.in.Check())
}

// execJSONOf reads the fields of a line that make an exec record.
func execJSONOf(o *object) (flow.ExecJSON, error) {
	var j flow.ExecJSON
	var err error
	for _, f := range []struct {
		key string
		dst *string
	}{{"code", &j.Code}, {"command", &j.Command}, {"stdout", &j.Stdout}, {"stderr", &j.Stderr}, {"cwd", &j.Cwd}} {
		if *f.dst, err = o.str(f.key, false); err != nil {
			return j, err
		}
	}
	if b, ok, err := o.boolean("success"); err != nil {
		return j, err
	} else if ok {
		j.Success = &b
	}
	if code, err := o.ident("exit_code", false); err != nil {
		return j, err
	} else if code != "" {
		c, err := strconv.Atoi(code)
		if err != nil || c < math.MinInt32 || c > math.MaxInt32 {
			return j, o.errorf(flow.ErrInvalid, `"exit_code" %s is not an exit code`, code)
		}
		c = signalExit(c)
		j.ExitCode = &c
	}
	if j.ElapsedMS, err = o.number("elapsed_ms"); err != nil {
		return j, err
	}
	if j.AddedVars, err = o.strs("added_vars"); err != nil {
		return j, err
	}
	j.AddedImports, err = o.strs("added_imports")
	return j, err
}

// signalExit turns Python's exit code -n of a process killed by signal n
// (subprocess's returncode) into 128+n, as shells and `exec run` record
// it; other codes stay as they are for the record's checks.
func signalExit(code int) int {
	if code < 0 && code >= -(flow.MaxExitCode-128) {
		return 128 - code
	}
	return code
}

// noTask reports whether a task_id stands for no task: the seeds' logger
// writes "unknown" when FLOW_TASK_ID is not set.
func noTask(id string) bool {
	id = strings.TrimSpace(id)
	return id == "" || strings.EqualFold(id, "unknown")
}

func importExecs(im *flow.Importer, lines []execLine, project string, res *Result) error {
	if _, err := im.OpenProject(project); err != nil {
		return err
	}
	refs, err := loadRefs(im, project)
	if err != nil {
		return err
	}
	ids := newLegacyIDs(FromExecJSONL, project)
	for n, x := range lines {
		im.Progress(n, len(lines))
		id := ids.next(x.key)
		if im.Imported(id) {
			res.Skipped++
			continue
		}
		if err := importExec(im, x, project, refs, id); err != nil {
			return x.o.wrap(err)
		}
		res.Created.Execs++
	}
	return nil
}

func importExec(im *flow.Importer, x execLine, project string, refs *refIndex, id flow.ImportID) error {
	in := x.in
	in.Project = project
	if !noTask(x.task) {
		t, ok := refs.task(x.task)
		if !ok {
			return fmt.Errorf("%w: task_id %q names no task of project %s (import its workflow.json first)", flow.ErrNotFound, x.task, project)
		}
		in.Task = t
	}
	in.OccurredAt = x.ts
	return im.RecordExec(in, id)
}
