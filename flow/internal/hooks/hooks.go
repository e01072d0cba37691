package hooks

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The points at which hooks run.
const (
	PreCommit  = "pre-commit"
	PostCommit = "post-commit"
)

// Points are the hook points, in the order `hooks ls` lists them.
var Points = []string{PreCommit, PostCommit}

// DefaultTimeout bounds one hook's run when the caller sets none.
const DefaultTimeout = 10 * time.Second

// Hook is one hook file.
type Hook struct {
	Point string // PreCommit or PostCommit
	Name  string // its path below the hooks directory: "pre-commit.d/10-check"
	Path  string // its full path
	// Refused says why the file does not run ("" when it runs): not
	// executable, not owned by the user or root, writable by group or
	// others, not a regular file, or hooks unsupported on this system.
	Refused string
}

// Set is the hooks a directory holds, per point, in the order they run
// (refused ones included: the caller warns about them).
type Set struct {
	Pre, Post []Hook
}

// Empty reports whether the set has no file at all.
func (s Set) Empty() bool { return len(s.Pre) == 0 && len(s.Post) == 0 }

// Of returns the hooks of point.
func (s Set) Of(point string) []Hook {
	if point == PreCommit {
		return s.Pre
	}
	return s.Post
}

// Find lists the hooks in dir. A missing dir holds none (one failed open:
// the cost of hooks to a command when there are none). Errors: the
// system's, reading a directory that exists.
func Find(dir string) (Set, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return Set{}, nil
	}
	if err != nil {
		return Set{}, fmt.Errorf("hooks: reading %s: %w", dir, err)
	}
	var s Set
	for _, point := range Points {
		hs, err := find(dir, entries, point)
		if err != nil {
			return Set{}, err
		}
		if point == PreCommit {
			s.Pre = hs
		} else {
			s.Post = hs
		}
	}
	return s, nil
}

// find lists point's hooks among dir's entries: the plain file, then
// point.d's files in name order.
func find(dir string, entries []fs.DirEntry, point string) ([]Hook, error) {
	var out []Hook
	if slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == point }) {
		out = append(out, hookAt(dir, point, point))
	}
	if !slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == point+".d" && e.IsDir() }) {
		return out, nil
	}
	sub, err := os.ReadDir(filepath.Join(dir, point+".d"))
	if err != nil {
		return nil, fmt.Errorf("hooks: reading %s: %w", filepath.Join(dir, point+".d"), err)
	}
	for _, e := range sub { // os.ReadDir sorts by name
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		out = append(out, hookAt(dir, point, point+".d/"+e.Name()))
	}
	return out, nil
}

func hookAt(dir, point, name string) Hook {
	h := Hook{Point: point, Name: name, Path: filepath.Join(dir, filepath.FromSlash(name))}
	h.Refused = refusal(h.Path)
	return h
}

// SHA256 returns the hex SHA-256 of the hook file's content.
func (h Hook) SHA256() (string, error) {
	f, err := os.Open(h.Path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sum := sha256.New()
	if _, err := io.Copy(sum, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(sum.Sum(nil)), nil
}

// Refusal is a hook that did not allow: it vetoed (exit 2) or failed.
type Refusal struct {
	Hook   string // the hook's name: "pre-commit.d/10-check"
	Vetoed bool   // exit 2: Reason is its stderr's first line
	Reason string // the veto's reason, or how the hook failed
}

func (r *Refusal) Error() string {
	if r.Vetoed {
		return fmt.Sprintf("hook %s vetoed: %s", r.Hook, r.Reason)
	}
	return fmt.Sprintf("hook %s failed: %s", r.Hook, r.Reason)
}

// Input is what one run of a hook gets.
type Input struct {
	Stdin   []byte        // one JSON object per line
	Env     []string      // the whole environment, as os/exec takes it
	Dir     string        // working directory; "": the caller's
	Timeout time.Duration // 0: DefaultTimeout
}

// Run runs h with in and returns nil when it allows, else a *Refusal. A
// refused file (h.Refused) is not run: it is the caller's to skip.
func (h Hook) Run(in Input) error {
	if in.Timeout <= 0 {
		in.Timeout = DefaultTimeout
	}
	var stderr limitedBuffer
	code, err := run(h.Path, in, &stderr)
	switch {
	case err != nil:
		return &Refusal{Hook: h.Name, Reason: err.Error()}
	case code == 0:
		return nil
	case code == 2:
		reason := firstLine(stderr.Bytes())
		if reason == "" {
			reason = "no reason given (nothing on stderr)"
		}
		return &Refusal{Hook: h.Name, Vetoed: true, Reason: reason}
	}
	reason := fmt.Sprintf("exit status %d (only 0 allows and 2 vetoes)", code)
	if line := firstLine(stderr.Bytes()); line != "" {
		reason += ": " + line
	}
	return &Refusal{Hook: h.Name, Reason: reason}
}

// firstLine is the first non-blank line of b, trimmed and cut short.
func firstLine(b []byte) string {
	for line := range bytes.Lines(b) {
		s := strings.TrimSpace(string(line))
		if s == "" {
			continue
		}
		if r := []rune(s); len(r) > maxReason {
			s = string(r[:maxReason]) + "…"
		}
		return strings.ToValidUTF8(s, "?")
	}
	return ""
}

// maxReason is the longest reason kept, in characters.
const maxReason = 500

// limitedBuffer keeps the first maxStderr bytes written to it and
// swallows the rest, so that a chatty hook never blocks on its pipe.
type limitedBuffer struct{ bytes.Buffer }

const maxStderr = 64 << 10

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := maxStderr - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
