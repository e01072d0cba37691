package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/flowctl/flowctl/eventlog"
)

// TestReport_SystemErrors: a full disk, a read-only file system and a
// permission problem exit 1 with an error that says what to do, in text
// (a second line) and in JSON; any other internal error says to report it.
func TestReport_SystemErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
		hint string
	}{
		{"FullDisk", &fs.PathError{Op: "write", Path: "flow.db", Err: syscall.ENOSPC}, "disk is full"},
		{"FullDiskWrapped", fmt.Errorf("compacting flow.db: %w", &fs.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}), "disk is full"},
		{"ReadOnly", &fs.PathError{Op: "open", Path: "flow.db", Err: syscall.EROFS}, "read-only"},
		{"Permission", &fs.PathError{Op: "open", Path: "flow.db", Err: syscall.EACCES}, "permissions"},
		{"OtherIsABug", errors.New("boom"), "a bug in flowctl"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var text bytes.Buffer
			if code := report(&text, tt.err, false, ""); code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			line := text.String()
			if !oneError(line) || !strings.Contains(line, "\nhint: ") || !strings.Contains(line, tt.hint) {
				t.Errorf("text %q: want an error line and the hint %q", line, tt.hint)
			}
			var js bytes.Buffer
			report(&js, tt.err, true, "")
			var body struct {
				Error struct{ Code, Message, Hint string }
			}
			if err := json.Unmarshal(js.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			if body.Error.Code != "internal" || !strings.Contains(body.Error.Hint, tt.hint) {
				t.Errorf("json %s: want code internal and the hint %q", js.String(), tt.hint)
			}
		})
	}
}

// TestErrors_EveryCodeHasAHint: every error code the CLI can exit with
// carries a hint, so that no JSON error lacks one.
func TestErrors_EveryCodeHasAHint(t *testing.T) {
	t.Parallel()
	for code, exit := range exitCodes {
		if exit != 0 && hints[code] == "" {
			t.Errorf("code %s (exit %d) has no default hint", code, exit)
		}
	}
	if hints[codeExit] == "" {
		t.Errorf("a passed-on exit status has no hint")
	}
}

// TestErrors_JSONHasCodeMessageHint walks the error paths of the CLI,
// one or more per exit code, and checks that each JSON error has a code,
// a message and a hint, and that text mode shows the same hint on a
// second line.
func TestErrors_JSONHasCodeMessageHint(t *testing.T) {
	t.Parallel()
	f := apprFile(t)
	f.mustRun("", "approval", "request", "--task", "T-1", "--message", "ship?", "--action", `{"ship":1}`)
	empty := t.TempDir()
	junk := filepath.Join(empty, "junk.db")
	if err := os.WriteFile(junk, bytes.Repeat([]byte{0xAB}, 8192), 0o644); err != nil {
		t.Fatal(err)
	}
	action := filepath.Join(empty, "action.json")
	if err := os.WriteFile(action, []byte(`{"ship":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		dir  string
		exit int
		args []string
	}{
		{"UnknownCommand", f.dir, 2, []string{"tsak"}},
		{"UnknownSubcommand", f.dir, 2, []string{"task", "lss"}},
		{"UnknownFlag", f.dir, 2, []string{"task", "ls", "--stauts", "x"}},
		{"MissingArg", f.dir, 2, []string{"task", "add"}},
		{"TooManyArgs", f.dir, 2, []string{"version", "x"}},
		{"BadColor", f.dir, 2, []string{"status", "--color", "purple"}},
		{"BadJSON", f.dir, 2, []string{"ctx", "merge", "--task", "T-1", "{"}},
		{"NoFile", empty, 3, []string{"status"}},
		{"UnknownTask", f.dir, 3, []string{"task", "show", "T-99"}},
		{"UnknownProject", f.dir, 3, []string{"status", "--project", "nosuch"}},
		{"Transition", f.dir, 4, []string{"task", "reopen", "T-1"}},
		{"ApprovalHoldsDone", f.dir, 6, []string{"task", "done", "T-1", "--force"}},
		{"StaleVersion", f.dir, 4, []string{"task", "edit", "T-2", "--title", "x", "--if-version", "9"}},
		{"Pending", f.dir, 6, []string{"approval", "check", "A-1", "--action", action}},
		{"Corrupt", empty, 7, []string{"--db", junk, "status"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, stderr, code := runCLI(t, tc.dir, "", append(tc.args, "-o", "json")...)
			if code != tc.exit {
				t.Fatalf("exit %d, want %d; stderr %q", code, tc.exit, stderr)
			}
			var e jsonError
			if err := json.Unmarshal([]byte(stderr), &e); err != nil {
				t.Fatalf("stderr is not the JSON error: %q", stderr)
			}
			if e.Error.Code == "" || e.Error.Message == "" || e.Error.Hint == "" {
				t.Errorf("JSON error lacks a field: %+v", e.Error)
			}
			_, text, _ := runCLI(t, tc.dir, "", tc.args...)
			if !oneError(text) || !strings.HasSuffix(text, "\nhint: "+e.Error.Hint+"\n") {
				t.Errorf("text error %q, want the message and then \"hint: %s\"", text, e.Error.Hint)
			}
		})
	}
	t.Run("Busy", func(t *testing.T) {
		t.Parallel()
		g := mustInit(t)
		holder, err := eventlog.Open(g.path, eventlog.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer holder.Close()
		_, stderr, code := g.run("", "log", "--lock-timeout", "100ms", "-o", "json")
		e := wantJSONError(t, stderr, code, 5, "busy")
		if e.Error.Message == "" || e.Error.Hint == "" {
			t.Errorf("JSON error lacks a field: %+v", e.Error)
		}
	})
}

// TestReport_OwnStatusAndPaths: a command exec run ran keeps its status
// and says so (exit 7 of a child is not "corrupt"); quickstart's flowctl
// steps map through the table; a missing path says which.
func TestReport_OwnStatusAndPaths(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err        error
		exit       int
		code, hint string
	}{
		{exitStatus{errors.New("sh exited with status 7"), 7, false}, 7, "exit", "the command's own"},
		{exitStatus{errors.New("quickstart stopped"), 7, true}, 7, "corrupt", "flowctl verify"},
		{&fs.PathError{Op: "open", Path: "patch.json", Err: syscall.ENOENT}, 3, "not_found", "check the path patch.json"},
	} {
		var js bytes.Buffer
		if got := report(&js, tc.err, true, ""); got != tc.exit {
			t.Errorf("%v: exit %d, want %d", tc.err, got, tc.exit)
		}
		var body struct {
			Error struct{ Code, Hint string }
		}
		if err := json.Unmarshal(js.Bytes(), &body); err != nil {
			t.Fatal(err)
		}
		if body.Error.Code != tc.code || !strings.Contains(body.Error.Hint, tc.hint) {
			t.Errorf("%v: %s, want code %s and a hint with %q", tc.err, js.String(), tc.code, tc.hint)
		}
	}
}

// TestErrors_UnreachableServerHint: a database that cannot be dialled is
// the system's failure (exit 1) with a hint about the server, not "a bug
// in flowctl".
func TestErrors_UnreachableServerHint(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	err := fmt.Errorf("pgstore: failed to connect: %w", dial)
	if got := hintOf(err, codeOf(err)); !strings.Contains(got, "database server could not be reached") {
		t.Errorf("hint %q, want one about the server", got)
	}
}
