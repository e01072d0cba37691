package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// completions runs the shell's completion request for args and returns
// the candidates (without the directive line).
func completions(t *testing.T, f *flowFile, args ...string) []string {
	t.Helper()
	stdout, stderr, code := f.run("", append([]string{"__complete"}, args...)...)
	if code != 0 || strings.Contains(stderr, "warning") {
		t.Fatalf("__complete %v: exit %d, stderr %q", args, code, stderr)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if !strings.HasPrefix(line, ":") {
			out = append(out, line)
		}
	}
	return out
}

func TestCompletion(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "web")
	f.mustRun("", "task", "add", "write the parser")
	f.mustRun("", "task", "add", "test it")
	f.mustRun("", "step", "add", "T-1", "sketch")
	f.mustRun("", "approval", "request", "--task", "T-1", "--message", "first")
	f.mustRun("", "approval", "request", "--task", "T-1", "--message", "second")
	f.mustRun("", "--actor", "reviewer", "approval", "grant", "A-1")
	f.mustRun("", "checkpoint", "--label", "one")
	f.mustRun("", "--project", "other", "init")
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"--project", "web", "task", "show", ""}, []string{"T-1\ttodo: write the parser", "T-2\ttodo: test it"}},
		{[]string{"--project", "web", "task", "show", "T-2"}, []string{"T-2\ttodo: test it"}},
		{[]string{"--project", "web", "--actor", "reviewer", "approval", "grant", ""}, []string{"A-2\tpending: second", "A-1\tgranted: first"}},
		{[]string{"--project", "web", "rollback", "--to", ""}, []string{"C-1\tseq 7 one"}},
		{[]string{"--project", "web", "step", "done", ""}, []string{"T-1.1\tpending: sketch"}},
		{[]string{"--project", "web", "dep", "add", "T-1", "T-"}, []string{"T-1\ttodo: write the parser", "T-2\ttodo: test it"}},
		{[]string{"project", "switch", ""}, []string{"other", "web"}},
		{[]string{"log", "--type", "approval."}, []string{"approval.consumed", "approval.decided", "approval.requested"}},
		{[]string{"task", "ls", "-o", ""}, []string{"text", "json", "jsonl"}},
		{[]string{"status", "--color", ""}, []string{"auto", "always", "never"}},
		{[]string{"--project", "web", "task", "show", "T-1", ""}, nil}, // one task only
	}
	before := f.bytes()
	for _, tc := range tests {
		if got := completions(t, f, tc.args...); !slices.Equal(got, tc.want) {
			t.Errorf("complete %q:\n got %q\nwant %q", tc.args, got, tc.want)
		}
	}
	if !bytes.Equal(before, f.bytes()) {
		t.Errorf("completion changed the file")
	}
	t.Run("NoFileNoCandidates", func(t *testing.T) {
		g := &flowFile{t: t, dir: t.TempDir()}
		if got := completions(t, g, "task", "show", ""); len(got) != 0 {
			t.Errorf("got %q without a file", got)
		}
	})
}
