package main

import (
	"bufio"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// display is how text output looks: whether it is coloured, and the width
// that tables fit (0: no limit). Both are off unless stdout is a terminal
// (or --color always / FORCE_COLOR ask for colour): what goes into a pipe
// or a file is plain and whole.
type display struct {
	color bool
	width int
}

// resolveDisplay decides colour and width for stdout: --color always or
// never wins; with auto, NO_COLOR (any value) turns colour off, then
// FORCE_COLOR (any value but 0 or false) turns it on, else a terminal
// that is not TERM=dumb gets it.
func (a *app) resolveDisplay() display {
	var d display
	fd, tty := terminalFD(a.stdout)
	if tty {
		if w, _, err := term.GetSize(fd); err == nil && w > 0 {
			d.width = w
		}
	}
	switch a.g.color {
	case "always":
		d.color = true
	case "never":
	default:
		switch force := a.getenv("FORCE_COLOR"); {
		case a.getenv("NO_COLOR") != "":
		case force != "" && force != "0" && force != "false":
			d.color = true
		default:
			d.color = tty && a.getenv("TERM") != "dumb"
		}
	}
	return d
}

// terminalFD returns w's file descriptor and whether it is a terminal.
// A character device is not enough: /dev/null is one.
func terminalFD(w io.Writer) (int, bool) {
	f, ok := w.(*os.File)
	if !ok {
		return 0, false
	}
	fd := int(f.Fd())
	return fd, term.IsTerminal(fd)
}

// isTerminal reports whether w is a terminal (progress bars are drawn on
// stderr only then).
func isTerminal(w io.Writer) bool {
	_, ok := terminalFD(w)
	return ok
}

// textWriter is the writer text renderers get: stdout, buffered, with the
// display it is shown on, so that table and the line renderers colour and
// fit without every render func taking one more argument.
type textWriter struct {
	*bufio.Writer
	disp display
}

// displayOf returns the display w is shown on: plain for any writer that
// is not a textWriter.
func displayOf(w io.Writer) display {
	if tw, ok := w.(*textWriter); ok {
		return tw.disp
	}
	return display{}
}

// SGR codes of the colours used.
const (
	sgrRed    = "31"
	sgrGreen  = "32"
	sgrYellow = "33"
	sgrCyan   = "36"
	sgrDim    = "2"
	sgrBold   = "1"
)

// paint wraps s in an SGR colour when the display is coloured.
func (d display) paint(s, sgr string) string {
	if !d.color || sgr == "" || s == "" {
		return s
	}
	return "\x1b[" + sgr + "m" + s + "\x1b[0m"
}

// statusColors colour the states of tasks, steps, approvals, plans and
// projects: green finished well, yellow under way or waiting on someone,
// red stopped, dim out of play; todo and pending steps stay plain.
var statusColors = map[string]string{
	"doing": sgrYellow, "done": sgrGreen, "blocked": sgrRed, "cancelled": sgrDim,
	"in_progress": sgrYellow, "completed": sgrGreen, "failed": sgrRed, "skipped": sgrDim,
	"pending": sgrYellow, "granted": sgrGreen, "denied": sgrRed, "expired": sgrDim,
	"closed": sgrDim, "archived": sgrDim, "ready": sgrGreen,
}

// statusColor is the colour of a cell in a column named header.
func statusColor(header, cell string) string {
	switch header {
	case "STATUS", "READY":
		if c, ok := statusColors[cell]; ok {
			return c
		}
		if header == "READY" && cell != "" {
			return sgrDim // waiting for …
		}
	case "EXIT":
		if cell == "0" {
			return sgrGreen
		}
		if cell != "" && cell != "-" {
			return sgrRed
		}
	}
	return ""
}

// eventColor colours an event type by what it means to a reader.
func eventColor(typ string) string {
	switch {
	case strings.HasPrefix(typ, "rollback."):
		return sgrRed
	case strings.HasPrefix(typ, "approval."), strings.HasPrefix(typ, "checkpoint."):
		return sgrYellow
	case strings.HasSuffix(typ, ".created"), typ == "step.added":
		return sgrGreen
	default:
		return sgrCyan
	}
}
