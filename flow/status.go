package flow

import (
	"cmp"
	"slices"
	"time"

	"github.com/flowctl/flowctl/flow/internal/projstore"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
)

// Status is the overview of one project: what `flowctl status` prints.
// Every list is sorted by id (Overdue by due date) and never nil.
type Status struct {
	Project          string         `json:"project"`
	Archived         bool           `json:"archived"`
	HeadSeq          uint64         `json:"head_seq"` // the log's head when the status was read
	Tasks            TaskCounts     `json:"tasks"`
	Ready            []TaskBrief    `json:"ready"`
	Blocked          []BlockedTask  `json:"blocked"`
	PendingApprovals []PendingBrief `json:"pending_approvals"`
	Claims           []LiveClaim    `json:"claims"`
	// Overdue are the open tasks (todo, doing, blocked) past their due
	// date, soonest due first; OverdueCount is how many.
	Overdue      []DueTask  `json:"overdue"`
	OverdueCount int        `json:"overdue_count"`
	Plans        PlanCounts `json:"plans"`
	Execs        ExecCounts `json:"execs"`
}

// TaskCounts counts a project's tasks by status; every status is present.
type TaskCounts struct {
	Total     int `json:"total"`
	Todo      int `json:"todo"`
	Doing     int `json:"doing"`
	Done      int `json:"done"`
	Blocked   int `json:"blocked"`
	Cancelled int `json:"cancelled"`
}

// TaskBrief names a task.
type TaskBrief struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Status   string `json:"status"`
	Priority int    `json:"priority"`
}

// DueTask is a task with its due date.
type DueTask struct {
	TaskBrief
	Due projection.Time `json:"due"`
}

// BlockedTask is a task that cannot go on: its status is blocked, or it is
// todo and waits for dependencies that are not done (WaitingFor, as ids).
type BlockedTask struct {
	TaskBrief
	WaitingFor []string `json:"waiting_for"`
}

// PendingBrief is an approval that waits for a decision.
type PendingBrief struct {
	ID          string          `json:"id"`
	Task        string          `json:"task,omitempty"`
	Step        string          `json:"step,omitempty"`
	Message     string          `json:"message"`
	RequestedBy string          `json:"requested_by"`
	RequestedAt projection.Time `json:"requested_at"`
	Expires     projection.Time `json:"expires"`
	Status      string          `json:"status"` // pending, or expired past Expires (by the engine's clock)
}

// LiveClaim is a claim whose lease still holds.
type LiveClaim struct {
	Task       string          `json:"task"`
	Title      string          `json:"title"`
	Actor      string          `json:"actor"`
	Session    string          `json:"session,omitempty"`
	LeaseUntil projection.Time `json:"lease_until"`
}

// PlanCounts counts a project's plans.
type PlanCounts struct {
	Open   int `json:"open"`
	Closed int `json:"closed"`
}

// ExecCounts counts a project's exec records; Failed have success false.
type ExecCounts struct {
	Total  int `json:"total"`
	Failed int `json:"failed"`
}

// Status returns the overview of a project, read in one transaction, as
// seen by the engine's actor (see StatusFor).
func (e *Engine) Status(project string) (*Status, error) {
	return e.StatusFor(project, e.opts.Actor)
}

// StatusFor returns the overview of a project as seen by actor: ready
// tasks follow the rule of ReadyFor, so actor's own live claims do not
// keep a task from being ready. It returns ErrNotFound for an unknown
// project.
func (e *Engine) StatusFor(project, actor string) (*Status, error) {
	var out *Status
	err := e.readHead(func(src source, head uint64) error {
		var err error
		out, err = statusOf(src, project, actor, head, e.opts.Now())
		return err
	})
	return out, err
}

// readHead runs fn on the projections in one read transaction, with the
// head seq that transaction sees, so that the events up to head and the
// projections tell one story.
func (e *Engine) readHead(fn func(src source, head uint64) error) error {
	return e.view(func(tx store.Tx) error {
		if e.at != nil {
			src, seq, err := e.atState(tx)
			if err != nil {
				return err
			}
			return fn(src, seq)
		}
		head, _ := tx.Head()
		return e.readTx(tx, func(src source) error { return fn(src, head) })
	})
}

func statusOf(src source, project, actor string, head uint64, now time.Time) (*Status, error) {
	p, err := mustProject(src, project)
	if err != nil {
		return nil, err
	}
	st := &Status{Project: p.Name, Archived: p.Archived, HeadSeq: head}
	if err := st.addTasks(src, project, actor, now); err != nil {
		return nil, err
	}
	if err := st.addApprovals(src, project, now); err != nil {
		return nil, err
	}
	if err := st.addPlans(src, project); err != nil {
		return nil, err
	}
	return st, st.addExecs(src, project)
}

// addTasks counts tasks and sorts them into ready, blocked, claimed and
// overdue. It counts from the summary index and decodes only the tasks
// that can be ready, blocked or overdue (todo, doing, blocked) or hold a
// live claim.
func (st *Status) addTasks(src source, project, actor string, now time.Time) error {
	st.Ready, st.Blocked, st.Claims, st.Overdue = []TaskBrief{}, []BlockedTask{}, []LiveClaim{}, []DueTask{}
	counts, err := src.SummaryCounts(projstore.BucketTasks, project)
	if err != nil {
		return err
	}
	for status, n := range counts {
		st.Tasks.add(status, n)
	}
	var ids []string
	for _, status := range []string{projection.StatusTodo, projection.StatusDoing, projection.StatusBlocked} {
		more, err := src.SummaryIDs(projstore.BucketTasks, project, status)
		if err != nil {
			return err
		}
		ids = append(ids, more...)
	}
	claimed, err := src.ClaimedTaskIDs(project, now)
	if err != nil {
		return err
	}
	tasks, status, err := summarizedTasks(src, project, projstore.SortIDs(slices.Compact(projstore.SortIDs(append(ids, claimed...)))))
	if err != nil {
		return err
	}
	for _, t := range tasks {
		st.addTask(t, status, actor, now)
	}
	st.sortOverdue()
	return nil
}

// sortOverdue puts the overdue tasks in order, soonest due first (then by
// id), and counts them.
func (st *Status) sortOverdue() {
	slices.SortStableFunc(st.Overdue, func(a, b DueTask) int { return cmp.Compare(a.Due, b.Due) })
	st.OverdueCount = len(st.Overdue)
}

func (st *Status) addTask(t *projection.Task, status map[string]string, actor string, now time.Time) {
	if len(notReady(t, status, actor, now)) == 0 {
		st.Ready = append(st.Ready, briefOf(t))
	}
	if waiting := openDepIDs(t, status); t.Status == projection.StatusBlocked ||
		(t.Status == projection.StatusTodo && len(waiting) > 0) {
		st.Blocked = append(st.Blocked, BlockedTask{TaskBrief: briefOf(t), WaitingFor: waiting})
	}
	if Overdue(t, now) {
		st.Overdue = append(st.Overdue, DueTask{TaskBrief: briefOf(t), Due: t.Due})
	}
	if t.Claim.Live(now) {
		c := t.Claim
		st.Claims = append(st.Claims, LiveClaim{Task: t.ID, Title: t.Title, Actor: c.Actor, Session: c.Session, LeaseUntil: c.LeaseUntil})
	}
}

// summarizedTasks reads the tasks ids of project, which the summary index
// lists, and the statuses of them and of their dependencies. A listed
// task that is missing means the index and the projections disagree.
func summarizedTasks(src source, project string, ids []string) ([]*projection.Task, map[string]string, error) {
	tasks := make([]*projection.Task, 0, len(ids))
	status := map[string]string{}
	for _, id := range ids {
		t, err := src.Task(project, id)
		if err == nil && t == nil {
			err = projstore.DamagedEntry(projstore.BucketTasks, projection.Key(project, id), "lists a task the projections do not hold")
		}
		if err != nil {
			return nil, nil, err
		}
		tasks = append(tasks, t)
		status[t.ID] = t.Status
	}
	for _, t := range tasks {
		for _, d := range t.Deps {
			if _, ok := status[d]; ok {
				continue
			}
			s, err := src.SummaryStatus(projstore.BucketTasks, project, d)
			if err != nil {
				return nil, nil, err
			}
			status[d] = s
		}
	}
	return tasks, status, nil
}

// statusByID maps task ids to their status.
func statusByID(tasks []*projection.Task) map[string]string {
	m := make(map[string]string, len(tasks))
	for _, t := range tasks {
		m[t.ID] = t.Status
	}
	return m
}

// add counts n tasks of status.
func (c *TaskCounts) add(status string, n int) {
	c.Total += n
	switch status {
	case projection.StatusTodo:
		c.Todo += n
	case projection.StatusDoing:
		c.Doing += n
	case projection.StatusDone:
		c.Done += n
	case projection.StatusBlocked:
		c.Blocked += n
	case projection.StatusCancelled:
		c.Cancelled += n
	}
}

func briefOf(t *projection.Task) TaskBrief {
	return TaskBrief{ID: t.ID, Title: t.Title, Status: t.Status, Priority: t.Priority}
}

// openDepIDs lists t's dependencies that are not done; never nil.
func openDepIDs(t *projection.Task, status map[string]string) []string {
	open := []string{}
	for _, d := range t.Deps {
		if status[d] != projection.StatusDone {
			open = append(open, d)
		}
	}
	return open
}

func (st *Status) addApprovals(src source, project string, now time.Time) error {
	st.PendingApprovals = []PendingBrief{}
	ids, err := src.SummaryIDs(projstore.BucketApprovals, project, projection.ApprovalPending)
	if err != nil {
		return err
	}
	for _, id := range ids {
		a, err := src.Approval(project, id)
		if err == nil && a == nil {
			err = projstore.DamagedEntry(projstore.BucketApprovals, projection.Key(project, id), "lists an approval the projections do not hold")
		}
		if err != nil {
			return err
		}
		st.PendingApprovals = append(st.PendingApprovals, PendingBrief{
			ID: a.ID, Task: a.Task, Step: a.Step, Message: a.Message,
			RequestedBy: a.RequestedBy, RequestedAt: a.CreatedAt, Expires: a.Expires,
			Status: shown(a, now).Status,
		})
	}
	return nil
}

func (st *Status) addPlans(src source, project string) error {
	counts, err := src.SummaryCounts(projstore.BucketPlans, project)
	for status, n := range counts {
		if status == "closed" {
			st.Plans.Closed += n
		} else {
			st.Plans.Open += n
		}
	}
	return err
}

func (st *Status) addExecs(src source, project string) error {
	counts, err := src.SummaryCounts(projstore.BucketExecs, project)
	for status, n := range counts {
		st.Execs.Total += n
		if status != "ok" {
			st.Execs.Failed += n
		}
	}
	return err
}
