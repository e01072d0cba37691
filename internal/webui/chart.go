package webui

import (
	"strconv"

	"github.com/flowctl/flowctl/digest"
)

// chart is a horizontal bar chart laid out on the server: an inline SVG
// with geometry in attributes and colours in CSS classes, no script.
type chart struct {
	Width, Height int
	LabelWidth    int
	Rows          []chartRow
}

// chartRow is one tool: its success rate and its EWMA as two bars.
type chartRow struct {
	Label    string
	Y        int // top of the row
	RateW    int // width of the success-rate bar
	EWMAW    int // width of the EWMA bar
	RateText string
	EWMAText string // "" for a row without an EWMA
	Runs     int
	TextX    int // where the values are written
	BarY     int
	EWMAY    int
}

// Chart geometry, in SVG user units.
const (
	chartLabel = 140
	chartBar   = 260
	chartRowH  = 34
	chartCmdH  = 20
	chartBarH  = 11
)

// toolChart lays out the tools' success rate and EWMA.
func toolChart(tools []digest.ToolStats) chart {
	c := chart{LabelWidth: chartLabel, Width: chartLabel + chartBar + 150, Height: len(tools)*chartRowH + 8}
	for i, t := range tools {
		row := rowAt(i, chartRowH, t.Tool, t.Outcomes)
		row.EWMAW, row.EWMAText = bar(t.EWMA), pct(t.EWMA)
		c.Rows = append(c.Rows, row)
	}
	return c
}

// commandChart lays out the commands' success rate (digest keeps the
// EWMA per tool only).
func commandChart(cmds []digest.CommandStats) chart {
	c := chart{LabelWidth: chartLabel, Width: chartLabel + chartBar + 150, Height: len(cmds)*chartCmdH + 8}
	for i, x := range cmds {
		c.Rows = append(c.Rows, rowAt(i, chartCmdH, x.Command, x.Outcomes))
	}
	return c
}

// rowAt is row i of a chart with rows of height h: its success-rate bar.
func rowAt(i, h int, label string, o digest.Outcomes) chartRow {
	y := 4 + i*h
	return chartRow{Label: short(22, label), Y: y, Runs: o.Runs, RateW: bar(o.SuccessRate), RateText: pct(o.SuccessRate),
		TextX: chartLabel + chartBar + 8, BarY: y, EWMAY: y + chartBarH + 2}
}

func bar(rate float64) int {
	w := int(rate*chartBar + 0.5)
	return max(0, min(chartBar, w))
}

func pct(rate float64) string { return strconv.FormatFloat(rate*100, 'f', 0, 64) + "%" }
