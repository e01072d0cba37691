package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/internal/workload"
	"github.com/flowctl/flowctl/projection"
)

// The rows of issue 15 ("read and bulk paths at scale"): the everyday
// commands that are not yet near process start on a large file, and the
// bulk paths. They use only flags that flowctl had before the issue, so
// that an older binary (--flowctl) can be measured too; a command it
// refuses fails its row, with the error, not the run.

// scalePick is what the rows of issue 15 read, found in the generated
// file alone (its seqs 1 to gen's head), so that every run on a file, and
// every file of the same size and seed, reads the same.
type scalePick struct {
	project       string // the first project
	task          string // its last task created at or before half
	half, head    uint64 // gen's head / 2, and gen's head
	projectEvents uint64 // the project's events in the file now
}

// pickScale finds the project's task at half-way through the generated
// events, and counts the project's events.
func pickScale(path string, genHead uint64) (scalePick, error) {
	p := scalePick{project: workload.ProjectName(0), half: genHead / 2, head: genHead}
	l, err := eventlog.Open(path, eventlog.Options{ReadOnly: true})
	if err != nil {
		return p, err
	}
	defer l.Close()
	err = l.Replay(1, 0, func(r *eventlog.Record) error {
		if r.Project != p.project {
			return nil
		}
		p.projectEvents++
		if r.Seq <= p.half && r.Type == "task.created" {
			if kind, _, id, ok := projection.ParseStream(r.Stream); ok && kind == projection.KindTask {
				p.task = id
			}
		}
		return nil
	})
	if err == nil && p.task == "" {
		err = fmt.Errorf("%s: project %s created no task by seq %d", path, p.project, p.half)
	}
	return p, err
}

// pickScale sets b.pick, once.
func (b *bench) pickScale() error {
	if b.pick.project != "" {
		return nil
	}
	var err error
	b.pick, err = pickScale(b.gen, b.genInfo.Events)
	return err
}

// scaleCase is one everyday command of issue 15 with its targets: a ratio
// to `flowctl --version` and a peak RSS in MiB.
type scaleCase struct {
	name  string
	args  []string
	ratio float64
	rss   float64
}

// scaleCases are the everyday commands of issue 15 on the picked
// project, task and seqs.
func (b *bench) scaleCases(p scalePick) []scaleCase {
	file := []string{"--db", b.gen}
	in := []string{"--db", b.gen, "--project", p.project}
	return []scaleCase{
		{"cli_log_tail", slices.Concat(file, []string{"log", "--limit", "20"}), 3, everydayRSS},
		{"cli_log_project", slices.Concat(in, []string{"log", "--limit", "20"}), 3, everydayRSS},
		{"cli_log_type", slices.Concat(file, []string{"log", "--type", "approval.*", "--limit", "5"}), 5, everydayRSS},
		{"cli_ctx_history", slices.Concat(in, []string{"ctx", "history", p.task}), 3, everydayRSS},
		{"cli_prime", slices.Concat(in, []string{"prime"}), 5, everydayRSS},
		{"cli_report_task", slices.Concat(in, []string{"report", p.task}), 3, everydayRSS},
		{"cli_status_at", slices.Concat(in, []string{"status", "--at", fmt.Sprint(p.half)}), 5, everydayRSS},
		{"cli_diff", slices.Concat(in, []string{"diff", fmt.Sprint(p.half), fmt.Sprint(p.head)}), 10, 128},
		{"cli_task_ls", slices.Concat(in, []string{"task", "ls", "--status", "doing"}), 5, everydayRSS},
	}
}

// scaleRows measures the everyday commands of issue 15 in turns with
// `flowctl --version`: the median wall time of each as a ratio to that
// of --version, and the largest peak RSS of each.
func (b *bench) scaleRows() ([]Row, error) {
	if err := b.pickScale(); err != nil {
		return nil, err
	}
	return b.ratioRows(b.scaleCases(b.pick))
}

// ratioRows times each case against `flowctl --version`, in turns, and
// rows their ratios and peak RSS against the cases' targets.
func (b *bench) ratioRows(cases []scaleCase) ([]Row, error) {
	ps := []*proc{b.proc("--version")}
	for _, c := range cases {
		ps = append(ps, b.proc(c.args...))
	}
	m, errs, err := interleaveEach(b.ctx, b.size.scaleRuns, measurements(ps)...)
	if err != nil {
		return nil, err
	}
	if errs[0] != nil {
		return nil, errs[0]
	}
	rows := make([]Row, len(cases))
	for i, c := range cases {
		rows[i] = newRow(c.name, m[i+1], m[0], "ms", atMost("ratio", c.ratio)).
			withRSS(ps[i+1].rss, c.rss).withError(errs[i+1])
	}
	return rows, nil
}

// bulkRows measures issue 15's bulk paths, in turns, as values: export of
// the whole file to a file, import of that export into a new file (its
// first importEvents events with --quick), verify, and rebuild --project
// of the picked project; and gen's rate, from when the file was
// generated. Their baselines come from the replay workload (0 without
// it).
func (b *bench) bulkRows() ([]Row, error) {
	if err := b.pickScale(); err != nil {
		return nil, err
	}
	x, err := b.newBulk()
	if err != nil {
		return nil, err
	}
	m, errs, err := interleaveEach(b.ctx, b.size.bulkRounds, x.exportRate, x.importRate, x.verifyRate, x.rebuildSeconds)
	if err != nil {
		return nil, err
	}
	projectFold := 0.0 // seconds to fold the project's events at the replay rate
	if b.replayRate > 0 {
		projectFold = float64(b.pick.projectEvents) / b.replayRate
	}
	rebuildLimit := float64(b.pick.projectEvents) / 100_000 // 1 s for a project of 100k events
	return []Row{
		newRow("cli_export", m[0], b.checkedRate, "events/s", atLeast("value", 300_000)).withRSS(x.exp.rss, 0).withError(errs[0]),
		newRow("cli_import", m[1], m[0], "events/s", atLeast("value", 100_000)).withRSS(x.imp.rss, 0).withError(errs[1]),
		newRow("cli_verify", m[2], b.checkedRate, "events/s", atLeast("value", 500_000)).withRSS(x.ver.rss, 0).withError(errs[2]),
		newRow("cli_rebuild_project", m[3], projectFold, "s", atMost("value", rebuildLimit)).withRSS(x.reb.rss, 0).withError(errs[3]),
		newRow("gen", b.genInfo.rate(), 0, "events/s", atLeast("value", 40_000)),
	}, nil
}

// bulk is one run of the bulk rows: the files they write and their
// commands.
type bulk struct {
	b                  *bench
	export, source     string // the export; what import reads (the export or its head)
	imported           string // the file import writes
	exp, imp, ver, reb *proc
	exported, sourced  int    // events in export and source, once exported
	events             uint64 // the generated file's head
}

// newBulk names the bulk rows' files (removed at the end) and commands.
func (b *bench) newBulk() (*bulk, error) {
	x := &bulk{b: b, export: filepath.Join(b.dir, "export.jsonl"), imported: filepath.Join(b.dir, "import.db")}
	x.source = x.export
	if b.size.importEvents > 0 {
		x.source = filepath.Join(b.dir, "export-head.jsonl")
		b.cleanup(x.source)
	}
	b.cleanup(x.export)
	b.cleanup(x.imported)
	var err error
	x.events, err = headOf(b.gen)
	x.exp = b.proc("--db", b.gen, "export")
	x.imp = b.proc("--db", x.imported, "import", x.source)
	x.ver = b.proc("--db", b.gen, "verify")
	x.reb = b.proc("--db", b.gen, "--project", b.pick.project, "rebuild")
	return x, err
}

// exportRate writes the whole file's export and returns events/s.
func (x *bulk) exportRate() (float64, error) {
	f, err := os.Create(x.export)
	if err != nil {
		return 0, err
	}
	d, err := x.exp.run(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, err
	}
	if x.exported, err = countLines(x.export); err == nil && x.exported == 0 {
		err = errors.New("flowctl export wrote no event")
	}
	if err == nil {
		x.sourced, err = x.headOfExport()
	}
	return float64(x.exported) / d.Seconds(), err
}

// headOfExport writes the source of the import, the export's first
// importEvents lines, when that is not the export itself.
func (x *bulk) headOfExport() (int, error) {
	if x.source == x.export {
		return x.exported, nil
	}
	return copyLines(x.source, x.export, x.b.size.importEvents)
}

// importRate imports the source into a new file and returns events/s.
func (x *bulk) importRate() (float64, error) {
	if x.sourced == 0 {
		return 0, errors.New("no export to import")
	}
	removeFile(x.imported)
	d, err := x.imp.run(nil)
	return float64(x.sourced) / d.Seconds(), err
}

// verifyRate verifies the generated file and returns events/s.
func (x *bulk) verifyRate() (float64, error) {
	d, err := x.ver.run(nil)
	return float64(x.events) / d.Seconds(), err
}

// rebuildSeconds rebuilds the picked project and returns its seconds.
func (x *bulk) rebuildSeconds() (float64, error) {
	d, err := x.reb.run(nil)
	return d.Seconds(), err
}

// countLines counts the lines of a file.
func countLines(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, buf := 0, make([]byte, 1<<20)
	for {
		k, err := f.Read(buf)
		for _, c := range buf[:k] {
			if c == '\n' {
				n++
			}
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// copyLines writes the first n lines of src to dst and returns how many
// it wrote.
func copyLines(dst, src string, n int) (int, error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return 0, err
	}
	r, w := bufio.NewReaderSize(in, 1<<20), bufio.NewWriterSize(out, 1<<20)
	k := 0
	for k < n {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			w.Write(line)
			k++
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			out.Close()
			return k, err
		}
	}
	if err := w.Flush(); err != nil {
		out.Close()
		return k, err
	}
	return k, out.Close()
}

// rate is gen's events/s, as gen measured it.
func (r genResult) rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Events) / r.Elapsed.Seconds()
}
