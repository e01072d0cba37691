package projection

import "slices"

// Event types, as stored. Names are never renumbered or reused; payload
// fields are added, never renamed.
const (
	TypeProjectCreated    = "project.created"
	TypeProjectArchived   = "project.archived"
	TypePlanCreated       = "plan.created"
	TypePlanClosed        = "plan.closed"
	TypeTaskCreated       = "task.created"
	TypeTaskUpdated       = "task.updated"
	TypeTaskDepsChanged   = "task.deps_changed"
	TypeTaskStatusChanged = "task.status_changed"
	TypeTaskClaimed       = "task.claimed"
	TypeTaskLeaseRenewed  = "task.lease_renewed"
	TypeTaskReleased      = "task.released"
	TypeTaskContextMerged = "task.context_merged"
	TypeStepAdded         = "step.added"
	TypeStepStatusChanged = "step.status_changed"
	TypeNoteAdded         = "note.added"
	TypeApprovalRequested = "approval.requested"
	TypeApprovalDecided   = "approval.decided"
	TypeExecRecorded      = "exec.recorded"
	TypeCheckpointCreated = "checkpoint.created"
	TypeRollbackApplied   = "rollback.applied"
	TypeRollbackMarked    = "rollback.marked"
	// TypeProjectSettingChanged sets one of a project's settings
	// (ProjectSettingChanged); TypeApprovalConsumed spends a granted
	// approval's one use (ApprovalConsumed).
	TypeProjectSettingChanged = "project.setting_changed"
	TypeApprovalConsumed      = "approval.consumed"
)

// SchemaVersion is the payload schema version this binary writes for
// every type it knows. A type's schema is bumped alone when its payload
// changes incompatibly; older versions are then upcast on read.
const SchemaVersion = 1

// Schema returns the schema version this binary writes and reads for an
// event type, and whether it knows the type at all.
func Schema(typ string) (uint32, bool) {
	if kindOf(typ) == kindUnknown {
		return 0, false
	}
	return SchemaVersion, true
}

// eventKind is an event type as a number, for the fold's switches: one
// string switch per event instead of one per switch.
type eventKind uint8

const (
	kindUnknown eventKind = iota
	kindProjectCreated
	kindProjectArchived
	kindPlanCreated
	kindPlanClosed
	kindTaskCreated
	kindTaskUpdated
	kindTaskDepsChanged
	kindTaskStatusChanged
	kindTaskClaimed
	kindTaskLeaseRenewed
	kindTaskReleased
	kindTaskContextMerged
	kindStepAdded
	kindStepStatusChanged
	kindNoteAdded
	kindApprovalRequested
	kindApprovalDecided
	kindExecRecorded
	kindCheckpointCreated
	kindRollbackApplied
	kindRollbackMarked
	kindProjectSettingChanged
	kindApprovalConsumed
)

// kindOf returns the kind of an event type: by a hash of its length and
// two of its bytes (no two types of the catalog share a slot), checked by
// one string compare; a string switch or a search costs several.
func kindOf(typ string) eventKind {
	if len(typ) < 6 {
		return kindUnknown
	}
	if k := kindTable[kindSlot(typ)]; k.typ == typ {
		return k.kind
	}
	for _, k := range kindsByFrequency { // only if two types ever share a slot
		if typ == k.typ {
			return k.kind
		}
	}
	return kindUnknown
}

func kindSlot(typ string) int { return (len(typ)*5 + int(typ[0]) + int(typ[len(typ)-6])) % kindSlots }

const kindSlots = 64

var kindTable = func() (t [kindSlots]struct {
	typ  string
	kind eventKind
}) {
	for _, k := range kindsByFrequency {
		if slot := &t[kindSlot(k.typ)]; slot.typ == "" {
			*slot = k
		}
	}
	return t
}()

var kindsByFrequency = [...]struct {
	typ  string
	kind eventKind
}{
	{TypeStepStatusChanged, kindStepStatusChanged},
	{TypeTaskContextMerged, kindTaskContextMerged},
	{TypeStepAdded, kindStepAdded},
	{TypeExecRecorded, kindExecRecorded},
	{TypeTaskStatusChanged, kindTaskStatusChanged},
	{TypeNoteAdded, kindNoteAdded},
	{TypeApprovalRequested, kindApprovalRequested},
	{TypeApprovalDecided, kindApprovalDecided},
	{TypeTaskCreated, kindTaskCreated},
	{TypeTaskUpdated, kindTaskUpdated},
	{TypeTaskDepsChanged, kindTaskDepsChanged},
	{TypeTaskClaimed, kindTaskClaimed},
	{TypeTaskLeaseRenewed, kindTaskLeaseRenewed},
	{TypeTaskReleased, kindTaskReleased},
	{TypePlanCreated, kindPlanCreated},
	{TypePlanClosed, kindPlanClosed},
	{TypeCheckpointCreated, kindCheckpointCreated},
	{TypeRollbackApplied, kindRollbackApplied},
	{TypeRollbackMarked, kindRollbackMarked},
	{TypeProjectCreated, kindProjectCreated},
	{TypeProjectArchived, kindProjectArchived},
	{TypeApprovalConsumed, kindApprovalConsumed},
	{TypeProjectSettingChanged, kindProjectSettingChanged},
}

// Types returns every event type of the catalog, sorted: the closed set
// that log --type and the completion of types offer.
func Types() []string {
	out := make([]string, 0, len(kindsByFrequency))
	for _, k := range kindsByFrequency {
		out = append(out, k.typ)
	}
	slices.Sort(out)
	return out
}

// ProjectCreated is the first event of stream project/<name>.
//
//codec:decode,unmarshal,append
type ProjectCreated struct {
	Name        string `msgpack:"name"`
	Description string `msgpack:"description,omitempty"`
	// Origin is set on a fork (flowctl project fork): the project and
	// point it started from. Its state arrives in the rollback.applied
	// event that follows.
	Origin *Origin `msgpack:"origin,omitempty"`
}

// Origin is where a forked project started: the source project, the seq
// of the point and the log's chain hash at that seq (hex).
//
//codec:decode,append
type Origin struct {
	Project string `msgpack:"project" json:"project"`
	Seq     uint64 `msgpack:"seq" json:"seq"`
	Hash    string `msgpack:"hash" json:"hash"`
}

// ProjectSettingChanged sets one setting of a project (a key of
// ProjectSettings, such as approvals.self_grant) to a value.
//
//codec:decode,unmarshal,append
type ProjectSettingChanged struct {
	Key   string `msgpack:"key"`
	Value string `msgpack:"value"`
}

// ProjectArchived closes a project to new work.
//
//codec:decode,append
type ProjectArchived struct {
	Reason string `msgpack:"reason,omitempty"`
}

// PlanCreated starts stream plan/<project>/<P-n>.
//
//codec:decode,unmarshal,append
type PlanCreated struct {
	ID          string `msgpack:"id"`
	Title       string `msgpack:"title"`
	Description string `msgpack:"description,omitempty"`
}

// PlanClosed closes a plan.
//
//codec:decode,unmarshal,append
type PlanClosed struct {
	ID     string `msgpack:"id"`
	Reason string `msgpack:"reason,omitempty"`
}

// TaskCreated starts stream task/<project>/<T-n>.
//
//codec:decode,unmarshal,append
type TaskCreated struct {
	ID          string   `msgpack:"id"`
	Plan        string   `msgpack:"plan,omitempty"`
	Title       string   `msgpack:"title"`
	Description string   `msgpack:"description,omitempty"`
	Deps        []string `msgpack:"deps,omitempty"`
	Owner       string   `msgpack:"owner,omitempty"`
	Tags        []string `msgpack:"tags,omitempty"`
	Priority    int      `msgpack:"priority,omitempty"`
	Ref         string   `msgpack:"ref,omitempty"`    // an outside id (an imported task's original id)
	Status      string   `msgpack:"status,omitempty"` // initial status; empty means todo
	Parent      string   `msgpack:"parent,omitempty"` // the task it is a subtask of
	Due         Time     `msgpack:"due,omitempty"`    // when it is due; zero for none
}

// TaskUpdated carries the changed fields only; nil means unchanged.
//
//codec:decode,unmarshal,append
type TaskUpdated struct {
	Title       *string   `msgpack:"title,omitempty"`
	Description *string   `msgpack:"description,omitempty"`
	Owner       *string   `msgpack:"owner,omitempty"`
	Tags        *[]string `msgpack:"tags,omitempty"`
	Priority    *int      `msgpack:"priority,omitempty"`
	Plan        *string   `msgpack:"plan,omitempty"`
	Parent      *string   `msgpack:"parent,omitempty"` // "" detaches the task from its parent
	Due         *int64    `msgpack:"due,omitempty"`    // unix ns; 0 clears the due date
}

// TaskDepsChanged adds and removes dependencies (task ids of the project).
//
//codec:decode,unmarshal,append
type TaskDepsChanged struct {
	Added   []string `msgpack:"added,omitempty"`
	Removed []string `msgpack:"removed,omitempty"`
}

// TaskStatusChanged moves a task; Forced records that `done` was forced
// past what blocked it.
//
//codec:decode,unmarshal,append
type TaskStatusChanged struct {
	From   string `msgpack:"from"`
	To     string `msgpack:"to"`
	Reason string `msgpack:"reason,omitempty"`
	Forced bool   `msgpack:"forced,omitempty"`
}

// TaskClaimed takes or renews a claim; LeaseUntil is unix ns.
//
//codec:decode,unmarshal,append
type TaskClaimed struct {
	Actor      string `msgpack:"actor"`
	Session    string `msgpack:"session,omitempty"`
	LeaseUntil int64  `msgpack:"lease_until"`
}

// TaskReleased drops a claim.
//
//codec:decode,append
type TaskReleased struct {
	Actor   string `msgpack:"actor"`
	Session string `msgpack:"session,omitempty"`
	Reason  string `msgpack:"reason,omitempty"`
}

// TaskContextMerged changes a task's context: an RFC 7396 merge patch, or
// with Replace the whole new object. Patch holds the exact JSON the user
// gave, after validation.
//
//codec:decode,unmarshal,append
type TaskContextMerged struct {
	Patch   string `msgpack:"patch"`
	Replace bool   `msgpack:"replace,omitempty"`
}

// StepAdded adds step <T-n>.<m> to a task.
//
//codec:decode,unmarshal,append
type StepAdded struct {
	ID    string `msgpack:"id"`
	Title string `msgpack:"title"`
}

// StepStatusChanged moves a step and/or sets its progress (0-100). A
// move to in_progress from failed is a retry: the fold counts it in the
// step's attempt. ResultData is a structured result, the JSON text the
// user gave after validation.
//
//codec:decode,append
type StepStatusChanged struct {
	ID         string `msgpack:"id"`
	To         string `msgpack:"to"`
	Progress   *int   `msgpack:"progress,omitempty"`
	Note       string `msgpack:"note,omitempty"`
	Result     string `msgpack:"result,omitempty"`
	Error      string `msgpack:"error,omitempty"`
	ResultData string `msgpack:"result_data,omitempty"`
}

// NoteAdded attaches a note to a task, or to the project when Task is empty.
//
//codec:decode,append
type NoteAdded struct {
	Task string `msgpack:"task,omitempty"`
	Text string `msgpack:"text"`
	Kind string `msgpack:"kind"` // note | memory
	// OccurredAt is when the note's entry was written in the file it
	// was imported from (a legacy history's ts); zero for a note added
	// here, whose time is its event's.
	OccurredAt Time `msgpack:"occurred_at,omitempty"`
}

// ApprovalRequested asks for a decision on a proposed action.
//
//codec:decode,unmarshal,append
type ApprovalRequested struct {
	ID         string `msgpack:"id"`
	Task       string `msgpack:"task,omitempty"`
	Step       string `msgpack:"step,omitempty"`
	Message    string `msgpack:"message"`
	Code       string `msgpack:"code,omitempty"`
	Action     string `msgpack:"action,omitempty"` // JSON, exactly as given
	ActionHash string `msgpack:"action_hash"`      // hex SHA-256 of Action
	Expires    int64  `msgpack:"expires,omitempty"`
}

// ApprovalDecided grants or denies an approval.
//
//codec:decode,unmarshal,append
type ApprovalDecided struct {
	ID       string `msgpack:"id"`
	Decision string `msgpack:"decision"` // granted | denied
	By       string `msgpack:"by"`
	Comment  string `msgpack:"comment,omitempty"`
}

// ApprovalConsumed spends the one use of a granted approval (exec run
// --require-approval): the action it was granted for has been let run.
//
//codec:decode,unmarshal,append
type ApprovalConsumed struct {
	ID string `msgpack:"id"`
}

// Output is the kept part of a command's stdout or stderr.
//
//codec:decode,append
type Output struct {
	Head   string `msgpack:"head,omitempty" json:"head"`
	Tail   string `msgpack:"tail,omitempty" json:"tail,omitempty"`
	Bytes  int64  `msgpack:"bytes" json:"bytes"`
	SHA256 string `msgpack:"sha256,omitempty" json:"sha256,omitempty"`
}

// ExecRecorded records a command (or code) that was run.
//
//codec:decode,unmarshal,append
type ExecRecorded struct {
	ID           string   `msgpack:"id" json:"id"`
	Task         string   `msgpack:"task,omitempty" json:"task,omitempty"`
	Step         string   `msgpack:"step,omitempty" json:"step,omitempty"`
	Plan         string   `msgpack:"plan,omitempty" json:"plan,omitempty"`
	Command      string   `msgpack:"command,omitempty" json:"command,omitempty"`
	Code         string   `msgpack:"code,omitempty" json:"code,omitempty"`
	Cwd          string   `msgpack:"cwd,omitempty" json:"cwd,omitempty"`
	ExitCode     int      `msgpack:"exit_code" json:"exit_code"`
	Success      bool     `msgpack:"success" json:"success"`
	ElapsedMS    float64  `msgpack:"elapsed_ms" json:"elapsed_ms"`
	Stdout       Output   `msgpack:"stdout" json:"stdout"`
	Stderr       Output   `msgpack:"stderr" json:"stderr"`
	AddedVars    []string `msgpack:"added_vars,omitempty" json:"added_vars,omitempty"`
	AddedImports []string `msgpack:"added_imports,omitempty" json:"added_imports,omitempty"`
	GitHead      string   `msgpack:"git_head,omitempty" json:"git_head,omitempty"`
	// OccurredAt is when the command ran, as the record given to
	// flowctl said (a seed exec log's timestamp); zero when it was
	// recorded as it ran (the event's time is then the time).
	OccurredAt Time `msgpack:"occurred_at,omitempty" json:"occurred_at,omitempty"`
}

// CheckpointCreated marks a named point: the state up to AtSeq.
//
//codec:decode,unmarshal,append
type CheckpointCreated struct {
	ID      string `msgpack:"id"`
	Label   string `msgpack:"label,omitempty"`
	AtSeq   uint64 `msgpack:"at_seq"`
	Task    string `msgpack:"task,omitempty"`
	GitHead string `msgpack:"git_head,omitempty"`
}

// Removed names an entity that a rollback takes out of the projections
// (it was created after the target).
//
//codec:decode,append
type Removed struct {
	Kind string `msgpack:"kind" json:"kind"` // plan | task | approval | exec
	ID   string `msgpack:"id" json:"id"`
}

// RollbackApplied restores the state of ToSeq: it carries the restored
// states of the entities that differ and the ids of those created after
// ToSeq, so that the fold needs nothing but the event. Task is set for a
// rollback of one task; Project (its description and archived flag) for
// a rollback of the whole project. Short id counters are never rolled
// back, so an id is never used twice.
//
//codec:decode,unmarshal,append
type RollbackApplied struct {
	ToSeq      uint64     `msgpack:"to_seq"`
	Checkpoint string     `msgpack:"checkpoint,omitempty"`
	Task       string     `msgpack:"task,omitempty"`
	Reason     string     `msgpack:"reason,omitempty"`
	Project    *Project   `msgpack:"project,omitempty"`
	Plans      []Plan     `msgpack:"plans,omitempty"`
	Tasks      []Task     `msgpack:"tasks,omitempty"`
	Approvals  []Approval `msgpack:"approvals,omitempty"`
	Execs      []Exec     `msgpack:"execs,omitempty"`
	Removed    []Removed  `msgpack:"removed,omitempty"`
	// Counters, when set, raises the project's short id counters to at
	// least these (a fork's first state: its ids continue the source's).
	Counters *Counters `msgpack:"counters,omitempty"`
	// Undone, when set, makes this an undo (flowctl undo): it reverts
	// the command whose events are seqs First to Last.
	Undone *SeqRange `msgpack:"undone,omitempty"`
}

// SeqRange is the seqs First to Last, both included.
//
//codec:decode,append
type SeqRange struct {
	First uint64 `msgpack:"first" json:"first"`
	Last  uint64 `msgpack:"last" json:"last"`
}

// RollbackMarked is the mark a rollback of the whole project leaves on
// the stream of each plan and task it restored or removed (or whose
// approvals or exec records it did), in the same transaction, right after
// its rollback.applied event on the project's stream: the entity's
// stream, and so its version, moves on, so that a writer that read it
// before the rollback fails its --if-version, and the entity's history
// shows the rollback. The fold records it on the entity (version, seq,
// update time) unless the rollback removed it. Files written before it
// existed have none: their rollbacks left versions where they were.
//
//codec:decode,unmarshal,append
type RollbackMarked struct {
	Rollback uint64 `msgpack:"rollback"` // the seq of the rollback.applied event
	ToSeq    uint64 `msgpack:"to_seq"`
	Removed  bool   `msgpack:"removed,omitempty"` // the rollback took the entity out of the projections
}
