package browsertest

import (
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/flowctl/flowctl/projection"
)

// markPage sets a marker on window: a reload would lose it.
func (tb *tab) markPage() {
	tb.t.Helper()
	if !eval[bool](tb, `window.__flowctlMark = 'not reloaded', true`) {
		tb.t.Fatal("no marker")
	}
}

// notReloaded is the condition that the page marked by markPage is the
// same document.
const notReloaded = `window.__flowctlMark === 'not reloaded'`

// waitLive waits until the page's event stream is connected.
func (tb *tab) waitLive() {
	tb.t.Helper()
	tb.waitFor("the live state on", `document.getElementById('live-state').dataset.state === 'on'`)
}

// TestLive_AnotherProcess adds a task with the flowctl binary while the
// board, then the overview, are open, and waits for the page to show it
// without a reload.
func TestLive_AnotherProcess(t *testing.T) {
	s := newSite(t, newProject(t))
	tb := newTab(t)
	tb.open(s.url + "/p/web/board")
	tb.waitFor("the board", `document.querySelectorAll('#board .card').length === `+strconv.Itoa(fixtureTasks))
	tb.markPage()
	tb.waitLive()
	next := "T-" + strconv.Itoa(fixtureTasks+1)
	s.flowctl("task", "add", "Added <from> another process", "--dep", "T-3", "--tag", "live")
	tb.waitFor(next+" on the board", `(function () {
		var c = document.getElementById('card-`+next+`');
		return c && c.dataset.status === 'todo' && c.textContent.indexOf('Added <from> another process') >= 0 &&
			document.querySelector('#col-todo #card-`+next+`') !== null && `+notReloaded+`;
	})()`)

	tb.open(s.url + "/p/web")
	tb.waitFor("the overview", `document.querySelector('#counts [data-count="doing"]')`)
	tb.markPage()
	tb.waitLive()
	const doing = `Number(document.querySelector('#counts [data-count="doing"] .n').textContent)`
	n := eval[int](tb, doing)
	s.flowctl("task", "start", "T-13")
	tb.waitFor("the doing count up by one", doing+` === `+strconv.Itoa(n+1)+` && `+notReloaded)
}

// TestApproval_GrantThroughPage signs in through the one-time URL, grants
// the pending approval on the approvals page with a comment, and checks
// the decision in the file.
func TestApproval_GrantThroughPage(t *testing.T) {
	s := newSite(t, newProject(t))
	tb := newTab(t)
	tb.open(s.url + "/auth?t=" + testOneTime) // sets the cookie, redirects to /
	tb.waitFor("the projects page", `document.getElementById('project-web')`)
	tb.open(s.url + "/p/web/approvals")
	id := fixtureApproval
	tb.markPage()
	tb.do("grant "+id,
		chromedp.SetValue(chromedp.ID("comment-"+id), "Looks good: ship to staging"),
		chromedp.Click(chromedp.ID("approve-"+id)))
	tb.waitFor(id+" granted on the page", `!document.getElementById('approve-`+id+`') &&
		document.querySelector('#decided-approvals [data-approval="`+id+`"][data-status="granted"]') !== null && `+notReloaded)
	a, err := s.engine().Approval("web", id)
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != projection.ApprovalGranted || a.Comment != "Looks good: ship to staging" || a.DecidedBy != "reviewer" {
		t.Fatalf("in the file: status %q comment %q by %q", a.Status, a.Comment, a.DecidedBy)
	}
}

// TestApproval_NotSignedIn checks that without the cookie the page's
// grant is refused, says why, and changes nothing.
func TestApproval_NotSignedIn(t *testing.T) {
	s := newSite(t, newProject(t))
	tb := newTab(t)
	tb.open(s.url + "/p/web/approvals")
	id := fixtureApproval
	tb.do("grant "+id, chromedp.Click(chromedp.ID("approve-"+id)))
	tb.waitFor("the refusal", `(document.querySelector('#decide-`+id+` output.result.fail') || {}).textContent`)
	a, err := s.engine().Approval("web", id)
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != projection.ApprovalPending {
		t.Fatalf("in the file: %s", a.Status)
	}
	// The refused write is a 401 the browser logs as an error: expected.
	tb.forgetConsole()
}

// TestTimeTravel_Picker moves the point picker to a checkpoint and sees
// the board as it stood there, then goes back to now.
func TestTimeTravel_Picker(t *testing.T) {
	s := newSite(t, newProject(t))
	tb := newTab(t)
	tb.open(s.url + "/p/web/board")
	tb.waitFor("T-1 done now", `document.querySelector('#card-T-1[data-status="done"]')`)
	tb.do("pick "+fixtureCheckpoint,
		chromedp.SetValue(chromedp.ID("at-input"), fixtureCheckpoint),
		chromedp.Click(chromedp.ID("at-go")))
	tb.waitFor("the board at "+fixtureCheckpoint, `document.getElementById('at-banner') &&
		document.getElementById('main').dataset.at === '`+fixtureCheckpoint+`' &&
		document.querySelector('#card-T-1[data-status="todo"]') && !document.getElementById('card-T-6') &&
		document.querySelectorAll('#board .card').length === 5 && location.search.indexOf('at=`+fixtureCheckpoint+`') >= 0`)
	tb.do("back to now", chromedp.Click(chromedp.ID("at-now")))
	tb.waitFor("the board now", `!document.getElementById('at-banner') && document.querySelector('#card-T-1[data-status="done"]') &&
		document.querySelectorAll('#board .card').length === `+strconv.Itoa(fixtureTasks))
}

// TestGraph shows the graph page: a node per task, styled by graph.css,
// a node that links to its task, the task's link back to its
// neighbourhood, and a task added by another process drawn live.
func TestGraph(t *testing.T) {
	s := newSite(t, newProject(t))
	tb := newTab(t)
	tb.open(s.url + "/p/web/graph?all=1") // every task: the page draws the open work by default
	tb.waitFor("a node per task", `document.querySelectorAll('#graph svg.flow-graph a.node').length === `+strconv.Itoa(fixtureTasks))
	ids := eval[[]string](tb, `Array.from(document.querySelectorAll('#graph a.node')).map(function (a) { return a.dataset.id; }).sort()`)
	for i := 1; i <= fixtureTasks; i++ {
		want := "T-" + strconv.Itoa(i)
		found := false
		for _, id := range ids {
			found = found || id == want
		}
		if !found {
			t.Errorf("no node %s among %v", want, ids)
		}
	}
	// graph.css is applied: a done box is not drawn in the default black.
	if fill := eval[string](tb, `getComputedStyle(document.querySelector('#graph a.node.st-done rect')).fill`); fill == "rgb(0, 0, 0)" || fill == "" {
		t.Errorf("a done node's fill %q: graph.css not applied", fill)
	}
	if n := eval[int](tb, `document.querySelectorAll('#graph path.edge').length`); n < 5 {
		t.Errorf("%d edges", n)
	}

	tb.markPage()
	tb.waitLive()
	s.flowctl("task", "add", "Drawn live", "--dep", "T-3")
	next := "T-" + strconv.Itoa(fixtureTasks+1)
	tb.waitFor(next+" drawn", `document.querySelector('#graph a.node[data-id="`+next+`"]') && document.querySelector('#graph path.edge[data-from="T-3"][data-to="`+next+`"]') && `+notReloaded)

	tb.do("click T-3", chromedp.Click(chromedp.CSS(`#graph a.node[data-id="T-3"] rect`)))
	tb.waitFor("T-3's page", `document.getElementById('task') && document.getElementById('task').dataset.task === 'T-3'`)
	tb.do("its graph", chromedp.Click(chromedp.ID("task-graph")))
	tb.waitFor("T-3's neighbourhood", `document.getElementById('graph') && document.getElementById('graph').dataset.task === 'T-3' &&
		document.querySelectorAll('#graph a.node').length === 6`)
}
