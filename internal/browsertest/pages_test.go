package browsertest

import (
	"strconv"
	"testing"
)

// TestPages opens every page of the project and checks that each shows
// what it is about, with no console error or exception (checked when the
// test ends: failed loads and CSP violations are errors too).
func TestPages(t *testing.T) {
	s := newSite(t, newProject(t))
	tb := newTab(t)
	pages := []struct{ path, ready string }{
		{"/", `document.getElementById('project-web')`},
		{"/p/web", `document.querySelectorAll('#counts [data-count]').length > 0 && document.getElementById('pending')`},
		{"/p/web/board", `document.querySelectorAll('#board .card').length === ` + strconv.Itoa(fixtureTasks)},
		{"/p/web/tasks/T-3", `document.querySelectorAll('#steps [data-step]').length === 3 && document.getElementById('task-graph')`},
		{"/p/web/tasks/T-6", `document.querySelectorAll('#execs [data-exit]').length === 2`},
		{"/p/web/log", `document.querySelectorAll('#log [data-seq]').length > 10`},
		{"/p/web/log?open=1", `document.getElementById('log')`},
		{"/p/web/approvals", `document.getElementById('approve-A-1')`},
		{"/p/web/checkpoints", `document.getElementById('checkpoint-C-2')`},
		{"/p/web/checkpoints?preview=C-1", `document.getElementById('preview')`},
		{"/p/web/stats", `document.getElementById('stat-totals')`},
		{"/p/web/diff?a=C-1&b=C-2", `document.getElementById('diff')`},
		{"/p/web/graph?all=1", `document.querySelectorAll('#graph svg a.node').length === ` + strconv.Itoa(fixtureTasks)},
		{"/p/web/graph?task=T-3", `document.querySelectorAll('#graph svg a.node').length === 5`},
		{"/p/web?at=C-1", `document.getElementById('at-banner')`},
	}
	for _, p := range pages {
		tb.open(s.url + p.path)
		tb.waitFor(p.path, p.ready)
	}
}

// TestPages_Live checks that a page at the head subscribes to the event
// stream: its live state turns on.
func TestPages_Live(t *testing.T) {
	s := newSite(t, newProject(t))
	tb := newTab(t)
	for _, path := range []string{"/p/web", "/p/web/board", "/p/web/graph"} {
		tb.open(s.url + path)
		tb.waitFor(path+" live", `document.getElementById('live-state').dataset.state === 'on'`)
	}
}
