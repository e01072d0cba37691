package workload

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Kind is what an Op does.
type Kind uint8

// The kinds of Op, each one command of the engine that appends one event.
const (
	CreateProject   Kind = iota + 1 // flow.Engine.CreateProject: ID (the name), Text (description)
	AddPlan                         // AddPlan: ID, Title, Text (description)
	AddTask                         // AddTask: ID, Plan, Title, Text (description), Deps, Priority, Owner, Tags()
	StartTask                       // MoveTask of Task to doing
	AddStep                         // AddStep: ID (the step), Task, Title
	StartStep                       // MoveStep of ID to in progress
	ProgressStep                    // MoveStep of ID, still in progress, to StepProgress with note StepNote
	CompleteStep                    // MoveStep of ID to completed (progress 100), with result StepResult
	MergeContext                    // MergeContext of Task: Text (a JSON object)
	AddNote                         // AddNote of kind note to Task: Text
	RecordExec                      // RecordExec: ID, Task, Step and the Exec* constants
	RequestApproval                 // RequestApproval: ID, Task, ApprovalMessage, ApprovalAction
	GrantApproval                   // DecideApproval: ID granted, with ApprovalComment
	FinishTask                      // MoveTask of Task to done
	Checkpoint                      // CreateCheckpoint: ID, CheckpointLabel
)

var kindNames = [...]string{"", "create-project", "add-plan", "add-task", "start-task", "add-step", "start-step",
	"progress-step", "complete-step", "merge-context", "add-note", "record-exec", "request-approval",
	"grant-approval", "finish-task", "checkpoint"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && k != 0 {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Op is one command of the workload; it appends exactly one event. The
// fields an Op of a kind uses are listed with the kind; the others are
// empty. Each AddTask has a Deps slice of its own; a runner that may run
// an Op twice (a retried batch) copies it first, since
// flow.Engine.AddTask normalizes its input in place.
type Op struct {
	Kind     Kind
	Project  string   // the project's name
	ID       string   // what the op creates or changes: a project name, or a plan, task, step, exec, approval or checkpoint id
	Task     string   // the task of a task, step, context, note, exec or approval op
	Plan     string   // AddTask: the plan the task joins; RecordExec: the task's plan
	Step     string   // RecordExec: the step it records
	Deps     []string // AddTask: the tasks it depends on
	Priority int      // AddTask
	Title    string   // AddPlan, AddTask, AddStep
	Text     string   // CreateProject, AddPlan, AddTask: the description; MergeContext: the patch; AddNote: the text
}

// The texts of the ops that do not change from op to op.
const (
	Owner           = "agent"            // AddTask
	StepProgress    = 50                 // ProgressStep: percent done
	StepNote        = "halfway"          // ProgressStep
	StepResult      = "done, tests pass" // CompleteStep
	NoteText        = "found that the parser needs a second pass for nested blocks; noted for the reviewer"
	TaskDescription = "a description of the work, as an assistant would write it, a sentence or two long."
	ExecCommand     = "go test ./..." // RecordExec, exit code 0, success
	ExecCwd         = "/src/app"
	ExecElapsedMS   = 1234.5
	ExecStdout      = "ok  \tgithub.com/example/app/parser\t0.412s\nok  \tgithub.com/example/app/render\t0.207s\n"
	ExecAddedVar    = "result"                            // RecordExec: its one added variable
	ApprovalMessage = "push the branch?"                  // RequestApproval
	ApprovalAction  = `{"cmd":"git push origin feature"}` // RequestApproval
	ApprovalComment = "ok"                                // GrantApproval
	ApprovalGrantor = "reviewer"                          // GrantApproval: who decides (not the requester)
	CheckpointLabel = "bench"                             // Checkpoint
)

// Tags returns the tags of every task, a new slice each call.
func Tags() []string { return []string{"bench", "feature"} }

// ProjectName names the i-th project of the workload, from 0.
func ProjectName(i int) string { return fmt.Sprintf("proj%03d", i) }

// shortID formats the n-th id of a kind as the engine does
// (projection.ShortID): shortID("T", 3) == "T-3".
func shortID(prefix string, n int) string { return prefix + "-" + strconv.Itoa(n) }

// stepID formats step m of a task as the engine does (projection.StepID).
func stepID(task string, m int) string { return task + "." + strconv.Itoa(m) }

// ContextPatch is the c-th context merge of task n: a few keys that keep
// changing, and one that grows per merge.
func ContextPatch(n, c int) string {
	patch := map[string]any{
		"phase":               []string{"explore", "plan", "implement", "test", "review", "wrap-up"}[c],
		"files":               []string{fmt.Sprintf("parser/part%d.go", n), fmt.Sprintf("parser/part%d_test.go", n)},
		fmt.Sprintf("k%d", c): map[string]any{"decision": "use a table-driven parser", "merge": c},
	}
	b, err := json.Marshal(patch)
	if err != nil {
		panic(err) // a map of strings and ints always marshals
	}
	return string(b)
}
