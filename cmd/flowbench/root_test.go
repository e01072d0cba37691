package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runArgs runs flowbench in process and returns its exit code and output.
func runArgs(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, env{stdout: &out, stderr: &errb})
	return code, out.String(), errb.String()
}

func TestRun_Usage(t *testing.T) {
	db := filepath.Join(t.TempDir(), "x.db")
	for name, args := range map[string][]string{
		"UnknownCommand":  {"bench"},
		"UnknownFlag":     {"gen", "--db", db, "--nope"},
		"GenWithoutDB":    {"gen", "--events", "10"},
		"GenNoEvents":     {"gen", "--db", db, "--events", "0"},
		"GenNoProjects":   {"gen", "--db", db, "--projects", "0"},
		"GenStrayArg":     {"gen", "--db", db, "extra"},
		"RunBadOutput":    {"run", "-o", "xml"},
		"RunTooFewEvents": {"run", "--events", "10"},
		"RunStrayArg":     {"run", "now"},
		"RunBadOnly":      {"run", "--only", "cli,nope"},
	} {
		t.Run(name, func(t *testing.T) {
			code, stdout, stderr := runArgs(t, args...)
			if code != exitUsage || stdout != "" || !strings.Contains(stderr, "flowbench: ") {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d and a message on stderr", code, stdout, stderr, exitUsage)
			}
			if _, err := os.Stat(db); err == nil {
				t.Fatalf("a usage error wrote %s", db)
			}
		})
	}
}

func TestRun_Help(t *testing.T) {
	code, stdout, _ := runArgs(t, "--help")
	if code != exitOK || !strings.Contains(stdout, "gen") || !strings.Contains(stdout, "run") {
		t.Fatalf("exit %d, stdout %q", code, stdout)
	}
}

func TestRun_Gen(t *testing.T) {
	db := filepath.Join(t.TempDir(), "flow.db")
	t.Run("OK", func(t *testing.T) {
		code, stdout, stderr := runArgs(t, "gen", "--events", "500", "--db", db, "--projects", "2")
		if code != exitOK || !strings.HasPrefix(stdout, "gen: 50") || !strings.Contains(stdout, "bytes/event") {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		if stderr != "" {
			t.Errorf("progress on stderr that is no terminal: %q", stderr)
		}
	})
	t.Run("ErrExists", func(t *testing.T) {
		before, _ := os.Stat(db)
		code, _, stderr := runArgs(t, "gen", "--events", "100", "--db", db)
		after, _ := os.Stat(db)
		if code != exitFailed || !strings.Contains(stderr, "--force") || !after.ModTime().Equal(before.ModTime()) {
			t.Fatalf("exit %d, stderr %q; want exit 1, a hint at --force and the file untouched", code, stderr)
		}
	})
	t.Run("Force", func(t *testing.T) {
		code, stdout, stderr := runArgs(t, "gen", "--events", "100", "--db", db, "--force")
		if code != exitOK || !strings.HasPrefix(stdout, "gen: 10") {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
	})
}
