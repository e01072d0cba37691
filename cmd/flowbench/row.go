package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"
)

// Row is one measured figure, the unit of run's output (see doc.go for the
// JSON contract).
type Row struct {
	Name         string   `json:"name"`
	Value        float64  `json:"value"`
	Unit         string   `json:"unit"`
	Baseline     float64  `json:"baseline"`
	BaselineUnit string   `json:"baseline_unit,omitempty"` // set only when it differs from unit
	Ratio        float64  `json:"ratio"`                   // value / baseline
	Target       *float64 `json:"target"`                  // null: informational, always passes
	TargetOn     *string  `json:"target_on"`               // "ratio" or "value"; null with target
	TargetOp     *string  `json:"target_op"`               // "<=" or ">="; null with target
	Pass         bool     `json:"pass"`
	RSSMiB       *float64 `json:"rss_mib,omitempty"`        // rows that run flowctl: its largest peak RSS over the rounds
	RSSTarget    *float64 `json:"rss_target_mib,omitempty"` // the row fails when rss_mib is above it
	Error        string   `json:"error,omitempty"`          // why the row has no figure; it fails
}

// withRSS adds a flowctl process's peak RSS (KiB; 0: not known) to the
// row and, with a limit (MiB; 0: none), judges it too: the row passes
// only if both its figure and its RSS do. An unknown RSS is not judged.
func (r Row) withRSS(kib int64, limitMiB float64) Row {
	if kib <= 0 {
		return r
	}
	mib := float64(kib) / 1024
	r.RSSMiB = &mib
	if limitMiB > 0 {
		r.RSSTarget = &limitMiB
		r.Pass = r.Pass && mib <= limitMiB
	}
	return r
}

// withError marks a row that could not be measured: it fails, with why.
func (r Row) withError(err error) Row {
	if err != nil {
		r.Error, r.Pass = err.Error(), false
	}
	return r
}

// goal is a row's target: its value or ratio at most or at least limit.
type goal struct {
	on    string // "ratio" or "value"
	op    string // "<=" or ">="
	limit float64
}

func atMost(on string, limit float64) *goal  { return &goal{on: on, op: "<=", limit: limit} }
func atLeast(on string, limit float64) *goal { return &goal{on: on, op: ">=", limit: limit} }

// met reports whether x meets the goal. NaN meets nothing.
func (g *goal) met(x float64) bool {
	if g.op == "<=" {
		return x <= g.limit
	}
	return x >= g.limit
}

// newRow builds a row of value against baseline, both in unit, and judges
// it against g (nil: no target).
func newRow(name string, value, baseline float64, unit string, g *goal) Row {
	r := Row{Name: name, Value: value, Unit: unit, Baseline: baseline, Ratio: ratio(value, baseline), Pass: true}
	if g != nil {
		r.Target, r.TargetOn, r.TargetOp = &g.limit, &g.on, &g.op
		x := r.Value
		if g.on == "ratio" {
			x = r.Ratio
		}
		r.Pass = g.met(x) && (g.on == "value" || baseline > 0) // no baseline, no ratio to judge
	}
	return r
}

// ratio is value/baseline; 0 when there is no baseline.
func ratio(value, baseline float64) float64 {
	if baseline == 0 {
		return 0
	}
	return value / baseline
}

// allPass reports whether every row passed.
func allPass(rows []Row) bool {
	for _, r := range rows {
		if !r.Pass {
			return false
		}
	}
	return true
}

// writeJSON prints the rows as one JSON array.
func writeJSON(w io.Writer, rows []Row) error {
	if rows == nil {
		rows = []Row{}
	}
	b, err := json.MarshalIndent(rows, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// writeTable prints the rows as an aligned table.
func writeTable(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVALUE\tBASELINE\tRATIO\tTARGET\tRSS\tPASS")
	for _, r := range rows {
		bu := r.Unit
		if r.BaselineUnit != "" {
			bu = r.BaselineUnit
		}
		fmt.Fprintf(tw, "%s\t%s %s\t%s %s\t%s\t%s\t%s\t%s\n", r.Name, num(r.Value), r.Unit, num(r.Baseline), bu,
			num(r.Ratio), target(r), rss(r), passWord(r.Pass))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range rows {
		if r.Error != "" {
			if _, err := fmt.Fprintf(w, "%s: %s\n", r.Name, r.Error); err != nil {
				return err
			}
		}
	}
	return nil
}

// rss is a row's peak RSS and its limit: "45.2 MiB <= 64", "45.2 MiB" or "-".
func rss(r Row) string {
	if r.RSSMiB == nil {
		return "-"
	}
	s := num(*r.RSSMiB) + " MiB"
	if r.RSSTarget != nil {
		s += " <= " + num(*r.RSSTarget)
	}
	return s
}

func target(r Row) string {
	if r.Target == nil {
		return "-"
	}
	return *r.TargetOn + " " + *r.TargetOp + " " + num(*r.Target)
}

func passWord(ok bool) string {
	if ok {
		return "ok"
	}
	return "FAIL"
}

// num formats a figure with about three significant digits, never in
// exponent form.
func num(x float64) string {
	a := math.Abs(x)
	switch {
	case a >= 100 || a == 0:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(x, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}
