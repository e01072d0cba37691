package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/legacy"
	"github.com/spf13/cobra"
)

func (a *app) exportCommand() *cobra.Command {
	var since uint64
	cmd := &cobra.Command{
		Use:   "export [--since SEQ] [--project P]",
		Short: "Write events as JSON lines, every envelope field",
		Long: "export writes one JSON object per event to stdout, oldest first: every envelope field, the\n" +
			"payload as JSON in \"data\" and its exact stored bytes in \"raw\" (base64), so that import\n" +
			"reproduces it byte for byte. It exports the whole file; --project (the flag, not\n" +
			"FLOW_PROJECT) exports only that project's events.",
		Example: "  flowctl export > events.jsonl\n  flowctl export --since 1200 > delta.jsonl\n  flowctl export --project website > website.jsonl",
		Args:    cobra.NoArgs,
	}
	cmd.Flags().Uint64Var(&since, "since", 0, "only events from this seq on")
	cmd.RunE = a.action(func(cmd *cobra.Command, _ []string) error {
		return a.runExport(since, cmd.Flags().Changed("project"))
	})
	return cmd
}

// runExport exports the file, or with --project (given on the command
// line) that project's events.
func (a *app) runExport(since uint64, oneProject bool) (err error) {
	a.work = "exporting"
	if isTerminal(a.stdout) {
		a.work = "-" // the events go to the terminal: no bar between them
	}
	eng, err := a.open(true)
	if err != nil {
		return err
	}
	defer closeEngine(eng, &err)
	if !oneProject {
		_, err = eng.Export(a.stdout, since)
		return err
	}
	project, err := eng.ResolveProject(a.g.project)
	if err != nil {
		return err
	}
	_, err = eng.ExportProject(a.stdout, project, since)
	return err
}

func (a *app) importCommand() *cobra.Command {
	var from, cpuProfile string
	cmd := &cobra.Command{
		Use:   "import FILE|DIR [--from events|workflow-json|history-json|context-dir|exec-jsonl]",
		Short: "Append the events of an export (all or nothing, idempotent)",
		Long: "import reads events as written by export (FILE, or - for stdin), a line at a time, and\n" +
			"appends them all or none: up to 20,000 in one transaction, more into a copy of the file that\n" +
			"replaces it when every event is in. Events already present (same id and content) are skipped,\n" +
			"so importing a file twice changes nothing. Each event must continue its stream.\n\n" +
			"--from imports the files of the system flowctl replaces, each in one transaction, each\n" +
			"idempotent, and prints what it created:\n" +
			"  workflow-json  projects/<name>/workflow.json: the project (created if missing) and one task\n" +
			"                 per entry, its id kept as the task's ref; entries already imported are skipped\n" +
			"  history-json   projects/<name>/workflow_history.json: each event as a note, on the task it\n" +
			"                 names (detail.task_id) or on the project, at its original time\n" +
			"  context-dir    a directory of *.json dumps {task_id, context}: merged into each task's context\n" +
			"  exec-jsonl     an execution log, one JSON object per line: one exec record per line\n" +
			"A malformed entry is reported with its file and line, and nothing is imported.",
		Example: "  flowctl import events.jsonl\n  flowctl export --db a.db | flowctl import --db b.db -\n" +
			"  flowctl import --from workflow-json projects/myproj/workflow.json\n" +
			"  flowctl import --from history-json --project myproj projects/myproj/workflow_history.json\n" +
			"  flowctl import --from context-dir --project myproj context_dump/\n" +
			"  flowctl import --from exec-jsonl --project myproj logs/T-0001.jsonl",
		Args: cobra.ExactArgs(1),
	}
	enumVar(cmd.Flags(), &from, "from", "events", append([]string{"events"}, legacy.Formats()...), "input format: events (the JSONL of export), "+strings.Join(legacy.Formats(), ", "))
	cmd.Flags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the import to this file")
	_ = cmd.Flags().MarkHidden("cpuprofile")
	cmd.RunE = a.action(func(cmd *cobra.Command, args []string) error {
		if from == "events" {
			if err := refuseGiven(cmd, "it appends the events as exported, each with its own project, actor and session", "project", "actor", "session", "no-hooks"); err != nil {
				return err
			}
			stop, err := startCPUProfile(cpuProfile)
			if err != nil {
				return err
			}
			defer stop()
			defer tuneGC(importGCPercent, importMemoryLimit)()
			return a.runImport(args[0])
		}
		return a.runLegacyImport(args[0], from, cmd.Flags().Changed("project"))
	})
	return cmd
}

// importGCPercent and importMemoryLimit are the collector's settings
// while an import runs, unless GOGC or GOMEMLIMIT say otherwise: an import
// allocates its batches, records and index entries at a high rate over a
// live heap that stays about the same (60-80 MiB at 1M events), so the
// collector runs less often: when the heap is five times the live one,
// but before the process's Go memory reaches the limit. On 1M events
// (flowbench's file): 23.2 s of CPU with Go's defaults, peak RSS 221 MiB;
// 19.7 s with a limit of 256 MiB, peak RSS 320 MiB. Since an import
// reuses its batches (live heap 55-90 MiB), 192 MiB costs no more CPU
// than 256 did (20.6 s against 20.6 s, loaded machine) and keeps the
// peak RSS, with at most 32 MiB of the file's map resident, near 236
// MiB; 176 MiB began to cost CPU (+2-3 s).
const (
	importGCPercent   = 400
	importMemoryLimit = 192 << 20
)

// tuneGC sets the collector's percent and soft memory limit for a
// command that allocates much and keeps little (import, verify, diff)
// and returns what puts Go's settings back; GOGC
// or GOMEMLIMIT in the environment win, and then nothing is set.
func tuneGC(percent int, limit int64) (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	oldPercent, oldLimit := debug.SetGCPercent(percent), debug.SetMemoryLimit(limit)
	return func() { debug.SetGCPercent(oldPercent); debug.SetMemoryLimit(oldLimit) }
}

func (a *app) runImport(file string) (err error) {
	// A pipe is read into a temporary file before the file lock is taken:
	// a slow pipe must not keep everyone else out. A file is read as the
	// import goes, a line at a time.
	in, err := a.importInput(file)
	if err != nil {
		return withHint(err, "give the path of a file written by 'flowctl export', or - for stdin")
	}
	defer in.Close()
	defer a.holdOutput(&err)()
	a.work = "importing"
	eng, made, err := a.openForImport()
	if err != nil {
		return err
	}
	res, err := eng.Import(in)
	if cerr := eng.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		made.undo()
		return err
	}
	return a.printer().one(res, func(w io.Writer) {
		fmt.Fprintf(w, "read %d events: %d appended, %d already present\n", res.Read, res.Appended, res.Skipped)
	})
}

// importInput opens what an import of events reads: FILE when it is a
// regular file, else (stdin, a named pipe) a temporary copy of all of it,
// removed on Close.
func (a *app) importInput(file string) (io.ReadCloser, error) {
	if file != "-" {
		f, err := os.Open(a.abs(file))
		if err != nil {
			return nil, err
		}
		fi, err := f.Stat()
		switch {
		case err != nil:
			f.Close()
			return nil, err
		case fi.IsDir():
			f.Close()
			return nil, fmt.Errorf("%w: %s is a directory", flow.ErrInvalid, file)
		case fi.Mode().IsRegular():
			return f, nil
		}
		defer f.Close()
		return spool(f)
	}
	return spool(a.stdin)
}

// spool copies r into a temporary file and returns it, read from its
// start; closing it removes it.
func spool(r io.Reader) (io.ReadCloser, error) {
	f, err := os.CreateTemp("", "flowctl-import-*.jsonl")
	if err != nil {
		return nil, err
	}
	tmp := &tempFile{f}
	if _, err := io.Copy(f, r); err != nil {
		tmp.Close()
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		tmp.Close()
		return nil, err
	}
	return tmp, nil
}

// tempFile is a file that Close removes.
type tempFile struct{ *os.File }

func (t *tempFile) Close() error {
	err := t.File.Close()
	return errors.Join(err, os.Remove(t.Name()))
}

// openForImport opens the file an import of events goes into, creating it
// when there is none (a restore from an export needs no init first): the
// file --db or FLOW_DB names, else the one found from the working
// directory, else .flow/flow.db here. made is what it created, for undo.
func (a *app) openForImport() (eng *flow.Engine, made *madePaths, err error) {
	path, err := a.dbPath()
	if errors.Is(err, flow.ErrNotFound) && a.g.db == "" {
		path, err = filepath.Join(a.dir, flow.DefaultDir, flow.DefaultFile), nil
	}
	if err != nil {
		return nil, nil, err
	}
	if store.DriverName(path) != store.PathDriver { // a database: the driver creates its schema
		opts, err := a.openOptions(false)
		if err != nil {
			return nil, nil, err
		}
		opts.Create = true
		eng, err = flow.Open(path, opts)
		return eng, nil, err
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		eng, err = a.open(false)
		return eng, nil, err
	}
	if made, err = makeFile(path); err != nil {
		return nil, nil, err
	}
	opts, err := a.openOptions(false)
	if err == nil {
		opts.Create = true
		eng, err = flow.Open(path, opts)
	}
	if err != nil {
		made.undo()
		return nil, nil, err
	}
	return eng, made, nil
}

// madePaths are the directories (outermost first) and the file that an
// import made for a file that was not there.
type madePaths struct {
	dirs []string
	file string
}

// makeFile makes path's missing directories and path itself, empty (the
// engine initializes an empty file), and says which of them it made:
// one another process made meanwhile is not this import's to undo.
func makeFile(path string) (*madePaths, error) {
	var missing []string
	for d := filepath.Dir(path); filepath.Dir(d) != d; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		missing = append(missing, d)
	}
	m := &madePaths{}
	for i := len(missing) - 1; i >= 0; i-- {
		err := os.Mkdir(missing[i], 0o755)
		if err == nil {
			m.dirs = append(m.dirs, missing[i])
		} else if !errors.Is(err, fs.ErrExist) {
			m.undo()
			return nil, err
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err == nil {
		m.file = path
		err = f.Close()
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		m.undo()
		return nil, err
	}
	return m, nil
}

// undo takes back what makeFile made, so that a refused import leaves the
// disk as it was: the file, unless it holds events by now (a failed import
// appends none, so they are another process's), and the directories that
// are empty then. nil undoes nothing.
func (m *madePaths) undo() {
	if m == nil {
		return
	}
	if m.file != "" && !holdsEvents(m.file) {
		os.Remove(m.file)
	}
	for i := len(m.dirs) - 1; i >= 0; i-- {
		os.Remove(m.dirs[i]) // fails, and keeps it, unless it is empty
	}
}

// holdsEvents reports whether the file at path has events, or may have
// (another process holds it).
func holdsEvents(path string) bool {
	st, err := store.Open(path, store.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return errors.Is(err, store.ErrBusy)
	}
	defer st.Close()
	var seq uint64
	err = st.View(func(tx store.Tx) error {
		seq, _ = tx.Head()
		return nil
	})
	return err != nil || seq > 0
}

// runLegacyImport imports a file of the legacy system. workflow-json
// takes its project from the file unless --project is given on the
// command line (FLOW_PROJECT does not override the file); the other
// formats import into the current project.
func (a *app) runLegacyImport(file, from string, projectFlag bool) (err error) {
	in := legacy.Input{Format: from, Path: a.abs(file), Name: file}
	if file == "-" && from == legacy.FromContextDir {
		return usageError{fmt.Errorf("--from context-dir reads a directory: give its path, not -")}
	}
	if from != legacy.FromContextDir { // read it before taking the file lock
		data, err := a.readWhole(file)
		if err != nil {
			return err
		}
		in.Input = bytes.NewReader(data)
		if file == "-" {
			in.Name = "stdin"
		}
	}
	defer a.holdOutput(&err)()
	a.work = "importing " + from
	eng, err := a.open(false)
	if err != nil {
		return err
	}
	defer closeEngine(eng, &err)
	if from == legacy.FromWorkflowJSON {
		if projectFlag {
			in.Project = a.g.project
		}
	} else if in.Project, err = a.currentProject(eng); err != nil {
		if from != legacy.FromHistoryJSON || !projectFlag || flow.ErrorCode(err) != flow.CodeNotFound {
			return err
		}
		in.Project = a.g.project // a history's create_project creates it (else: not found)
	}
	res, err := legacy.Import(eng, in)
	if err != nil {
		return legacyHint(err, from)
	}
	for _, w := range res.Warnings {
		a.warn(w)
	}
	return a.printer().one(res, func(w io.Writer) { printLegacyResult(w, in.Name, res) })
}

// legacyHint says what to do about the errors a first migration meets.
func legacyHint(err error, from string) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return withHint(err, "give the path of the file (or, for context-dir, the directory) to import")
	case flow.ErrorCode(err) == flow.CodeNotFound && from != legacy.FromWorkflowJSON:
		var ie *legacy.ImportError
		if errors.As(err, &ie) {
			return withHint(err, "import the project's workflow.json first (flowctl import --from workflow-json), so its tasks exist")
		}
		return withHint(err, "import the project's workflow.json first, or pass --project")
	case from == legacy.FromWorkflowJSON && flow.ErrorCode(err) == flow.CodeInvalid:
		var ie *legacy.ImportError
		if errors.As(err, &ie) && ie.Line == 0 {
			return withHint(err, "pass --project NAME to name the project to import into")
		}
	}
	return err
}

func printLegacyResult(w io.Writer, file string, res *legacy.Result) {
	c := res.Created
	var parts []string
	for _, n := range []struct {
		n    int
		kind string
	}{{c.Projects, "project"}, {c.Tasks, "task"}, {c.Steps, "step"}, {c.Moves, "status change"}, {c.Notes, "note"},
		{c.Contexts, "context merge"}, {c.Execs, "exec record"}} {
		if n.n > 0 {
			parts = append(parts, plural(uint64(n.n), n.kind))
		}
	}
	created := "nothing"
	if len(parts) > 0 {
		created = strings.Join(parts, ", ")
	}
	fmt.Fprintf(w, "%s into project %s: read %d, created %s, %d already imported\n", file, res.Project, res.Read, created, res.Skipped)
	if len(res.Tasks) == 0 {
		return
	}
	rows := make([][]string, 0, len(res.Tasks))
	for _, t := range res.Tasks {
		state := "created"
		if !t.Created {
			state = "already imported"
		}
		rows = append(rows, []string{t.Ref, t.ID, state})
	}
	table(w, "REF\tID\tIMPORT", rows)
}

// readWhole reads FILE, or stdin for -, into memory (bounded by the
// largest import flowctl takes).
func (a *app) readWhole(file string) ([]byte, error) {
	r := a.stdin
	if file != "-" {
		f, err := os.Open(a.abs(file))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.IsDir() {
			return nil, fmt.Errorf("%w: %s is a directory", flow.ErrInvalid, file)
		}
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, legacy.MaxFile+1))
	if err == nil && len(b) > legacy.MaxFile {
		err = fmt.Errorf("%w: %s is over %d bytes", flow.ErrInvalid, file, legacy.MaxFile)
	}
	return b, err
}
