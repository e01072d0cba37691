package webui

import (
	"cmp"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/flowctl/flowctl/digest"
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
)

// statuses are the task statuses in board order.
var statuses = []string{projection.StatusTodo, projection.StatusDoing, projection.StatusBlocked,
	projection.StatusDone, projection.StatusCancelled}

// projectRow is one project of the projects list.
type projectRow struct {
	Project *projection.Project
	Tasks   flow.TaskCounts
	Pending int
}

func (u *ui) projectsPage(rq *request) error {
	rq.page.Name, rq.page.Title = "projects", "Projects"
	projects, err := rq.eng.Projects()
	if err != nil {
		return err
	}
	rows := make([]projectRow, 0, len(projects))
	for _, p := range projects {
		row := projectRow{Project: p}
		err := rq.eng.Read(func(r *flow.Reader) error {
			var err error
			if row.Tasks, err = r.TaskCounts(p.Name); err != nil {
				return err
			}
			ids, err := r.ApprovalIDs(p.Name, projection.ApprovalPending)
			row.Pending = len(ids)
			return err
		})
		if err != nil {
			return err
		}
		rows = append(rows, row)
	}
	rq.page.Data = rows
	return nil
}

// activity is one line of a timeline: digest's words for an event.
type activity struct {
	digest.ReportEvent
	Task string // the task the event is about, "" for none
}

// activityOf says what ev did (ev carries Raw).
func activityOf(ev flow.Event) activity {
	a := activity{ReportEvent: digest.ReportEvent{Seq: ev.Seq, Time: ev.Time, Actor: ev.Actor, Type: ev.Type,
		Subject: digest.Subject(ev), Summary: short(160, digest.Summary(ev))}}
	if kind, _, id, ok := projection.ParseStream(ev.Stream); ok && kind == projection.KindTask {
		a.Task = id
	}
	return a
}

// stepRow is a step in progress with its task.
type stepRow struct {
	Task  *projection.Task
	Step  projection.Step
	Steps int // the task's steps
	Done  int // of them completed or skipped
}

// overview is the overview page's data.
type overview struct {
	Status  *flow.Status
	Project *projection.Project
	Steps   []stepRow
	Recent  []activity
	Counts  []statusCount
}

// statusCount is one status with its count, for the count strip.
type statusCount struct {
	Status string
	N      int
}

// overviewRecent is how many events the overview's activity shows.
const overviewRecent = 25

func (u *ui) overviewPage(rq *request) error {
	pg := rq.page
	pg.Name, pg.Title = "overview", rq.project
	st, err := rq.eng.Status(rq.project)
	if err != nil {
		return err
	}
	p, err := rq.eng.Project(rq.project)
	if err != nil {
		return err
	}
	ov := &overview{Status: st, Project: p}
	c := st.Tasks
	ov.Counts = []statusCount{{"todo", c.Todo}, {"doing", c.Doing}, {"blocked", c.Blocked}, {"done", c.Done}, {"cancelled", c.Cancelled}}
	for _, status := range []string{projection.StatusDoing, projection.StatusBlocked, projection.StatusTodo} {
		err := rq.eng.EachTask(rq.project, flow.TaskFilter{Status: status}, func(t *projection.Task) error {
			ov.Steps = append(ov.Steps, runningSteps(t)...)
			return nil
		})
		if err != nil {
			return err
		}
	}
	ov.Recent, err = recent(rq, flow.Filter{Project: rq.project}, overviewRecent)
	pg.Data = ov
	return err
}

// runningSteps are t's steps in progress.
func runningSteps(t *projection.Task) []stepRow {
	var out []stepRow
	done := 0
	for _, s := range t.Steps {
		if s.Status == projection.StepCompleted || s.Status == projection.StepSkipped {
			done++
		}
	}
	for _, s := range t.Steps {
		if s.Status == projection.StepInProgress {
			out = append(out, stepRow{Task: t, Step: s, Steps: len(t.Steps), Done: done})
		}
	}
	return out
}

// recent is the newest n events f selects up to the page's point, newest
// first, in words.
func recent(rq *request, f flow.Filter, n int) ([]activity, error) {
	f.Raw, f.Limit = true, n
	if f.UntilSeq == 0 || f.UntilSeq > rq.page.AtSeq {
		f.UntilSeq = rq.page.AtSeq
	}
	out := []activity{}
	if f.UntilSeq == 0 {
		return out, nil
	}
	err := rq.base.EventsBack(f, func(ev flow.Event) error {
		out = append(out, activityOf(ev))
		return nil
	})
	return out, err
}

// card is a task on the board.
type card struct {
	Task     *projection.Task
	Steps    int
	Done     int
	Claimed  string // actor of a live claim
	Progress int    // percent of the steps completed or skipped
}

// column is one status of the board: its first boardCards cards by
// priority, and how many more it has.
type column struct {
	Status string
	Cards  []card
	More   int
}

// boardCards is the most cards a column shows.
const boardCards = 200

// board is the board page's data.
type board struct {
	Columns []column
	Plans   []*projection.Plan
	Filter  boardFilter
	Shown   int
}

// boardFilter is the board's query: the CLI's task filters and a text.
type boardFilter struct {
	Plan, Owner, Tag, Q string
}

func (f boardFilter) Any() bool { return f.Plan != "" || f.Owner != "" || f.Tag != "" || f.Q != "" }

// matchText reports whether t's id, title or description holds q, in
// any case.
func matchText(t *projection.Task, q string) bool {
	if q == "" {
		return true
	}
	q = strings.ToLower(q)
	return strings.Contains(strings.ToLower(t.ID), q) || strings.Contains(strings.ToLower(t.Title), q) ||
		strings.Contains(strings.ToLower(t.Description), q)
}

func (u *ui) boardPage(rq *request) error {
	pg := rq.page
	pg.Name, pg.Title = "board", "Board · "+rq.project
	q := rq.r.URL.Query()
	f := boardFilter{Plan: q.Get("plan"), Owner: q.Get("owner"), Tag: q.Get("tag"), Q: strings.TrimSpace(q.Get("q"))}
	b := &board{Filter: f}
	tf := flow.TaskFilter{Owner: f.Owner, Tag: f.Tag}
	if f.Plan != "" {
		id, err := flow.ParsePlanID(f.Plan)
		if err != nil {
			return httpError{http.StatusBadRequest, err.Error()}
		}
		tf.Plan = id
	}
	for _, s := range statuses {
		b.Columns = append(b.Columns, column{Status: s, Cards: []card{}})
	}
	fill := b.indexed
	if f.Any() {
		fill = b.filtered
	}
	if err := fill(rq.eng, rq.project, tf); err != nil {
		return err
	}
	for i := range b.Columns {
		c := &b.Columns[i]
		slices.SortStableFunc(c.Cards, func(x, y card) int { return cmp.Compare(y.Task.Priority, x.Task.Priority) })
		if len(c.Cards) > boardCards {
			c.Cards, c.More = c.Cards[:boardCards], c.More+len(c.Cards)-boardCards
		}
		b.Shown += len(c.Cards) + c.More
	}
	var err error
	b.Plans, err = rq.eng.Plans(rq.project)
	pg.Data = b
	return err
}

// indexed fills the columns of an unfiltered board from the status
// index: each column's newest boardCards tasks by id are read, the others
// only counted, so that a project with thousands of done tasks reads a
// few hundred.
func (b *board) indexed(eng *flow.Engine, project string, _ flow.TaskFilter) error {
	now := eng.Now()
	return eng.Read(func(r *flow.Reader) error {
		for i := range b.Columns {
			c := &b.Columns[i]
			ids, err := r.TaskIDs(project, c.Status)
			if err != nil {
				return err
			}
			if len(ids) > boardCards {
				ids, c.More = ids[len(ids)-boardCards:], len(ids)-boardCards
			}
			for _, id := range ids {
				t, err := r.Task(project, id)
				if err != nil {
					return err
				}
				c.Cards = append(c.Cards, cardOf(t, now))
			}
		}
		return nil
	})
}

// filtered fills the columns with the tasks tf and the text select: the
// engine skips undecoded the tasks that cannot match tf.
func (b *board) filtered(eng *flow.Engine, project string, tf flow.TaskFilter) error {
	now := eng.Now()
	return eng.EachTask(project, tf, func(t *projection.Task) error {
		if !matchText(t, b.Filter.Q) {
			return nil
		}
		i := slices.IndexFunc(b.Columns, func(c column) bool { return c.Status == t.Status })
		if i < 0 { // a status this binary does not know: its own column
			b.Columns = append(b.Columns, column{Status: t.Status})
			i = len(b.Columns) - 1
		}
		b.Columns[i].Cards = append(b.Columns[i].Cards, cardOf(t, now))
		return nil
	})
}

func cardOf(t *projection.Task, now time.Time) card {
	c := card{Task: t, Steps: len(t.Steps)}
	for _, s := range t.Steps {
		if s.Status == projection.StepCompleted || s.Status == projection.StepSkipped {
			c.Done++
		}
	}
	c.Progress = percent(c.Done, c.Steps)
	if t.Claim.Live(now) {
		c.Claimed = t.Claim.Actor
	}
	return c
}
