package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// TestOutput_SlowReaderNeverHoldsTheLock: a command whose output nobody
// reads yet (a pager, a full pipe) has already closed the file, so a
// writer in another process is not kept waiting.
func TestOutput_SlowReaderNeverHoldsTheLock(t *testing.T) {
	f := mustInit(t, "--project", "p")
	f.mustRun("", "task", "add", "one")
	for _, args := range [][]string{{"task", "show", "T-1"}, {"ctx", "merge", "T-1", `{"a":1}`}, {"task", "ls"}} {
		pr, pw := io.Pipe()
		done := make(chan int)
		go func() {
			e := env{stdin: strings.NewReader(""), stdout: pw, stderr: io.Discard, dir: f.dir,
				getenv: func(k string) string { return testEnv[k] }}
			done <- run(context.Background(), args, e)
		}()
		time.Sleep(200 * time.Millisecond) // the command is blocked writing its output
		if _, stderr, code := f.run("", "task", "add", "while "+args[0], "--lock-timeout", "300ms"); code != 0 {
			t.Errorf("%v with its output unread: a writer got exit %d (%s)", args, code, stderr)
		}
		go io.Copy(io.Discard, pr)
		if code := <-done; code != 0 {
			t.Errorf("%v exited %d", args, code)
		}
		pw.Close()
	}
}
