package main

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/mattn/go-runewidth"
)

func TestDisplay_Color(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "demo")
	f.mustRun("", "task", "add", "one")
	f.mustRun("", "task", "start", "T-1")
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want bool // coloured
	}{
		{"AutoInAPipe", nil, nil, false},
		{"Always", nil, []string{"--color", "always"}, true},
		{"Never", map[string]string{"FORCE_COLOR": "1"}, []string{"--color", "never"}, false},
		{"NO_COLOR", map[string]string{"NO_COLOR": "1"}, nil, false},
		{"FORCE_COLOR", map[string]string{"FORCE_COLOR": "1"}, nil, true},
		{"FORCE_COLOR=0", map[string]string{"FORCE_COLOR": "0"}, nil, false},
		{"NO_COLORBeatsFORCE_COLOR", map[string]string{"NO_COLOR": "1", "FORCE_COLOR": "1"}, nil, false},
		{"AlwaysBeatsNO_COLOR", map[string]string{"NO_COLOR": "1"}, []string{"--color", "always"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, cmd := range [][]string{{"task", "ls"}, {"status"}, {"log"}, {"verify"}} {
				stdout, stderr, code := runCLIEnv(t, f.dir, tc.env, "", append(cmd, tc.args...)...)
				if code != 0 {
					t.Fatalf("%v: exit %d, stderr %q", cmd, code, stderr)
				}
				if got := strings.Contains(stdout, "\x1b["); got != tc.want {
					t.Errorf("%v %v: coloured = %v, want %v:\n%s", cmd, tc.env, got, tc.want, stdout)
				}
			}
			stdout, _, _ := runCLIEnv(t, f.dir, tc.env, "", append([]string{"task", "ls", "-o", "json"}, tc.args...)...)
			if strings.Contains(stdout, "\x1b[") {
				t.Errorf("JSON output is coloured: %q", stdout)
			}
		})
	}
	t.Run("StatusColours", func(t *testing.T) {
		t.Parallel()
		stdout := f.mustRun("", "task", "ls", "--color", "always")
		if !strings.Contains(stdout, "\x1b[33mdoing\x1b[0m") {
			t.Errorf("doing is not yellow:\n%q", stdout)
		}
	})
}

func TestDisplay_DevNullIsNotATerminal(t *testing.T) {
	t.Parallel()
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Errorf("%s is taken for a terminal", os.DevNull)
	}
}

func TestTable_Fit(t *testing.T) {
	t.Parallel()
	rows := func() [][]string {
		return [][]string{
			{"T-1", "doing", "a title that is much too long to fit in a narrow terminal window"},
			{"T-22", "todo", "短いタイトル"},
		}
	}
	render := func(d display) []string {
		var b strings.Builder
		w := &textWriter{bufio.NewWriter(&b), d}
		table(w, "ID\tSTATUS\tTITLE", rows())
		w.Flush()
		return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	}

	t.Run("Pipe", func(t *testing.T) {
		got := render(display{})
		want := []string{
			"ID    STATUS  TITLE",
			"T-1   doing   a title that is much too long to fit in a narrow terminal window",
			"T-22  todo    短いタイトル",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
	t.Run("Terminal", func(t *testing.T) {
		got := render(display{width: 40})
		for _, line := range got {
			if w := runewidth.StringWidth(line); w >= 40 {
				t.Errorf("line %q is %d wide, want under 40", line, w)
			}
		}
		if !strings.HasSuffix(got[1], "…") || strings.HasSuffix(got[2], "…") {
			t.Errorf("want only the long title cut with …:\n%s", strings.Join(got, "\n"))
		}
	})
	t.Run("TextNotLast", func(t *testing.T) {
		var b strings.Builder
		w := &textWriter{bufio.NewWriter(&b), display{width: 40}}
		table(w, "ID\tTITLE\tSTATUS", [][]string{
			{"T-1", "a title that is much too long to fit in a narrow terminal window", "in_progress"},
			{"T-2", "short", "done"},
		})
		w.Flush()
		for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
			if n := runewidth.StringWidth(line); n >= 40 {
				t.Errorf("line %q is %d wide, want under 40", line, n)
			}
		}
	})
	t.Run("WideRunesAlign", func(t *testing.T) {
		var b strings.Builder
		w := &textWriter{bufio.NewWriter(&b), display{}}
		table(w, "TITLE\tSTATUS", [][]string{{"短い", "todo"}, {"abcdef", "done"}})
		w.Flush()
		lines := strings.Split(b.String(), "\n")
		if i, j := runewidth.StringWidth(lines[1][:strings.Index(lines[1], "todo")]), strings.Index(lines[2], "done"); i != j {
			t.Errorf("STATUS at column %d and %d:\n%s", i, j, b.String())
		}
	})
}
