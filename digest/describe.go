package digest

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
	"github.com/vmihailenco/msgpack/v5"
)

// This file says in words what an event did: Describe's line (flowctl
// watch), and the subject and summary a digest's timeline shows.

// describeRunes bounds the length of Describe's line.
const describeRunes = 300

// Describe says in one line of text what ev did, for people:
// "#12 T-3 task.status_changed by ann: todo -> doing". The summary after
// the colon needs the payload in ev.Raw (flow.Filter.Raw); without it the
// line ends after the actor.
func Describe(ev flow.Event) string {
	s := "#" + strconv.FormatUint(ev.Seq, 10) + " " + Subject(ev) + " " + ev.Type + " by " + ev.Actor
	if len(ev.Raw) > 0 {
		if sum := Summary(ev); sum != "" {
			s += ": " + sum
		}
	}
	return mdClip(mdLine(s), describeRunes)
}

// Subject is the entity of the event's stream, as people name it: T-3,
// P-1, or the project's name for the project's own stream.
func Subject(ev flow.Event) string { return streamSubject(ev.Stream) }

func streamSubject(stream string) string {
	kind, project, id, ok := projection.ParseStream(stream)
	switch {
	case !ok:
		return stream
	case kind == projection.KindProject:
		return project
	}
	return id
}

// Summary says in a few words what the event did ("todo -> doing",
// "T-3 created: parse the input"), from its payload in Raw
// (flow.Filter.Raw): "" for a type without one, and a note instead of an
// error for an unknown type or a payload that does not decode. It may span
// lines and carry any character the payload does; a caller that prints it
// makes it safe.
func Summary(ev flow.Event) string {
	if _, known := projection.Schema(ev.Type); !known {
		return fmt.Sprintf("unknown event type (schema %d)", ev.Schema)
	}
	fn := eventSummaries[ev.Type]
	if fn == nil {
		return ""
	}
	s, err := fn(ev.Raw)
	if err != nil {
		return "payload does not decode"
	}
	return s
}

// eventSummaries turn a payload of each type into a summary.
var eventSummaries = map[string]func(raw []byte) (string, error){
	projection.TypeProjectCreated: summaryOf(func(p projection.ProjectCreated) string {
		return mdJoin("project", p.Name, "created", mdParens(p.Description))
	}),
	projection.TypeProjectArchived: summaryOf(func(p projection.ProjectArchived) string { return mdJoin("archived", p.Reason) }),
	projection.TypePlanCreated: summaryOf(func(p projection.PlanCreated) string {
		return mdJoin(p.ID+" created:", p.Title)
	}),
	projection.TypePlanClosed:  summaryOf(func(p projection.PlanClosed) string { return mdJoin(p.ID+" closed", mdParens(p.Reason)) }),
	projection.TypeTaskCreated: summaryOf(taskCreatedSummary),
	projection.TypeTaskUpdated: summaryOf(taskUpdatedSummary),
	projection.TypeTaskDepsChanged: summaryOf(func(p projection.TaskDepsChanged) string {
		return mdJoin("deps", mdPrefixed("+", p.Added), mdPrefixed("-", p.Removed))
	}),
	projection.TypeTaskStatusChanged: summaryOf(func(p projection.TaskStatusChanged) string {
		return mdJoin(p.From, "->", p.To, mdForced(p.Forced), mdParens(p.Reason))
	}),
	projection.TypeTaskClaimed: summaryOf(func(p projection.TaskClaimed) string {
		return mdJoin("claimed by", p.Actor, "until", mdTime(time.Unix(0, p.LeaseUntil)))
	}),
	projection.TypeTaskLeaseRenewed: summaryOf(func(p projection.TaskClaimed) string {
		return mdJoin("lease of", p.Actor, "renewed until", mdTime(time.Unix(0, p.LeaseUntil)))
	}),
	projection.TypeTaskReleased: summaryOf(func(p projection.TaskReleased) string {
		return mdJoin("released by", p.Actor, mdParens(p.Reason))
	}),
	projection.TypeTaskContextMerged: summaryOf(func(p projection.TaskContextMerged) string {
		if p.Replace {
			return "context replaced: " + p.Patch
		}
		return "context merged: " + p.Patch
	}),
	projection.TypeStepAdded:         summaryOf(func(p projection.StepAdded) string { return mdJoin(p.ID, "added:", p.Title) }),
	projection.TypeStepStatusChanged: summaryOf(stepSummary),
	projection.TypeNoteAdded: summaryOf(func(p projection.NoteAdded) string {
		return mdJoin(p.Kind+":", p.Text)
	}),
	projection.TypeApprovalRequested: summaryOf(func(p projection.ApprovalRequested) string {
		return mdJoin(p.ID, "requested", mdForStep(p.Step)) + ": " + p.Message
	}),
	projection.TypeApprovalDecided: summaryOf(func(p projection.ApprovalDecided) string {
		return mdJoin(p.ID, p.Decision, "by", p.By, mdParens(p.Comment))
	}),
	projection.TypeExecRecorded: summaryOf(func(p projection.ExecRecorded) string {
		return mdJoin(p.ID, execLabel(&p), "exit", strconv.Itoa(p.ExitCode), mdOK(p.Success), mdMS(p.ElapsedMS))
	}),
	projection.TypeRollbackMarked: summaryOf(func(p projection.RollbackMarked) string {
		what := "rolled back"
		if p.Removed {
			what = "removed, rolled back"
		}
		return fmt.Sprintf("%s to seq %d by the rollback at seq %d", what, p.ToSeq, p.Rollback)
	}),
}

// summary adapts a summary of a typed payload to raw msgpack.
func summaryOf[P any](fn func(P) string) func([]byte) (string, error) {
	return func(raw []byte) (string, error) {
		var p P
		if err := msgpack.Unmarshal(raw, &p); err != nil {
			return "", err
		}
		return fn(p), nil
	}
}

func taskCreatedSummary(p projection.TaskCreated) string {
	s := mdJoin(p.ID, "created:", p.Title)
	if len(p.Deps) > 0 {
		s += " (deps " + strings.Join(p.Deps, ", ") + ")"
	}
	return s
}

func taskUpdatedSummary(p projection.TaskUpdated) string {
	var parts []string
	str := func(name string, v *string) {
		if v != nil {
			parts = append(parts, name+" "+strconv.Quote(*v))
		}
	}
	str("title", p.Title)
	str("description", p.Description)
	str("owner", p.Owner)
	str("plan", p.Plan)
	if p.Priority != nil {
		parts = append(parts, "priority "+strconv.Itoa(*p.Priority))
	}
	if p.Tags != nil {
		parts = append(parts, "tags ["+strings.Join(*p.Tags, ", ")+"]")
	}
	return "set " + strings.Join(parts, ", ")
}

func stepSummary(p projection.StepStatusChanged) string {
	progress := ""
	if p.Progress != nil {
		progress = strconv.Itoa(*p.Progress) + "%"
	}
	to := p.To
	if to != "" {
		to = "-> " + to
	}
	s := mdJoin(p.ID, to, progress)
	for _, kv := range [][2]string{{"note", p.Note}, {"result", p.Result}, {"error", p.Error}} {
		if kv[1] != "" {
			s += "; " + kv[0] + ": " + kv[1]
		}
	}
	return s
}

func mdPrefixed(prefix string, ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = prefix + id
	}
	return strings.Join(out, " ")
}

func mdForStep(step string) string {
	if step == "" {
		return ""
	}
	return "for " + step
}
