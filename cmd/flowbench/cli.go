package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/flowctl/flowctl/internal/workload"
)

// mainModule is the module path of flowctl itself.
const mainModule = "github.com/flowctl/flowctl"

// buildFlowctl builds cmd/flowctl of the source tree into dir and returns
// the binary's path. The tree is found from the working directory up, or
// else from where this program's source was compiled.
func buildFlowctl(ctx context.Context, dir string) (string, error) {
	root, err := findRepo()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "flowctl")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/flowctl")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/flowctl in %s: %w\n%s", root, err, out)
	}
	return bin, nil
}

// findRepo returns the directory of flowctl's main module.
func findRepo() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		starts = append(starts, filepath.Dir(file))
	}
	for _, s := range starts {
		if root, ok := moduleAbove(s, mainModule); ok {
			return root, nil
		}
	}
	return "", errors.New("cannot find flowctl's source tree (a go.mod of module " + mainModule +
		") above the working directory: run flowbench from the repository, or pass --flowctl")
}

// moduleAbove walks up from dir to a directory whose go.mod declares
// module path.
func moduleAbove(dir, path string) (string, bool) {
	for d := dir; ; d = filepath.Dir(d) {
		if modulePath(filepath.Join(d, "go.mod")) == path {
			return d, true
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

// modulePath reads the module line of a go.mod; "" if there is none.
func modulePath(gomod string) string {
	f, err := os.Open(gomod)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// cliRows measures the median wall time of flowctl commands on the
// generated file against that of `flowctl --version` (process start and
// nothing else), in turns, and their peak RSS.
func (b *bench) cliRows() ([]Row, error) {
	project := workload.ProjectName(0)
	db := []string{"--db", b.gen, "--project", project}
	actor := []string{"--actor", "bench"} // task show refuses --actor: it answers for no one
	ps := []*proc{
		b.proc("--version"),
		b.proc(slices.Concat(db, []string{"task", "show", "T-1"})...),
		b.proc(slices.Concat(db, actor, []string{"status"})...),
		b.proc(slices.Concat(db, actor, []string{"ready"})...),
		b.proc(slices.Concat(db, actor, []string{"task", "add", "a task added by flowbench"})...),
	}
	m, err := interleave(b.ctx, b.size.cliRuns, measurements(ps)...)
	if err != nil {
		return nil, err
	}
	return []Row{
		newRow("cli_task_show", m[1], m[0], "ms", atMost("ratio", 2)).withRSS(ps[1].rss, everydayRSS),
		newRow("cli_status", m[2], m[0], "ms", atMost("ratio", 2)).withRSS(ps[2].rss, everydayRSS),
		newRow("cli_ready", m[3], m[0], "ms", atMost("ratio", 2)).withRSS(ps[3].rss, everydayRSS),
		newRow("cli_task_add", m[4], m[0], "ms", nil).withRSS(ps[4].rss, 0),
	}, nil
}

// everydayRSS is the peak RSS (MiB) issue 15 allows an everyday command.
const everydayRSS = 64

// proc is one flowctl command measured over rounds: each round one
// process, its wall time the round's figure; rss is the largest peak RSS
// of its rounds (KiB).
type proc struct {
	b    *bench
	args []string
	rss  int64
}

func (b *bench) proc(args ...string) *proc { return &proc{b: b, args: args} }

// ms runs the command once, its stdout discarded, and returns its wall
// time in ms.
func (p *proc) ms() (float64, error) {
	d, err := p.run(nil)
	return float64(d) / float64(time.Millisecond), err
}

// run runs the command once with stdout to w (nil: discarded) and
// returns its wall time.
func (p *proc) run(w io.Writer) (time.Duration, error) {
	d, rss, err := p.b.runFlowctl(p.args, w)
	p.rss = max(p.rss, rss)
	return d, err
}

// measurements are the procs' ms, for interleave.
func measurements(ps []*proc) []measurement {
	ms := make([]measurement, len(ps))
	for i, p := range ps {
		ms[i] = p.ms
	}
	return ms
}

// runFlowctl runs flowctl with args once, stdout to w (nil: discarded),
// through the spawner (spawn.go), and returns its wall time and peak RSS
// (KiB; 0: not known). A command that fails returns an error with its
// stderr on one line.
func (b *bench) runFlowctl(args []string, w io.Writer) (time.Duration, int64, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, 0, err
	}
	rep, repw, err := os.Pipe()
	if err != nil {
		return 0, 0, err
	}
	defer rep.Close()
	cmd := exec.CommandContext(b.ctx, self, append([]string{b.flowctl}, args...)...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.ExtraFiles = w, &stderr, []*os.File{repw}
	cmd.Env = append(os.Environ(), spawnEnv+"=1")
	err = cmd.Start()
	repw.Close()
	if err != nil {
		return 0, 0, err
	}
	report, rerr := io.ReadAll(rep)
	if err := cmd.Wait(); err != nil {
		msg := strings.Join(strings.Fields(strings.ReplaceAll(strings.TrimSpace(stderr.String()), "\n", " / ")), " ")
		return 0, 0, fmt.Errorf("flowctl %s: %w: %s", strings.Join(args, " "), err, msg)
	}
	var ns, rss int64
	if _, err := fmt.Sscan(string(report), &ns, &rss); err != nil || rerr != nil {
		return 0, 0, fmt.Errorf("flowctl %s: the spawner's report %q: %v", strings.Join(args, " "), report, errors.Join(err, rerr))
	}
	return time.Duration(ns), rss, nil
}
