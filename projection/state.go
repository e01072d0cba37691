package projection

import (
	"strconv"
	"time"
)

// Time is a point in time as unix nanoseconds: deterministic in msgpack,
// RFC 3339 (UTC) in JSON. The zero Time is "never".
type Time int64

// TimeOf converts t.
func TimeOf(t time.Time) Time { return Time(t.UnixNano()) }

// Std returns t as a time.Time in UTC.
func (t Time) Std() time.Time { return time.Unix(0, int64(t)).UTC() }

// IsZero reports whether t is unset.
func (t Time) IsZero() bool { return t == 0 }

// MarshalJSON writes an RFC 3339 time, or null when unset.
func (t Time) MarshalJSON() ([]byte, error) {
	if t == 0 {
		return []byte("null"), nil
	}
	return []byte(strconv.Quote(t.Std().Format(time.RFC3339Nano))), nil
}

// UnmarshalJSON reads an RFC 3339 time or null.
func (t *Time) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*t = 0
		return nil
	}
	s, err := strconv.Unquote(string(b))
	if err != nil {
		return err
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return err
	}
	*t = TimeOf(v)
	return nil
}

// JSON is a JSON text kept as a string (validated before it is stored);
// it is written into JSON output as the value itself, not as a string.
type JSON string

// MarshalJSON writes the JSON text itself, or null when empty.
func (j JSON) MarshalJSON() ([]byte, error) {
	if j == "" {
		return []byte("null"), nil
	}
	return []byte(j), nil
}

// Meta is what every projected entity records about its stream.
type Meta struct {
	Version   uint64 `msgpack:"version" json:"version"` // stream version: the --if-version to give
	Seq       uint64 `msgpack:"seq" json:"seq"`         // seq of the last event that changed it
	CreatedAt Time   `msgpack:"created_at" json:"created_at"`
	CreatedBy string `msgpack:"created_by" json:"created_by"`
	UpdatedAt Time   `msgpack:"updated_at" json:"updated_at"`
}

// Counters hold the last short id number used per kind in a project.
//
//codec:decode,append
type Counters struct {
	Plans       int `msgpack:"plans" json:"plans"`
	Tasks       int `msgpack:"tasks" json:"tasks"`
	Approvals   int `msgpack:"approvals" json:"approvals"`
	Execs       int `msgpack:"execs" json:"execs"`
	Checkpoints int `msgpack:"checkpoints" json:"checkpoints"`
	// Parents counts the parent links ever made in the project (a task
	// created or moved under a parent): while it is 0, no task has
	// children, and the engine looks for none.
	Parents int `msgpack:"parents,omitempty" json:"parents"`
}

// Project is the projection of stream project/<name>.
//
//codec:decode,append
type Project struct {
	Name        string   `msgpack:"name" json:"name"`
	Description string   `msgpack:"description,omitempty" json:"description,omitempty"`
	Archived    bool     `msgpack:"archived" json:"archived"`
	Counters    Counters `msgpack:"counters" json:"counters"`
	Events      uint64   `msgpack:"events" json:"events"` // events of the project folded so far
	// Settings are the project's settings that differ from their
	// defaults, sorted by key (project.setting_changed).
	Settings []Setting `msgpack:"settings,omitempty" json:"settings,omitempty"`
	// Origin is where a fork started; nil for a project that is not one.
	Origin *Origin `msgpack:"origin,omitempty" json:"origin,omitempty"`
	Meta
}

// Setting is one project setting.
//
//codec:decode,append
type Setting struct {
	Key   string `msgpack:"key" json:"key"`
	Value string `msgpack:"value" json:"value"`
}

// Setting returns the value of a project setting, "" when unset.
func (p *Project) Setting(key string) string {
	for _, s := range p.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

// Plan is the projection of stream plan/<project>/<P-n>.
//
//codec:decode,append
type Plan struct {
	Project     string `msgpack:"project" json:"project"`
	ID          string `msgpack:"id" json:"id"`
	Title       string `msgpack:"title" json:"title"`
	Description string `msgpack:"description,omitempty" json:"description,omitempty"`
	Status      string `msgpack:"status" json:"status"` // open | closed
	Meta
}

// Task statuses.
const (
	StatusTodo      = "todo"
	StatusDoing     = "doing"
	StatusDone      = "done"
	StatusBlocked   = "blocked"
	StatusCancelled = "cancelled"
)

// Step statuses.
const (
	StepPending    = "pending"
	StepInProgress = "in_progress"
	StepCompleted  = "completed"
	StepFailed     = "failed"
	StepSkipped    = "skipped"
)

// Approval statuses.
const (
	ApprovalPending = "pending"
	ApprovalGranted = "granted"
	ApprovalDenied  = "denied"
)

// Claim is a lease on a task by an actor (and session).
//
//codec:decode,append
type Claim struct {
	Actor      string `msgpack:"actor" json:"actor"`
	Session    string `msgpack:"session,omitempty" json:"session,omitempty"`
	LeaseUntil Time   `msgpack:"lease_until" json:"lease_until"`
	ClaimedAt  Time   `msgpack:"claimed_at" json:"claimed_at"`
}

// Live reports whether the lease still holds at now.
func (c *Claim) Live(now time.Time) bool {
	return c != nil && now.Before(c.LeaseUntil.Std())
}

// Step is one execution step of a task. StartedAt is the time of the
// move that started its current attempt, CompletedAt that of the move
// that ended it (completed, failed or skipped); Attempt is 1 on its first
// start and grows by one with each retry (0 while it never started).
// ResultData is a structured result (JSON) beside the text of Result.
//
//codec:decode,append
type Step struct {
	ID          string `msgpack:"id" json:"id"`
	Title       string `msgpack:"title" json:"title"`
	Status      string `msgpack:"status" json:"status"`
	Progress    int    `msgpack:"progress" json:"progress"`
	Note        string `msgpack:"note,omitempty" json:"note,omitempty"`
	Result      string `msgpack:"result,omitempty" json:"result,omitempty"`
	Error       string `msgpack:"error,omitempty" json:"error,omitempty"`
	UpdatedAt   Time   `msgpack:"updated_at" json:"updated_at"`
	StartedAt   Time   `msgpack:"started_at,omitempty" json:"started_at"`
	CompletedAt Time   `msgpack:"completed_at,omitempty" json:"completed_at"`
	Attempt     int    `msgpack:"attempt,omitempty" json:"attempt"`
	ResultData  JSON   `msgpack:"result_data,omitempty" json:"result_data,omitempty"`
}

// Task is the projection of stream task/<project>/<T-n>.
//
//codec:decode,append
type Task struct {
	Project          string   `msgpack:"project" json:"project"`
	ID               string   `msgpack:"id" json:"id"`
	Plan             string   `msgpack:"plan,omitempty" json:"plan,omitempty"`
	Title            string   `msgpack:"title" json:"title"`
	Description      string   `msgpack:"description,omitempty" json:"description,omitempty"`
	Status           string   `msgpack:"status" json:"status"`
	Owner            string   `msgpack:"owner,omitempty" json:"owner,omitempty"`
	Tags             []string `msgpack:"tags" json:"tags"`
	Priority         int      `msgpack:"priority" json:"priority"`
	Deps             []string `msgpack:"deps" json:"deps"` // sorted by number
	Ref              string   `msgpack:"ref,omitempty" json:"ref,omitempty"`
	Claim            *Claim   `msgpack:"claim" json:"claim"`
	Steps            []Step   `msgpack:"steps" json:"steps"`
	Context          JSON     `msgpack:"context" json:"context"` // canonical JSON object
	ContextVersion   int      `msgpack:"context_version" json:"context_version"`
	PendingApprovals []string `msgpack:"pending_approvals" json:"pending_approvals"`
	Notes            int      `msgpack:"notes" json:"notes"`
	Execs            int      `msgpack:"execs" json:"execs"`
	Forced           bool     `msgpack:"forced,omitempty" json:"forced,omitempty"` // last done was forced
	// Parent is the task this one is a subtask of. A task's children are
	// not kept on it: they are the tasks whose Parent it is (an event
	// changes only the entity of its stream), found by the engine.
	Parent string `msgpack:"parent,omitempty" json:"parent,omitempty"`
	Due    Time   `msgpack:"due,omitempty" json:"due"` // zero for none
	Meta
}

// Step returns the step with id, or nil.
func (t *Task) Step(id string) *Step {
	for i := range t.Steps {
		if t.Steps[i].ID == id {
			return &t.Steps[i]
		}
	}
	return nil
}

// Approval is the projection of an approval request and its decision.
//
//codec:decode,append
type Approval struct {
	Project     string `msgpack:"project" json:"project"`
	ID          string `msgpack:"id" json:"id"`
	Task        string `msgpack:"task,omitempty" json:"task,omitempty"`
	Step        string `msgpack:"step,omitempty" json:"step,omitempty"`
	Message     string `msgpack:"message" json:"message"`
	Code        string `msgpack:"code,omitempty" json:"code,omitempty"`
	Action      JSON   `msgpack:"action,omitempty" json:"action,omitempty"`
	ActionHash  string `msgpack:"action_hash" json:"action_hash"`
	Expires     Time   `msgpack:"expires" json:"expires"`
	Status      string `msgpack:"status" json:"status"`
	RequestedBy string `msgpack:"requested_by" json:"requested_by"`
	DecidedBy   string `msgpack:"decided_by,omitempty" json:"decided_by,omitempty"`
	Comment     string `msgpack:"comment,omitempty" json:"comment,omitempty"`
	DecidedAt   Time   `msgpack:"decided_at" json:"decided_at"`
	// UsedAt and UsedBy record the one use of a granted approval
	// (approval.consumed); zero while unused.
	UsedAt Time   `msgpack:"used_at,omitempty" json:"used_at,omitempty"`
	UsedBy string `msgpack:"used_by,omitempty" json:"used_by,omitempty"`
	Meta
}

// Exec is the projection of one exec record.
//
//codec:decode,append
type Exec struct {
	Project string `msgpack:"project" json:"project"`
	ExecRecorded
	Actor string `msgpack:"actor" json:"actor"`
	Meta
}

// Checkpoint is a named point in a project's history.
//
//codec:decode,append
type Checkpoint struct {
	Project string `msgpack:"project" json:"project"`
	ID      string `msgpack:"id" json:"id"`
	Label   string `msgpack:"label,omitempty" json:"label,omitempty"`
	AtSeq   uint64 `msgpack:"at_seq" json:"at_seq"` // the state it marks: everything up to this seq
	Task    string `msgpack:"task,omitempty" json:"task,omitempty"`
	GitHead string `msgpack:"git_head,omitempty" json:"git_head,omitempty"`
	Meta
}

// EntityID returns the entity's short id; the kinds of a project share it
// as their key within the project.
func (p *Plan) EntityID() string       { return p.ID }
func (t *Task) EntityID() string       { return t.ID }
func (a *Approval) EntityID() string   { return a.ID }
func (x *Exec) EntityID() string       { return x.ID }
func (c *Checkpoint) EntityID() string { return c.ID }
