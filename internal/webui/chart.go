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
	Label     string
	Y         int // top of the row
	RateW     int // width of the success-rate bar
	EWMAW     int // width of the EWMA bar
	RateText  string
	EWMAText  string
	Runs      int
	TextX     int // where the values are written
	BarY      int
	EWMAY     int
	BaselineY int
}

// Chart geometry, in SVG user units.
const (
	chartLabel = 140
	chartBar   = 260
	chartRowH  = 34
	chartBarH  = 11
)

// toolChart lays out the tools' success rate and EWMA.
func toolChart(tools []digest.ToolStats) chart {
	c := chart{LabelWidth: chartLabel, Width: chartLabel + chartBar + 150, Height: len(tools)*chartRowH + 8}
	for i, t := range tools {
		y := 4 + i*chartRowH
		c.Rows = append(c.Rows, chartRow{
			Label: short(22, t.Tool), Y: y, Runs: t.Runs,
			RateW: bar(t.SuccessRate), EWMAW: bar(t.EWMA),
			RateText: pct(t.SuccessRate), EWMAText: pct(t.EWMA),
			TextX: chartLabel + chartBar + 8, BarY: y, EWMAY: y + chartBarH + 2, BaselineY: y + 2*chartBarH + 8,
		})
	}
	return c
}

func bar(rate float64) int {
	w := int(rate*chartBar + 0.5)
	return max(0, min(chartBar, w))
}

func pct(rate float64) string { return strconv.FormatFloat(rate*100, 'f', 0, 64) + "%" }
