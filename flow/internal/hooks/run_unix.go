//go:build unix

package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Supported reports whether hooks run on this system.
const Supported = true

// waitDelay is how long a hook's pipes may stay open after it exits (a
// child it left behind holding stderr) before flowctl stops waiting.
const waitDelay = time.Second

// run runs the file at path in a process group of its own and returns
// its exit status; an error when it could not start, died of a signal or
// ran out of time (its group is then killed).
func run(path string, in Input, stderr io.Writer) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), in.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path)
	cmd.Stdin = bytes.NewReader(in.Stdin)
	cmd.Stderr = stderr // stdout: /dev/null
	cmd.Env = in.Env
	cmd.Dir = in.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = waitDelay
	err := cmd.Run()
	if ctx.Err() != nil {
		return 0, fmt.Errorf("timed out after %s (its process group was killed; FLOW_HOOK_TIMEOUT sets the limit)", in.Timeout)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 0, fmt.Errorf("killed by signal %d (%s)", ws.Signal(), ws.Signal())
		}
		return ee.ExitCode(), nil
	}
	if errors.Is(err, exec.ErrWaitDelay) {
		return cmd.ProcessState.ExitCode(), nil // it exited; a child of its kept stderr open
	}
	if err != nil {
		return 0, fmt.Errorf("did not run: %w", err)
	}
	return 0, nil
}

// refusal says why the file at path may not run, "" when it may.
func refusal(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Sprintf("cannot be read: %v", err)
	}
	if !fi.Mode().IsRegular() {
		return "not a regular file"
	}
	if why := untrusted(fi, "it"); why != "" {
		return why
	}
	if fi.Mode().Perm()&0o100 == 0 {
		return "not executable (chmod u+x it)"
	}
	di, err := os.Stat(filepath.Dir(path))
	if err != nil {
		return fmt.Sprintf("its directory cannot be read: %v", err)
	}
	return untrusted(di, "its directory")
}

// untrusted says why a file someone else could change may not run.
func untrusted(fi os.FileInfo, what string) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "its owner is unknown"
	}
	if uid := os.Getuid(); int(st.Uid) != uid && st.Uid != 0 {
		return fmt.Sprintf("%s is owned by uid %d, neither you (uid %d) nor root", what, st.Uid, uid)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Sprintf("%s is writable by group or others (mode %04o; chmod go-w)", what, fi.Mode().Perm())
	}
	return ""
}
