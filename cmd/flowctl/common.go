package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/flowctl/flowctl/flow"
	"github.com/spf13/cobra"
)

// currentFile holds the project chosen with 'project switch', next to
// the flow file.
const currentFile = "current"

// writeOpts are the flags every write command takes.
type writeOpts struct {
	ifVersion uint64
	key       string
}

func (o *writeOpts) addFlags(cmd *cobra.Command) {
	ifVersionVar(cmd, &o.ifVersion, "fail with exit 4 unless the entity is at this version (from 1)")
	o.addKeyFlag(cmd)
}

// addKeyFlag defines only --idempotency-key, for the commands that create
// an entity: a new one has no version to check, so they take no
// --if-version (an unknown flag, exit 2) rather than ignore it.
func (o *writeOpts) addKeyFlag(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.key, "idempotency-key", "", "a retry with the same key returns the first result and changes nothing")
}

func (o writeOpts) write() flow.Write { return flow.Write{IfVersion: o.ifVersion, Key: o.key} }

// session is one command's open engine and resolved project.
type session struct {
	eng     *flow.Engine
	project string
}

// withEngine opens the engine, resolves the current project (unless
// noProject), runs fn and closes the engine.
func (a *app) withEngine(readOnly bool, fn func(s *session) error) (err error) {
	defer a.holdOutput(&err)()
	eng, err := a.open(readOnly)
	if err != nil {
		return err
	}
	defer closeEngine(eng, &err)
	s := &session{eng: eng}
	if s.project, err = a.currentProject(eng); err != nil {
		return err
	}
	return fn(s)
}

// holdOutput keeps what the command prints in memory until the returned
// function runs, and then writes it. Deferred before the engine's close,
// it runs after it: a slow reader of the output (a pager, a full pipe)
// never keeps the file locked. Output to a regular file or to /dev/null
// is not held (neverWaits): a write there does not wait for a reader,
// and holding a large answer (a diff of 90k changes: 3.6 MB) only costs
// memory. Streaming commands (log, export, watch) do not use it: they
// release the file between pages instead.
func (a *app) holdOutput(err *error) func() {
	if neverWaits(a.stdout) {
		return func() {}
	}
	out, buf := a.stdout, &bytes.Buffer{}
	a.stdout = buf
	return func() {
		a.stdout = out
		if _, werr := out.Write(buf.Bytes()); *err == nil {
			*err = werr
		}
	}
}

// neverWaits reports whether a write to w never waits for a reader: w
// is a regular file or the null device (not a pipe, a socket or a
// terminal).
func neverWaits(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	if fi.Mode().IsRegular() {
		return true
	}
	null, err := os.Stat(os.DevNull)
	return err == nil && os.SameFile(fi, null)
}

// currentProject resolves the project: --project or FLOW_PROJECT, then
// the one chosen with 'project switch', then the only project there is.
// A unique prefix of a name is accepted.
func (a *app) currentProject(eng *flow.Engine) (string, error) {
	name := a.g.project
	if name == "" {
		b, err := os.ReadFile(a.selectionPath(eng.Path()))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		name = strings.TrimSpace(string(b))
	}
	if name != "" {
		return eng.ResolveProject(name)
	}
	all, err := eng.Projects()
	if err != nil {
		return "", err
	}
	if len(all) == 1 {
		return all[0].Name, nil
	}
	return "", withHint(fmt.Errorf("%w: no project selected", flow.ErrInvalid),
		"pass --project, set FLOW_PROJECT, or run 'flowctl project switch NAME'")
}

// taskArg returns the task id given as args[i], or FLOW_TASK_ID.
func (a *app) taskArg(args []string, i int) (string, error) {
	if i < len(args) {
		return flow.ParseTaskID(args[i])
	}
	if v := a.getenv("FLOW_TASK_ID"); v != "" {
		return flow.ParseTaskID(v)
	}
	return "", usageError{errors.New("give a task id (T-1), or set FLOW_TASK_ID")}
}

// planDefault returns the plan flag, or FLOW_PLAN_ID.
func (a *app) planDefault(flag string) string {
	if flag != "" {
		return flag
	}
	return a.getenv("FLOW_PLAN_ID")
}

// readInput reads JSON given as an argument, as @file, or as - for stdin,
// and checks it (valid UTF-8, no duplicate keys, at most 64 levels deep).
func (a *app) readInput(arg string) ([]byte, error) {
	var b []byte
	var err error
	switch {
	case arg == "-":
		b, err = io.ReadAll(io.LimitReader(a.stdin, flow.MaxInput+1))
	case strings.HasPrefix(arg, "@"):
		b, err = readLimited(a.abs(arg[1:]))
	default:
		b = []byte(arg)
	}
	if err != nil {
		return nil, err
	}
	if len(b) > flow.MaxInput {
		return nil, fmt.Errorf("%w: input is over %d bytes", flow.ErrInvalid, flow.MaxInput)
	}
	if err := flow.CheckJSON(b); err != nil {
		return nil, fmt.Errorf("%w: input is not valid JSON: %v", flow.ErrInvalid, err)
	}
	return b, nil
}

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, flow.MaxInput+1))
}
