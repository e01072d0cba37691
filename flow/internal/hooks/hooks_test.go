//go:build unix

package hooks

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func write(t *testing.T, dir, name, script string, mode os.FileMode) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script+"\n"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil { // past the umask
		t.Fatal(err)
	}
}

func TestFind(t *testing.T) {
	t.Run("NoDir", func(t *testing.T) {
		s, err := Find(filepath.Join(t.TempDir(), "none"))
		if err != nil || !s.Empty() {
			t.Fatalf("Find = %+v, %v", s, err)
		}
	})
	t.Run("Order", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, "pre-commit.d/20-b", "", 0o755)
		write(t, dir, "pre-commit.d/10-a", "", 0o755)
		write(t, dir, "pre-commit.d/.swp", "", 0o755)
		write(t, dir, "pre-commit", "", 0o755)
		write(t, dir, "post-commit.d/x", "", 0o775)
		write(t, dir, "pre-save", "", 0o755)
		s, err := Find(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, h := range s.Pre {
			names = append(names, h.Name)
		}
		if strings.Join(names, " ") != "pre-commit pre-commit.d/10-a pre-commit.d/20-b" {
			t.Errorf("pre-commit hooks %q", names)
		}
		if len(s.Post) != 1 || !strings.Contains(s.Post[0].Refused, "writable by group or others") {
			t.Errorf("post-commit hooks %+v", s.Post)
		}
	})
}

func TestHook_Run(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, script string
		vetoed       bool
		reason       string // "" : allowed
	}{
		{"Allow", "cat >/dev/null; exit 0", false, ""},
		{"Veto", "printf '\\n  first line  \\nsecond\\n' >&2; exit 2", true, "first line"},
		{"Fail", "exit 3", false, "exit status 3"},
		{"Signal", "kill -TERM $$", false, "killed by signal 15"},
		{"Timeout", "sleep 5", false, "timed out after 100ms"},
		{"NoStdinRead", "exit 0", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			write(t, dir, tc.name, tc.script, 0o755)
			h := Hook{Name: tc.name, Path: filepath.Join(dir, tc.name)}
			err := h.Run(Input{Stdin: make([]byte, 1<<20), Timeout: 100 * time.Millisecond})
			var r *Refusal
			switch {
			case tc.reason == "" && err != nil:
				t.Fatalf("Run = %v, want nil", err)
			case tc.reason != "" && (!errors.As(err, &r) || r.Vetoed != tc.vetoed || !strings.Contains(r.Reason, tc.reason)):
				t.Fatalf("Run = %v, want a refusal with %q (vetoed %v)", err, tc.reason, tc.vetoed)
			}
		})
	}
}
