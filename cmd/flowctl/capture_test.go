package main

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestShellJoin(t *testing.T) {
	tests := []struct {
		argv []string
		want string
	}{
		{[]string{"go", "test", "./..."}, "go test ./..."},
		{[]string{"sh", "-c", "echo a; exit 3"}, "sh -c 'echo a; exit 3'"},
		{[]string{"echo", "it's"}, `echo 'it'"'"'s'`},
		{[]string{"printf", ""}, "printf ''"},
		{[]string{"env", "a=b", "--x=1,2", "@f"}, "env a=b --x=1,2 @f"},
		{[]string{"a=b", "c"}, "'a=b' c"},
	}
	for _, tt := range tests {
		if got := shellJoin(tt.argv); got != tt.want {
			t.Errorf("shellJoin(%q) = %s, want %s", tt.argv, got, tt.want)
		}
	}
}

// captureRun runs argv through teeRun with buffers for its output.
func captureRun(t *testing.T, stdin string, argv ...string) (teeResult, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	r := teeRun{argv: argv, dir: t.TempDir(), stdin: strings.NewReader(stdin), stdout: &out, stderr: &errOut}
	return r.run(context.Background()), out.String(), errOut.String()
}

func TestTeeRun(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh on this system")
	}
	t.Run("PassesThroughAndCaptures", func(t *testing.T) {
		res, out, errOut := captureRun(t, "in\n", "sh", "-c", "cat; printf 'e\\001' >&2; exit 5")
		if out != "in\n" || errOut != "e\x01" {
			t.Errorf("passed through stdout %q, stderr %q", out, errOut)
		}
		if res.exitCode != 5 || res.startErr != nil || res.stdout.Head != "in\n" || res.stderr.Head != "e\x01" || res.stderr.Bytes != 2 {
			t.Errorf("result = %+v", res)
		}
	})
	t.Run("Signal", func(t *testing.T) {
		res, _, _ := captureRun(t, "", "sh", "-c", "kill -TERM $$")
		if res.exitCode != 128+15 {
			t.Errorf("exit code = %d, want 143 (128 + SIGTERM)", res.exitCode)
		}
	})
	t.Run("NotStarted", func(t *testing.T) {
		res, _, _ := captureRun(t, "", "/nonexistent/command")
		if res.exitCode != exitNotStarted || res.startErr == nil {
			t.Errorf("result = %+v, want exit %d and the start error", res, exitNotStarted)
		}
	})
	t.Run("Cancel", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		var out bytes.Buffer
		start := time.Now()
		res := teeRun{argv: []string{"sleep", "30"}, dir: t.TempDir(), stdout: &out, stderr: &bytes.Buffer{}}.run(ctx)
		if time.Since(start) > 10*time.Second || res.exitCode != 128+15 {
			t.Errorf("cancelled run: exit %d after %s, want 143 soon", res.exitCode, time.Since(start))
		}
	})
}

func TestExitCodeOf(t *testing.T) {
	code, err := exitCodeOf(nil, errors.New("no such file"))
	if code != exitNotStarted || err == nil {
		t.Errorf("exitCodeOf(nil state) = %d, %v; want %d and the error", code, err, exitNotStarted)
	}
}
