package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/snapshot"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// runOptions are the flags of `flowbench run`.
type runOptions struct {
	quick    bool
	output   string
	dir      string
	flowctl  string
	events   int
	projects int
	check    bool
	only     []string // workloads to run; none: all
	pg       string   // PostgreSQL server of the pg rows; "": FLOWCTL_PG_URL, none: no rows
}

func (o *runOptions) addFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.quick, "quick", false, "small sizes and few rounds: the whole run in under a minute")
	fs.StringVarP(&o.output, "output", "o", "text", "output format: text or json")
	fs.StringVar(&o.dir, "dir", "", "directory to work in, kept (default: a new temporary directory, removed)")
	fs.StringVar(&o.flowctl, "flowctl", "", "flowctl binary for the CLI rows (default: build it from the source tree)")
	fs.IntVar(&o.events, "events", 0, "events of the generated file (default 1000000; 50000 with --quick)")
	fs.IntVar(&o.projects, "projects", 10, "projects of the generated file")
	fs.BoolVar(&o.check, "check", false, "exit 1 when a row misses its target")
	fs.StringVar(&o.pg, "pg", "", "PostgreSQL server for the pg rows, a URL (default: "+EnvPG+"; none: no pg rows)")
	fs.StringSliceVar(&o.only, "only", nil, "run only these workloads (comma-separated): "+strings.Join(workloadNames, ", "))
}

func (o *runOptions) validate() error {
	switch {
	case o.output != "text" && o.output != "json":
		return usageError{fmt.Errorf("-o %q: use text or json", o.output)}
	case o.events < 0 || (o.events > 0 && o.events < 1000):
		return usageError{fmt.Errorf("--events %d: want at least 1000", o.events)}
	case o.projects < 1 || o.projects > 1000:
		return usageError{fmt.Errorf("--projects %d: want 1 to 1000", o.projects)}
	}
	for _, w := range o.only {
		if !slices.Contains(workloadNames, w) {
			return usageError{fmt.Errorf("--only %s: want some of %s", w, strings.Join(workloadNames, ", "))}
		}
	}
	return nil
}

func runCommand(env env) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run [--quick] [-o text|json] [--dir DIR] [--flowctl PATH] [--events N] [--check]",
		Short: "Measure every target of DESIGN.md §11 against a baseline of the same run",
		Long: "run builds flowctl (unless --flowctl), generates a realistic file (reused from --dir when\n" +
			"there), and measures appends, group commit, replay, point-in-time reads, the cache, bytes\n" +
			"on disk, CLI commands (with their peak RSS) and the bulk paths (export, import, verify,\n" +
			"rebuild), each against a baseline measured in turns with it on the same disk. Rows that\n" +
			"miss their target are marked FAIL, and so are rows whose flowctl command failed (an older\n" +
			"--flowctl that lacks a flag); the exit code stays 0 unless --check.",
		Example: "  flowbench run --quick\n  flowbench run --dir /var/tmp/flowbench -o json | jq '.[] | select(.pass | not)'",
		Args:    cobra.NoArgs,
	}
	o.addFlags(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := o.validate(); err != nil {
			return err
		}
		return runBench(cmd.Context(), o, env)
	}
	return cmd
}

// sizes are how much each workload does.
type sizes struct {
	genEvents                 int
	appendOps, appendRounds   int
	groupEvents, serialEvents int
	groupRounds               int
	bytesEvents               int
	replayRounds              int
	pitReads, pitRounds       int
	cacheHits, cacheMisses    int
	cacheRounds               int
	cliRuns                   int
	scaleRuns, bulkRounds     int // issue 15's CLI rows; its bulk rows
	importEvents              int // events of the export the import row imports; 0: all
}

// Rounds are many and short so that turns are taken often: the figures
// of a round are the mean of its operations, and a row's figure is the
// median of its rounds.
var (
	fullSizes = sizes{genEvents: 1_000_000, appendOps: 20, appendRounds: 40, groupEvents: 1200, serialEvents: 150,
		groupRounds: 10, bytesEvents: 100_000, replayRounds: 3, pitReads: 200, pitRounds: 10,
		cacheHits: 50_000, cacheMisses: 5_000, cacheRounds: 15, cliRuns: 21,
		scaleRuns: 5, bulkRounds: 3}
	quickSizes = sizes{genEvents: 50_000, appendOps: 10, appendRounds: 12, groupEvents: 240, serialEvents: 40,
		groupRounds: 4, bytesEvents: 20_000, replayRounds: 2, pitReads: 50, pitRounds: 6,
		cacheHits: 20_000, cacheMisses: 2_000, cacheRounds: 6, cliRuns: 7,
		scaleRuns: 3, bulkRounds: 1, importEvents: 5000}
)

// bench is one run: where it works, how much, and what earlier workloads
// found that later ones compare against.
type bench struct {
	ctx     context.Context
	dir     string
	size    sizes
	gen     string // the generated file
	flowctl string
	log     func(format string, args ...any)

	genEvents     uint64    // events of the generated file now (the CLI rows add some)
	genInfo       genResult // the generated file as gen left it
	genSQLiteSize int64     // the generated events in SQLite, set by replayRows
	replayRate    float64   // set by replayRows
	checkedRate   float64   // read_checked's value, set by replayRows
	pick          scalePick // what issue 15's rows read, set by scaleRows
	pg            string    // the server of the pg rows; "": none
	remove        []string
}

// runBench runs every workload and prints the rows.
func runBench(ctx context.Context, o runOptions, env env) error {
	start := time.Now()
	b, err := newBench(ctx, o, env)
	if err != nil {
		return err
	}
	defer b.close(o.dir == "")
	rows, err := b.runAll(o)
	if err != nil {
		return err
	}
	if err := writeRows(env.stdout, o, b, rows, time.Since(start)); err != nil {
		return err
	}
	if o.check && !allPass(rows) {
		return errMissed
	}
	return nil
}

func newBench(ctx context.Context, o runOptions, env env) (*bench, error) {
	b := &bench{ctx: ctx, size: quickOr(o.quick), log: logTo(env), pg: o.pg}
	if b.pg == "" {
		b.pg = os.Getenv(EnvPG)
	}
	if o.events > 0 {
		b.size.genEvents = o.events
	}
	dir, err := workDir(o.dir)
	if err != nil {
		return nil, err
	}
	b.dir = dir
	return b, nil
}

func quickOr(quick bool) sizes {
	if quick {
		return quickSizes
	}
	return fullSizes
}

// workDir makes the run's directory: dir, or a new temporary one.
func workDir(dir string) (string, error) {
	if dir == "" {
		return os.MkdirTemp("", "flowbench-")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return filepath.Abs(dir)
}

// logTo reports progress on stderr when it is a terminal.
func logTo(env env) func(string, ...any) {
	if !env.tty {
		return func(string, ...any) {}
	}
	return func(format string, args ...any) { fmt.Fprintf(env.stderr, "flowbench: "+format+"\n", args...) }
}

// cleanup marks path (a file of a workload) for removal at the end, and
// removes what a former run left there (with SQLite's -wal and -shm).
func (b *bench) cleanup(path string) {
	removeFile(path)
	b.remove = append(b.remove, path)
}

// removeFile removes path and the files SQLite keeps beside it.
func removeFile(path string) {
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		os.Remove(p)
	}
}

// close removes the workloads' files, or the whole directory if it was a
// temporary one.
func (b *bench) close(all bool) {
	if all {
		os.RemoveAll(b.dir)
		return
	}
	for _, p := range b.remove {
		removeFile(p)
	}
}

// rowGroup is one workload: a group of rows.
type rowGroup struct {
	name string
	rows func() ([]Row, error)
}

// workloadNames are the workloads' names, in order, for --only.
var workloadNames = []string{"append_single", "append_group8", "replay", "bytes_per_event", "point_in_time",
	"cache_hit", "cli", "scale", "search", "bulk", "rebuild", "serve", "pg"}

// workloads are the workloads in the order they run (replay before bytes,
// bulk and rebuild, which use its figures; scale before bulk, which reads
// what it picked), named as workloadNames.
func (b *bench) workloads() []rowGroup {
	return []rowGroup{
		{"append_single", b.appendRows}, {"append_group8", b.groupRow}, {"replay", b.replayRows},
		{"bytes_per_event", b.bytesRows}, {"point_in_time", b.pointInTimeRow}, {"cache_hit", b.cacheHitRow},
		{"cli", b.cliRows}, {"scale", b.scaleRows}, {"search", b.searchRows}, {"bulk", b.bulkRows}, {"rebuild", b.rebuildRow},
		{"serve", b.serveRows}, {"pg", b.pgRows},
	}
}

// runAll prepares flowctl and the generated file, then runs every
// workload in order (replay before bytes and rebuild, which use its
// figures).
func (b *bench) runAll(o runOptions) ([]Row, error) {
	if err := b.prepare(o); err != nil {
		return nil, err
	}
	var rows []Row
	for _, w := range b.workloads() {
		if len(o.only) > 0 && !slices.Contains(o.only, w.name) {
			continue
		}
		start := time.Now()
		got, err := w.rows()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", w.name, err)
		}
		b.log("%s: %.1f s", w.name, time.Since(start).Seconds())
		rows = append(rows, got...)
	}
	return rows, nil
}

// prepare builds flowctl (unless given) and the generated file (unless
// a former run left it in the directory).
func (b *bench) prepare(o runOptions) error {
	start := time.Now()
	b.flowctl = o.flowctl
	if b.flowctl == "" {
		b.cleanup(filepath.Join(b.dir, "flowctl"))
		bin, err := buildFlowctl(b.ctx, b.dir)
		if err != nil {
			return err
		}
		b.flowctl = bin
		b.log("built flowctl in %.1f s", time.Since(start).Seconds())
	}
	return b.prepareGen(o.projects)
}

// prepareGen generates the file of the run's size, or reuses the one a
// former run completed in the directory: its marker file (.done) holds
// what gen reported.
func (b *bench) prepareGen(projects int) error {
	b.gen = filepath.Join(b.dir, fmt.Sprintf("gen-%d-p%d-v%d.%d-s%d-l%d.db", b.size.genEvents, projects, projection.Version, flow.ProjectionFormat, snapshot.FormatVersion, eventlog.FormatVersion))
	done := b.gen + ".done"
	info, err := readGenInfo(done)
	if errors.Is(err, os.ErrNotExist) {
		info, err = b.generate(projects, done)
	}
	if err != nil {
		return err
	}
	b.genInfo = info
	b.genEvents, err = headOf(b.gen)
	return err
}

// generate writes the run's file and its marker.
func (b *bench) generate(projects int, done string) (genResult, error) {
	if err := prepareTarget(b.gen, true); err != nil {
		return genResult{}, err
	}
	o := genOptions{events: b.size.genEvents, db: b.gen, projects: projects, seed: 1}
	res, err := generate(b.ctx, o, func(uint64, uint64) {})
	if err != nil {
		return genResult{}, fmt.Errorf("gen: %w", err)
	}
	b.log("%s", res)
	j, err := json.Marshal(res)
	if err != nil {
		return genResult{}, err
	}
	return res, os.WriteFile(done, j, 0o644)
}

// readGenInfo reads a marker that generate wrote.
func readGenInfo(path string) (genResult, error) {
	var info genResult
	j, err := os.ReadFile(path)
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal(j, &info); err != nil || info.Events == 0 {
		return info, fmt.Errorf("%s: not a marker of a generated file (remove it and the file to generate anew)", path)
	}
	return info, nil
}

// writeRows prints the rows: a JSON array, or the machine, a table and
// the run's time.
func writeRows(w io.Writer, o runOptions, b *bench, rows []Row, took time.Duration) error {
	if o.output == "json" {
		return writeJSON(w, rows)
	}
	writeMachine(w, b.dir)
	fmt.Fprintf(w, "file:    %d events over %d projects (%s)\n\n", b.genEvents, o.projects, filepath.Base(b.gen))
	if err := writeTable(w, rows); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%d rows, %d failed; took %.1f s\n", len(rows), failed(rows), took.Seconds())
	return err
}

func failed(rows []Row) int {
	n := 0
	for _, r := range rows {
		if !r.Pass {
			n++
		}
	}
	return n
}
