package flow

import (
	"time"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/projection"
)

// Status is the overview of one project: what `flowctl status` prints.
// Every list is sorted by id and never nil.
type Status struct {
	Project          string         `json:"project"`
	Archived         bool           `json:"archived"`
	HeadSeq          uint64         `json:"head_seq"` // the log's head when the status was read
	Tasks            TaskCounts     `json:"tasks"`
	Ready            []TaskBrief    `json:"ready"`
	Blocked          []BlockedTask  `json:"blocked"`
	PendingApprovals []PendingBrief `json:"pending_approvals"`
	Claims           []LiveClaim    `json:"claims"`
	Plans            PlanCounts     `json:"plans"`
	Execs            ExecCounts     `json:"execs"`
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
	return e.view(func(tx *eventlog.Tx) error {
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
	tasks, err := src.Tasks(project)
	if err != nil {
		return nil, err
	}
	st.addTasks(tasks, actor, now)
	if err := st.addApprovals(src, project); err != nil {
		return nil, err
	}
	if err := st.addPlans(src, project); err != nil {
		return nil, err
	}
	return st, st.addExecs(src, project)
}

// addTasks counts tasks and sorts them into ready, blocked and claimed.
func (st *Status) addTasks(tasks []*projection.Task, actor string, now time.Time) {
	st.Ready, st.Blocked, st.Claims = []TaskBrief{}, []BlockedTask{}, []LiveClaim{}
	status := statusByID(tasks)
	for _, t := range tasks {
		st.Tasks.add(t.Status)
		if len(notReady(t, status, actor, now)) == 0 {
			st.Ready = append(st.Ready, briefOf(t))
		}
		if waiting := openDepIDs(t, status); t.Status == projection.StatusBlocked ||
			(t.Status == projection.StatusTodo && len(waiting) > 0) {
			st.Blocked = append(st.Blocked, BlockedTask{TaskBrief: briefOf(t), WaitingFor: waiting})
		}
		if t.Claim.Live(now) {
			c := t.Claim
			st.Claims = append(st.Claims, LiveClaim{Task: t.ID, Title: t.Title, Actor: c.Actor, Session: c.Session, LeaseUntil: c.LeaseUntil})
		}
	}
}

// statusByID maps task ids to their status.
func statusByID(tasks []*projection.Task) map[string]string {
	m := make(map[string]string, len(tasks))
	for _, t := range tasks {
		m[t.ID] = t.Status
	}
	return m
}

func (c *TaskCounts) add(status string) {
	c.Total++
	switch status {
	case projection.StatusTodo:
		c.Todo++
	case projection.StatusDoing:
		c.Doing++
	case projection.StatusDone:
		c.Done++
	case projection.StatusBlocked:
		c.Blocked++
	case projection.StatusCancelled:
		c.Cancelled++
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

func (st *Status) addApprovals(src source, project string) error {
	st.PendingApprovals = []PendingBrief{}
	all, err := src.Approvals(project)
	for _, a := range all {
		if a.Status == projection.ApprovalPending {
			st.PendingApprovals = append(st.PendingApprovals, PendingBrief{
				ID: a.ID, Task: a.Task, Step: a.Step, Message: a.Message,
				RequestedBy: a.RequestedBy, RequestedAt: a.CreatedAt, Expires: a.Expires,
			})
		}
	}
	return err
}

func (st *Status) addPlans(src source, project string) error {
	all, err := src.Plans(project)
	for _, p := range all {
		if p.Status == "closed" {
			st.Plans.Closed++
		} else {
			st.Plans.Open++
		}
	}
	return err
}

func (st *Status) addExecs(src source, project string) error {
	all, err := src.Execs(project)
	for _, x := range all {
		st.Execs.Total++
		if !x.Success {
			st.Execs.Failed++
		}
	}
	return err
}
