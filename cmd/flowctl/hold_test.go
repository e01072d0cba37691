package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestNeverWaits: output is held until the engine closes unless a write
// to it cannot wait for a reader: a regular file or the null device, not
// a pipe or a writer of the caller's.
func TestNeverWaits(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, tt := range []struct {
		name string
		w    io.Writer
		want bool
	}{
		{"regular file", f, true},
		{"null device", null, true},
		{"pipe", w, false},
		{"buffer", &bytes.Buffer{}, false},
	} {
		if got := neverWaits(tt.w); got != tt.want {
			t.Errorf("neverWaits(%s) = %t, want %t", tt.name, got, tt.want)
		}
	}
	// A command's output to a regular file is the same, held or not.
	a := &app{env: env{stdout: f}}
	var werr error
	release := a.holdOutput(&werr)
	if a.stdout != f {
		t.Errorf("output to a regular file was held (stdout %T)", a.stdout)
	}
	release()
}
