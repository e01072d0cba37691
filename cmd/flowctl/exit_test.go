package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"
)

// TestReport_SystemErrors: a full disk, a read-only file system and a
// permission problem exit 1 with a one-line error that says what to do,
// in text and in JSON.
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
		{"OtherHasNoHint", errors.New("boom"), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var text bytes.Buffer
			if code := report(&text, tt.err, false); code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			line := text.String()
			if strings.Count(line, "\n") != 1 || !strings.Contains(line, tt.hint) || (tt.hint == "") != !strings.Contains(line, "(") {
				t.Errorf("text %q: want one line with the hint %q", line, tt.hint)
			}
			var js bytes.Buffer
			report(&js, tt.err, true)
			var body struct {
				Error struct{ Code, Message, Hint string }
			}
			if err := json.Unmarshal(js.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			if body.Error.Code != "internal" || !strings.Contains(body.Error.Hint, tt.hint) || (tt.hint == "") != (body.Error.Hint == "") {
				t.Errorf("json %s: want code internal and the hint %q", js.String(), tt.hint)
			}
		})
	}
}
