package main

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPostgres_CurrentProject: on a database URL the current project is
// this user's, in a file under XDG_STATE_HOME (else ~/.local/state) named
// by the URL without its password: project new writes the only project
// down, project switch moves it, task add follows it, a new password keeps
// it, and without HOME nothing can be switched (exit 2, nothing created).
func TestPostgres_CurrentProject(t *testing.T) {
	dsn, pw := pgURL(t)
	dir, state := t.TempDir(), t.TempDir()
	environ := map[string]string{"FLOW_DB": dsn, "HOME": t.TempDir(), "XDG_STATE_HOME": state}
	cli := func(env map[string]string, wantCode int, args ...string) string {
		t.Helper()
		stdout, stderr, code := runCLIEnv(t, dir, env, "", args...)
		if code != wantCode {
			t.Fatalf("flowctl %s: exit %d, want %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, wantCode, stdout, stderr)
		}
		if strings.Contains(stdout+stderr, pw) {
			t.Errorf("flowctl %s printed the password: %s%s", strings.Join(args, " "), stdout, stderr)
		}
		return stdout
	}
	cli(environ, 0, "init", "--project", "a")
	sel := filepath.Join(state, "flowctl", "current", stateName(dsn))
	if b, err := os.ReadFile(sel); err != nil || string(b) != "a\n" {
		t.Fatalf("after init --project a, %s holds %q (%v), want a", sel, b, err)
	}
	os.Remove(sel) // a project current for being the only one
	cli(environ, 0, "project", "new", "b")
	if b, err := os.ReadFile(sel); err != nil || string(b) != "a\n" {
		t.Fatalf("after project new b, %s holds %q (%v), want a written down", sel, b, err)
	}
	cli(environ, 0, "task", "add", "in a")
	cli(environ, 0, "project", "switch", "b")
	cli(environ, 0, "task", "add", "in b")
	cli(environ, 0, "task", "add", "in b too")
	if out := cli(environ, 0, "--project", "b", "task", "ls", "-o", "json"); strings.Count(out, `"title"`) != 2 || !strings.Contains(out, "in b too") {
		t.Errorf("b's tasks: %s", out)
	}
	if out := cli(environ, 0, "--project", "a", "task", "ls", "-o", "json"); strings.Count(out, `"title"`) != 1 {
		t.Errorf("a's tasks: %s", out)
	}
	if out := cli(environ, 0, "project", "ls"); !strings.Contains(out, "* b") {
		t.Errorf("project ls does not mark b current:\n%s", out)
	}

	// Another password, the same database: the same choice.
	u, _ := url.Parse(dsn)
	u.User = url.UserPassword(u.User.Username(), "another-"+pw)
	other := map[string]string{"FLOW_DB": u.String(), "HOME": environ["HOME"], "XDG_STATE_HOME": state}
	if out := cli(other, 0, "project", "show", "-o", "json"); !strings.Contains(out, `"name":"b"`) {
		t.Errorf("with another password, project show printed %s", out)
	}
	// HOME alone: ~/.local/state; another user's choice is their own.
	home := map[string]string{"FLOW_DB": dsn, "HOME": t.TempDir()}
	cli(home, 2, "task", "add", "no project selected")
	cli(home, 0, "project", "switch", "a")
	if b, err := os.ReadFile(filepath.Join(home["HOME"], ".local", "state", "flowctl", "current", stateName(dsn))); err != nil || string(b) != "a\n" {
		t.Errorf("under HOME: %q (%v), want a", b, err)
	}
	if out := cli(environ, 0, "project", "show", "-o", "json"); !strings.Contains(out, `"name":"b"`) {
		t.Errorf("the first user's choice moved: %s", out)
	}
	// No place to keep it: switching is refused before anything is written.
	bare := map[string]string{"FLOW_DB": dsn}
	cli(bare, 2, "project", "switch", "a")
	cli(bare, 2, "project", "new", "c", "--switch")
	cli(bare, 0, "project", "new", "d")
	if out := cli(bare, 0, "project", "ls", "-o", "json"); strings.Contains(out, `"c"`) || !strings.Contains(out, `"d"`) {
		t.Errorf("projects after a refused new --switch: %s", out)
	}
	for _, path := range []string{state, home["HOME"]} {
		filepath.WalkDir(path, func(p string, _ os.DirEntry, _ error) error {
			if strings.Contains(p, pw) {
				t.Errorf("a state path holds the password: %s", p)
			}
			return nil
		})
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("the working directory holds %v (%v), want nothing", entries, err)
	}
}
