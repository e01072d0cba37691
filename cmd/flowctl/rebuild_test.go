package main

import (
	"strings"
	"testing"
)

func TestRebuild_Project(t *testing.T) {
	f := mustInit(t, "--project", "web")
	f.mustRun("", "task", "add", "build")
	f.mustRun("", "project", "new", "other")
	f.mustRun("", "--project", "other", "task", "add", "ship")

	t.Run("OK", func(t *testing.T) {
		out := f.mustRun("", "rebuild", "--project", "other")
		if !strings.Contains(out, "rebuilt the projections of other from 2 events") {
			t.Errorf("rebuild --project other: %q, want other's 2 events", out)
		}
		if out := f.mustRun("", "--project", "other", "task", "show", "T-1"); !strings.Contains(out, "ship") {
			t.Errorf("task show after the rebuild: %q, want the task", out)
		}
	})
	t.Run("WholeFileDespiteEnv", func(t *testing.T) {
		stdout, stderr, code := runCLIEnv(t, f.dir, map[string]string{"FLOW_PROJECT": "other"}, "", "rebuild")
		if code != 0 || !strings.Contains(stdout, "rebuilt the projections from 4 events") {
			t.Errorf("FLOW_PROJECT=other rebuild: exit %d, %q %q; want the whole file's 4 events", code, stdout, stderr)
		}
	})
	t.Run("NotFound", func(t *testing.T) {
		_, stderr, code := f.run("", "rebuild", "--project", "nope")
		wantError(t, stderr, code, 3, "nope")
	})
}
