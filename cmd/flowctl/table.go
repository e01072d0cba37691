package main

import (
	"io"
	"slices"
	"strings"

	"github.com/mattn/go-runewidth"
)

// table writes aligned columns for people: each column as wide as its
// widest cell (by display width, so that CJK titles line up), two spaces
// apart, the last column unpadded. On a terminal the free-text column
// (TITLE, MESSAGE, …) is cut with … to fit the width, and the status
// columns are coloured; into a pipe nothing is cut or coloured.
func table(w io.Writer, header string, rows [][]string) {
	d := displayOf(w)
	var heads []string
	if header != "" {
		heads = strings.Split(header, "\t")
	}
	lines := make([][]string, 0, len(rows)+1)
	if heads != nil {
		lines = append(lines, heads)
	}
	for _, r := range rows {
		for i := range r {
			r[i] = printable(r[i])
		}
		lines = append(lines, r)
	}
	widths := columnWidths(lines)
	fitColumns(lines, widths, heads, d.width)
	var b strings.Builder
	for li, r := range lines {
		b.Reset()
		for i, cell := range r {
			color := ""
			if li > 0 || heads == nil {
				color = statusColor(at(heads, i), cell)
			}
			b.WriteString(d.paint(cell, color))
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-runewidth.StringWidth(cell)+2))
			}
		}
		b.WriteByte('\n')
		io.WriteString(w, b.String())
	}
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}

// columnWidths is the display width of each column: its widest cell that
// is followed by another (the last cell of a line is never padded).
func columnWidths(lines [][]string) []int {
	var widths []int
	for _, r := range lines {
		for i, cell := range r {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			if i < len(r)-1 {
				widths[i] = max(widths[i], runewidth.StringWidth(cell))
			}
		}
	}
	return widths
}

// flexColumns are the free-text columns a table gives up width from.
var flexColumns = []string{"TITLE", "MESSAGE", "COMMAND", "VALUE", "LABEL", "READY"}

// fitColumns cuts the free-text column's cells with … so that every line
// fits width (0: no limit). Only that column shrinks, never below 10; in
// a table without a header it is the last column.
func fitColumns(lines [][]string, widths []int, heads []string, width int) {
	if width <= 0 {
		return
	}
	flex := slices.IndexFunc(heads, func(h string) bool { return slices.Contains(flexColumns, h) })
	if heads == nil && len(widths) > 0 {
		flex = len(widths) - 1 // a table without a header ends with its text
	}
	if flex < 0 {
		return
	}
	others := 0
	for i, w := range widths {
		if i == len(widths)-1 && i != flex {
			w = lastWidth(lines) // unpadded, but it takes room all the same
		}
		if i != flex {
			others += w + 2
		}
	}
	room := max(width-others-1, 10) // -1: a line as wide as the terminal wraps on some
	for _, r := range lines {
		if flex < len(r) && runewidth.StringWidth(r[flex]) > room {
			r[flex] = runewidth.Truncate(r[flex], room, "…")
		}
	}
	if flex < len(widths)-1 && widths[flex] > room {
		widths[flex] = room
	}
}

// lastWidth is the widest last cell of the lines that have every column.
func lastWidth(lines [][]string) int {
	n, w := 0, 0
	for _, r := range lines {
		n = max(n, len(r))
	}
	for _, r := range lines {
		if len(r) == n {
			w = max(w, runewidth.StringWidth(r[n-1]))
		}
	}
	return w
}
