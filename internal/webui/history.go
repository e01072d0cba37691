package webui

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flowctl/flowctl/digest"
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
)

// logPageSize is how many events one page of the history shows.
const logPageSize = 50

// logEvent is one event of the history: its line and its whole JSON, as
// `flowctl log -o json` prints it.
type logEvent struct {
	activity
	Stream  string
	Session string
	JSON    string
}

// logView is the history page's data.
type logView struct {
	Filter  logFilter
	Events  []logEvent
	Older   string // the address of the next page back, "" at the start
	Newest  bool   // the page starts at the head (or the page's point)
	Open    bool   // ?open=1: every event's JSON shown
	OpenURL string // this page with every event's JSON shown
	Error   string // a filter the engine refused
}

// logFilter is the history's query.
type logFilter struct {
	Type, Actor, Session, Task string
	Before                     uint64
}

func (u *ui) logPage(rq *request) error {
	pg := rq.page
	pg.Name, pg.Title = "log", "History · "+rq.project
	q := rq.r.URL.Query()
	lf := logFilter{Type: q.Get("type"), Actor: q.Get("actor"), Session: q.Get("session"), Task: q.Get("task")}
	v := &logView{Filter: lf, Events: []logEvent{}, Open: q.Get("open") == "1"}
	all := rq.r.URL.Query()
	all.Set("open", "1")
	v.OpenURL = rq.r.URL.Path + "?" + all.Encode()
	pg.Data = v
	if s := q.Get("before"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil || n == 0 {
			return httpError{http.StatusBadRequest, "before=" + s + ": give a seq (a whole number above 0)"}
		}
		lf.Before, v.Filter.Before = n, n
	}
	f := flow.Filter{Project: rq.project, Type: lf.Type, Actor: lf.Actor, Session: lf.Session, Raw: true, UntilSeq: pg.AtSeq,
		Limit: logPageSize + 1} // one more: is there an older page
	if lf.Type != "" {
		if err := flow.CheckTypePattern(lf.Type); err != nil {
			v.Error = "type " + lf.Type + ": " + err.Error()
			return nil
		}
	}
	if lf.Task != "" {
		id, err := flow.ParseTaskID(lf.Task)
		if err != nil {
			v.Error = err.Error()
			return nil
		}
		f.Stream = projection.TaskStream(rq.project, id)
	}
	v.Newest = lf.Before == 0
	if lf.Before != 0 && lf.Before-1 < f.UntilSeq {
		f.UntilSeq = lf.Before - 1
	}
	if f.UntilSeq == 0 {
		return nil
	}
	more := false
	err := rq.base.EventsBack(f, func(ev flow.Event) error {
		if len(v.Events) == logPageSize {
			more = true
			return flow.ErrStop
		}
		le, err := logEventOf(ev)
		v.Events = append(v.Events, le)
		return err
	})
	if err != nil {
		return err
	}
	if more {
		older := rq.r.URL.Query()
		older.Set("before", strconv.FormatUint(v.Events[len(v.Events)-1].Seq, 10))
		v.Older = rq.r.URL.Path + "?" + older.Encode()
	}
	return nil
}

func logEventOf(ev flow.Event) (logEvent, error) {
	le := logEvent{activity: activityOf(ev), Stream: ev.Stream, Session: ev.Session}
	ev.Raw = nil // log -o json leaves it out
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(ev); err != nil {
		return le, err
	}
	le.JSON = strings.TrimSuffix(b.String(), "\n")
	return le, nil
}

// checkpointsView is the checkpoints page's data.
type checkpointsView struct {
	Checkpoints []*projection.Checkpoint
	Preview     *flow.RollbackResult // the dry run of ?preview=, nil without
	PreviewTo   string
	Error       string
	All         bool // ?all=1: every change of the preview, not the first pageChanges
}

func (u *ui) checkpointsPage(rq *request) error {
	pg := rq.page
	pg.Name, pg.Title = "checkpoints", "Checkpoints · "+rq.project
	cs, err := rq.eng.Checkpoints(rq.project)
	if err != nil {
		return err
	}
	slices.Reverse(cs)
	v := &checkpointsView{Checkpoints: cs}
	pg.Data = v
	to := rq.r.URL.Query().Get("preview")
	if to == "" {
		return nil
	}
	v.PreviewTo = to
	if v.All, err = boolQuery(rq, "all"); err != nil {
		return err
	}
	p, err := flow.ParsePoint(to)
	if err != nil {
		v.Error = err.Error()
		return nil
	}
	limit := pageChanges
	if v.All {
		limit = 0
	}
	// A dry run reads; it compares the point with the head, whatever
	// point the page is at.
	v.Preview, err = rq.base.Rollback(flow.RollbackInput{Project: rq.project, To: p, DryRun: true, Limit: limit})
	if err != nil && flow.ErrorCode(err) != flow.CodeInternal {
		v.Error, err = err.Error(), nil
	}
	return err
}

// approvalsView is the approvals page's data: the pending ones (by id),
// then the newest approvalsDecided decided ones, newest first, and how
// many decided ones there are.
type approvalsView struct {
	Pending      []*projection.Approval
	Decided      []*projection.Approval
	DecidedTotal int
}

// approvalsDecided is how many decided approvals the page shows.
const approvalsDecided = 50

func (u *ui) approvalsPage(rq *request) error {
	pg := rq.page
	pg.Name, pg.Title = "approvals", "Approvals · "+rq.project
	v := &approvalsView{Pending: []*projection.Approval{}, Decided: []*projection.Approval{}}
	pg.Data = v
	return rq.eng.Read(func(r *flow.Reader) error {
		ids, err := r.ApprovalIDs(rq.project, projection.ApprovalPending)
		if err != nil {
			return err
		}
		if v.Pending, err = readApprovals(r, rq.project, ids); err != nil {
			return err
		}
		var decided []string
		for _, status := range []string{projection.ApprovalGranted, projection.ApprovalDenied} {
			ids, err := r.ApprovalIDs(rq.project, status)
			if err != nil {
				return err
			}
			v.DecidedTotal += len(ids)
			decided = append(decided, ids[max(0, len(ids)-approvalsDecided):]...)
		}
		slices.SortFunc(decided, func(a, b string) int { return projection.CompareIDs(b, a) })
		v.Decided, err = readApprovals(r, rq.project, decided[:min(len(decided), approvalsDecided)])
		return err
	})
}

// readApprovals reads the approvals ids names, in their order.
func readApprovals(r *flow.Reader, project string, ids []string) ([]*projection.Approval, error) {
	out := make([]*projection.Approval, 0, len(ids))
	now := time.Now() // a pending request past its expiry shows as expired
	for _, id := range ids {
		a, err := r.Approval(project, id)
		if err != nil {
			return nil, err
		}
		out = append(out, flow.ApprovalShown(a, now))
	}
	return out, nil
}

// statsTaskLimit is how many tasks the stats page lists unless asked for
// all (?tasks=all): a project of thousands of tasks is a page of
// megabytes that takes longer to render than a page may.
const statsTaskLimit = 100

// statsView is the stats page's data: digest's stats and their bars.
type statsView struct {
	Stats    *digest.ExecStats
	Chart    chart // per tool
	Commands chart // per command
	// Tasks are the first statsTaskLimit of Stats.Tasks, or all of them.
	Tasks []digest.TaskStats
	All   bool // ?tasks=all
}

func (u *ui) statsPage(rq *request) error {
	pg := rq.page
	pg.Name, pg.Title = "stats", "Stats · "+rq.project
	v := &statsView{}
	switch q := rq.r.URL.Query().Get("tasks"); q {
	case "", "first":
	case "all":
		v.All = true
	default:
		return httpError{http.StatusBadRequest, "tasks=" + q + ": use all (or leave it out: the first " + strconv.Itoa(statsTaskLimit) + ")"}
	}
	opts := digest.StatsOptions{TaskLimit: statsTaskLimit} // only those listed are counted and titled
	if v.All {
		opts.TaskLimit = 0
	}
	st, err := digest.Stats(rq.eng, rq.project, opts)
	if err != nil {
		return err
	}
	v.Stats, v.Chart, v.Commands, v.Tasks = st, toolChart(st.Tools), commandChart(st.Commands), st.Tasks
	pg.Data = v
	return nil
}

// pageChanges is how many changes the diff page and a rollback preview
// list at a time: a diff of a busy project is thousands of entities.
const pageChanges = 100

// diffView is the diff page's data.
type diffView struct {
	A, B   string
	Result *digest.DiffResult
	Error  string
	Offset int // ?offset=: the changes skipped before this page
	All    bool
	Next   int // the next page's offset; 0: none
}

func (u *ui) diffPage(rq *request) error {
	pg := rq.page
	pg.Name, pg.Title = "diff", "Diff · "+rq.project
	q := rq.r.URL.Query()
	v := &diffView{A: strings.TrimSpace(q.Get("a")), B: strings.TrimSpace(q.Get("b"))}
	pg.Data = v
	if v.A == "" && v.B == "" {
		return nil
	}
	if v.B == "" {
		v.B = strconv.FormatUint(pg.Seq, 10)
	}
	a, err := flow.ParsePoint(v.A)
	if err != nil {
		v.Error = "a: " + err.Error()
		return nil
	}
	b, err := flow.ParsePoint(v.B)
	if err != nil {
		v.Error = "b: " + err.Error()
		return nil
	}
	limit := pageChanges
	if v.All, err = boolQuery(rq, "all"); err != nil {
		return err
	}
	if v.All {
		limit = 0
	}
	if s := q.Get("offset"); s != "" {
		if v.Offset, err = strconv.Atoi(s); err != nil || v.Offset < 0 {
			return httpError{http.StatusBadRequest, "offset=" + s + ": must be a whole number, 0 or more"}
		}
	}
	v.Result, err = digest.DiffPage(rq.base, rq.project, a, b, v.Offset, limit)
	if err != nil && flow.ErrorCode(err) != flow.CodeInternal {
		v.Error, err = err.Error(), nil
	}
	if v.Result != nil && v.Result.Truncated {
		v.Next = v.Offset + len(v.Result.Changes)
	}
	return err
}

// boolQuery is the query parameter name as a bool (absent: false); a
// value that is not one is a 400.
func boolQuery(rq *request, name string) (bool, error) {
	s := rq.r.URL.Query().Get(name)
	if s == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, httpError{http.StatusBadRequest, name + "=" + s + ": must be true or false"}
	}
	return b, nil
}
