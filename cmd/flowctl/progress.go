package main

import (
	"time"

	"github.com/schollz/progressbar/v3"
)

// The progress bar of long work (import, legacy imports, export to a
// file or a pipe, rebuild, verify, compact) is schollz/progressbar: it
// keeps the rate and the ETA, throttles redraws, and sizes itself to the
// terminal, which a hand-drawn \r line did not. It is drawn on stderr,
// and only when stderr is a terminal, the output is text and -q is off:
// never in a pipe, a log file or a JSON consumer's stream.

// engineProgress is the engine's progress func for the command's work.
func (a *app) engineProgress() func(done, total uint64) {
	switch a.work {
	case "":
		return a.progressFunc("rebuilding projections", "events")
	case "-":
		return nil
	}
	return a.progressFunc(a.work, "events")
}

// showProgress reports whether long work may draw a progress bar.
func (a *app) showProgress() bool {
	return !a.g.quiet && a.g.output == "text" && isTerminal(a.stderr)
}

// progressFunc returns a func that draws what label is doing as a bar of
// done out of total items (events, unless unit says otherwise), or nil
// when no bar may be drawn. The bar appears on the first call and is
// cleared when done reaches total, leaving stderr as it was.
func (a *app) progressFunc(label, unit string) func(done, total uint64) {
	if !a.showProgress() {
		return nil
	}
	return func(done, total uint64) {
		if a.bar != nil && a.bar.IsFinished() {
			a.bar = nil // a second walk: a new bar
		}
		bar := a.bar
		if bar == nil {
			bar = progressbar.NewOptions64(int64(total),
				progressbar.OptionSetWriter(a.stderr),
				progressbar.OptionSetDescription(label),
				progressbar.OptionShowCount(),
				progressbar.OptionShowIts(),
				progressbar.OptionSetItsString(unit),
				progressbar.OptionSetPredictTime(true),
				progressbar.OptionThrottle(100*time.Millisecond),
				progressbar.OptionSetWidth(30),
				progressbar.OptionClearOnFinish(),
			)
			a.bar = bar
		}
		if total != uint64(bar.GetMax64()) {
			bar.ChangeMax64(int64(total))
		}
		bar.Set64(int64(done))
		if done >= total {
			bar.Finish()
		}
	}
}

// clearProgress takes an unfinished bar off stderr (the work failed, or a
// warning is to be printed), so that the next line starts clean.
func (a *app) clearProgress() {
	if a.bar != nil && !a.bar.IsFinished() {
		a.bar.Clear()
		a.bar.Exit()
	}
	a.bar = nil
}
