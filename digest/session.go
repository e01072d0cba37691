package digest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
)

// SessionReport is what one session did: the events appended by the
// engines opened with that session (seed 002's SessionWorkflow report),
// grouped for people.
type SessionReport struct {
	Session   string         `json:"session"`
	Project   string         `json:"project,omitempty"` // only this project's events; "": every project's
	Actors    []string       `json:"actors"`
	Events    int            `json:"events"`
	FirstSeq  uint64         `json:"first_seq"`
	LastSeq   uint64         `json:"last_seq"`
	FirstTime time.Time      `json:"first_time"`
	LastTime  time.Time      `json:"last_time"`
	Seconds   float64        `json:"seconds"` // time spent: the last event's time less the first's
	Tasks     []SessionTask  `json:"tasks"`   // touched, in the order first touched
	Steps     []SessionEvent `json:"steps"`
	Approvals []SessionEvent `json:"approvals"`
	Execs     []SessionEvent `json:"execs"`
	Checkpts  []SessionEvent `json:"checkpoints"`
	Markdown  string         `json:"markdown"`

	projects map[string]bool // seen
}

// SessionTask is a task a session touched.
type SessionTask struct {
	Project string `json:"project"`
	Task    string `json:"task"`
	Title   string `json:"title"`
	Events  int    `json:"events"` // of the session, on the task's stream
	Status  string `json:"status"` // now
}

// SessionEvent is one event of a session, summarised.
type SessionEvent struct {
	Seq     uint64    `json:"seq"`
	Time    time.Time `json:"time"`
	Project string    `json:"project"`
	Subject string    `json:"subject"` // T-3, or the project for its own stream
	Type    string    `json:"type"`
	Summary string    `json:"summary"`
}

// ReportSession reports what session did, in project (or in every
// project when project is ""). A session without an event is
// flow.ErrNotFound.
func ReportSession(eng *flow.Engine, project, session string) (*SessionReport, error) {
	r := &SessionReport{Session: session, Project: project, Actors: []string{}, Tasks: []SessionTask{},
		Steps: []SessionEvent{}, Approvals: []SessionEvent{}, Execs: []SessionEvent{}, Checkpts: []SessionEvent{}}
	at := map[string]int{} // project/task -> index in Tasks
	err := eng.Events(flow.Filter{Session: session, Project: project, Raw: true}, func(ev flow.Event) error {
		r.add(ev, at)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if r.Events == 0 {
		return nil, fmt.Errorf("%w: session %q has no event%s", flow.ErrNotFound, session, inProject(project))
	}
	r.Seconds = r.LastTime.Sub(r.FirstTime).Seconds()
	if err := r.fillTasks(eng); err != nil {
		return nil, err
	}
	r.Markdown = r.markdown()
	return r, nil
}

func inProject(project string) string {
	if project == "" {
		return ""
	}
	return " in project " + project
}

func (r *SessionReport) add(ev flow.Event, at map[string]int) {
	if r.Events == 0 {
		r.FirstSeq, r.FirstTime = ev.Seq, ev.Time
	}
	r.Events++
	r.LastSeq, r.LastTime = ev.Seq, ev.Time
	if r.projects == nil {
		r.projects = map[string]bool{}
	}
	r.projects[ev.Project] = true
	if !slices.Contains(r.Actors, ev.Actor) {
		r.Actors = append(r.Actors, ev.Actor)
	}
	kind, _, id, ok := projection.ParseStream(ev.Stream)
	if ok && kind == projection.KindTask {
		key := ev.Project + "/" + id
		i, seen := at[key]
		if !seen {
			i = len(r.Tasks)
			at[key] = i
			r.Tasks = append(r.Tasks, SessionTask{Project: ev.Project, Task: id})
		}
		r.Tasks[i].Events++
	}
	se := SessionEvent{Seq: ev.Seq, Time: ev.Time, Project: ev.Project, Subject: Subject(ev), Type: ev.Type, Summary: Summary(ev)}
	switch ev.Type {
	case projection.TypeStepAdded, projection.TypeStepStatusChanged:
		r.Steps = append(r.Steps, se)
	case projection.TypeApprovalRequested, projection.TypeApprovalDecided:
		r.Approvals = append(r.Approvals, se)
	case projection.TypeExecRecorded:
		r.Execs = append(r.Execs, se)
	case projection.TypeCheckpointCreated:
		if se.Summary == "" {
			var p struct{ ID, Label string }
			_ = json.Unmarshal(ev.Data, &p) // a checkpoint that does not decode: no summary
			se.Summary = mdJoin(p.ID, p.Label)
		}
		r.Checkpts = append(r.Checkpts, se)
	}
}

// fillTasks reads the touched tasks' titles and statuses as they are now
// (a task a rollback removed keeps neither).
func (r *SessionReport) fillTasks(eng *flow.Engine) error {
	return eng.Read(func(rd *flow.Reader) error {
		for i := range r.Tasks {
			t := &r.Tasks[i]
			task, err := rd.Task(t.Project, t.Task)
			if flow.ErrorCode(err) == flow.CodeNotFound {
				t.Status = "removed"
				continue
			} else if err != nil {
				return err
			}
			t.Title, t.Status = task.Title, task.Status
		}
		return nil
	})
}

func (r *SessionReport) markdown() string {
	var d mdDoc
	d.line("# Session %s\n", mdLine(r.Session))
	d.table("", []string{"field", "value"}, [][]string{
		{"actors", strings.Join(r.Actors, ", ")},
		{"events", fmt.Sprintf("%d (seq %d to %d)", r.Events, r.FirstSeq, r.LastSeq)},
		{"from", mdTime(r.FirstTime)},
		{"to", mdTime(r.LastTime)},
		{"time spent", (time.Duration(r.Seconds) * time.Second).String()},
	})
	d.section("Tasks touched")
	rows := make([][]string, len(r.Tasks))
	for i, t := range r.Tasks {
		rows[i] = []string{r.qualify(t.Project, t.Task), t.Title, t.Status, strconv.Itoa(t.Events)}
	}
	d.table("none", []string{"task", "title", "status", "events"}, rows)
	for _, part := range []struct {
		title string
		evs   []SessionEvent
	}{{"Steps", r.Steps}, {"Approvals", r.Approvals}, {"Exec records", r.Execs}, {"Checkpoints", r.Checkpts}} {
		d.section(part.title)
		rows := make([][]string, len(part.evs))
		for i, ev := range part.evs {
			rows[i] = []string{strconv.FormatUint(ev.Seq, 10), mdTime(ev.Time), r.qualify(ev.Project, ev.Subject), mdClip(mdLine(ev.Summary), 120)}
		}
		d.table("none", []string{"seq", "time", "subject", "what"}, rows)
	}
	return d.String()
}

// qualify names an entity with its project when the session's events
// are of more than one project.
func (r *SessionReport) qualify(project, id string) string {
	if len(r.projects) < 2 || project == id {
		return id
	}
	return project + "/" + id
}
