package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/flowctl/flowctl/flow/capture"
	"github.com/flowctl/flowctl/projection"
)

// exitNotStarted is the exit code recorded, and returned, for a command
// that could not be started (not found, not executable), as shells do.
const exitNotStarted = 127

// execWaitDelay bounds how long a command gets to exit after it was asked
// to stop, and how long its output is still read after it exited (a
// background child of it may hold the pipes open).
const execWaitDelay = 5 * time.Second

// teeRun is one command to run with its output passed through and kept.
type teeRun struct {
	argv   []string
	dir    string
	env    []string // nil: flowctl's own environment
	stdin  io.Reader
	stdout io.Writer // receives the command's stdout unchanged, as it comes
	stderr io.Writer
}

// teeResult is what running the command gave.
type teeResult struct {
	exitCode int // 128+n when killed by signal n; exitNotStarted when not started
	elapsed  time.Duration
	stdout   projection.Output
	stderr   projection.Output
	startErr error // why the command could not be started, or nil
}

// run runs the command to its end, copying its stdout and stderr through
// while capturing both (capture.Writer). When ctx ends the command gets
// SIGTERM, and SIGKILL execWaitDelay later.
func (r teeRun) run(ctx context.Context) teeResult {
	cmd := exec.CommandContext(ctx, r.argv[0], r.argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdin = r.dir, r.env, r.stdin
	out, errOut := capture.New(), capture.New()
	cmd.Stdout = io.MultiWriter(r.stdout, out)
	cmd.Stderr = io.MultiWriter(r.stderr, errOut)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = execWaitDelay
	start := time.Now()
	err := cmd.Run()
	res := teeResult{elapsed: time.Since(start), stdout: out.Output(), stderr: errOut.Output()}
	res.exitCode, res.startErr = exitCodeOf(cmd.ProcessState, err)
	return res
}

// exitCodeOf is the exit code of a finished command, as a shell reports
// it; a command that never started is exitNotStarted with its error.
func exitCodeOf(ps *os.ProcessState, err error) (int, error) {
	if ps == nil {
		if err == nil {
			err = errors.New("the command did not start")
		}
		return exitNotStarted, err
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return ps.ExitCode(), nil
}

// safeWord matches arguments that need no quoting for a POSIX shell.
var safeWord = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./-]+$`)

// shellJoin writes argv as one POSIX shell command line. A first word
// with '=' is quoted, or a shell would read it as an assignment.
func shellJoin(argv []string) string {
	words := make([]string, len(argv))
	for i, w := range argv {
		if safeWord.MatchString(w) && (i > 0 || !strings.Contains(w, "=")) {
			words[i] = w
		} else {
			words[i] = "'" + strings.ReplaceAll(w, "'", `'"'"'`) + "'"
		}
	}
	return strings.Join(words, " ")
}

// gitHead returns the commit checked out in dir's git work tree, or ""
// when dir is not in one (or git is missing, or there is no commit yet).
func gitHead(dir string) string {
	cmd := exec.Command("git", "rev-parse", "--verify", "-q", "HEAD")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
