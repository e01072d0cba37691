package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
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
// nothing else), in turns.
func (b *bench) cliRows() ([]Row, error) {
	project := workload.ProjectName(0)
	db := []string{"--db", b.gen, "--project", project}
	actor := []string{"--actor", "bench"} // task show refuses --actor: it answers for no one
	cmds := [][]string{
		{"--version"},
		slices.Concat(db, []string{"task", "show", "T-1"}),
		slices.Concat(db, actor, []string{"status"}),
		slices.Concat(db, actor, []string{"ready"}),
		slices.Concat(db, actor, []string{"task", "add", "a task added by flowbench"}),
	}
	ms := make([]measurement, len(cmds))
	for i, args := range cmds {
		ms[i] = func() (float64, error) { return b.wallMS(args) }
	}
	m, err := interleave(b.ctx, b.size.cliRuns, ms...)
	if err != nil {
		return nil, err
	}
	return []Row{
		newRow("cli_task_show", m[1], m[0], "ms", atMost("ratio", 2)),
		newRow("cli_status", m[2], m[0], "ms", atMost("ratio", 2)),
		newRow("cli_ready", m[3], m[0], "ms", atMost("ratio", 2)),
		newRow("cli_task_add", m[4], m[0], "ms", nil),
	}, nil
}

// wallMS runs flowctl with args once and returns its wall time in ms.
func (b *bench) wallMS(args []string) (float64, error) {
	cmd := exec.CommandContext(b.ctx, b.flowctl, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("flowctl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return float64(d) / float64(time.Millisecond), nil
}
