package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/flowctl/flowctl/digest"
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
)

// mcpLineMax is the longest line `watch --format mcp` prints, in bytes
// (without the newline): the seed's stdout protocol warns that chatty
// JSON costs an agent tokens.
const mcpLineMax = 200

// mcpMessage is the compact payload of `watch --format mcp`: ids, a
// title, a percentage and a message, no hashes and no envelope. Fields
// left empty are left out.
type mcpMessage struct {
	Seq      uint64 `json:"seq"`
	Project  string `json:"project,omitempty"`
	Task     string `json:"task,omitempty"`
	Step     string `json:"step,omitempty"`
	ID       string `json:"id,omitempty"` // a plan, approval, exec record or checkpoint
	Status   string `json:"status,omitempty"`
	Pct      *int   `json:"pct,omitempty"`
	Code     string `json:"code,omitempty"`
	ExitCode *int   `json:"exit_code,omitempty"`
	Actor    string `json:"actor,omitempty"`
	Title    string `json:"title,omitempty"`
	Msg      string `json:"msg,omitempty"`
}

// mcpPayload is the part of an event's payload (its JSON) the compact
// message reads.
type mcpPayload struct {
	ID, Task, Step, Title, To, Note, Error, Result string
	Message, Decision, By, Comment, Label, Text    string
	Kind, Command, Code, Reason, Name, Session     string
	Progress, ExitCode                             *int
}

// mcpName is the seed's name of what the event says (seed 002:
// step_start, step_done, step_failed, need_approval, approval_decided,
// task_start, task_done, checkpoint), else one made the same way.
func mcpName(ev flow.Event, p *mcpPayload) string {
	switch ev.Type {
	case projection.TypeStepStatusChanged:
		switch p.To {
		case projection.StepInProgress:
			if p.Progress != nil && *p.Progress > 0 {
				return "step_progress"
			}
			return "step_start"
		case projection.StepCompleted:
			return "step_done"
		case projection.StepFailed:
			return "step_failed"
		case projection.StepSkipped:
			return "step_skipped"
		}
		return "step_progress"
	case projection.TypeTaskStatusChanged:
		switch p.To {
		case projection.StatusDoing:
			return "task_start"
		case projection.StatusDone:
			return "task_done"
		}
		return "task_" + safeName(p.To)
	case projection.TypeApprovalRequested:
		return "need_approval"
	case projection.TypeApprovalDecided:
		return "approval_decided"
	case projection.TypeCheckpointCreated:
		return "checkpoint"
	case projection.TypeNoteAdded:
		if p.Kind == "memory" {
			return "memory"
		}
		return "note"
	case projection.TypeExecRecorded:
		return "exec"
	case projection.TypeTaskContextMerged:
		return "context"
	case projection.TypeTaskLeaseRenewed:
		return "heartbeat"
	case projection.TypeRollbackApplied:
		return "rollback"
	}
	return safeName(ev.Type)
}

// safeName makes a name of an event type or a status (an imported
// event's may hold anything): task.created -> task_created; every byte
// but a letter, digit, '-' or '_' becomes '_', and it is cut at 40 bytes.
func safeName(s string) string {
	b := []byte(cutBytes(s, 40, ""))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}

// mcpCompact makes an event's compact message.
func mcpCompact(ev flow.Event) (string, mcpMessage) {
	var p mcpPayload
	_ = json.Unmarshal(ev.Data, &p) // an undecodable payload: the ids of the stream only
	m := mcpMessage{Seq: ev.Seq, Project: ev.Project, Title: p.Title, Step: p.Step, Task: p.Task, Code: p.Code}
	kind, _, id, ok := projection.ParseStream(ev.Stream)
	if ok && kind == projection.KindTask {
		m.Task = id
	}
	switch ev.Type {
	case projection.TypeStepStatusChanged:
		m.Step, m.Status, m.Pct, m.Msg = p.ID, p.To, p.Progress, first(p.Error, p.Note, p.Result)
	case projection.TypeStepAdded:
		m.Step = p.ID
	case projection.TypeTaskStatusChanged:
		m.Status, m.Msg = p.To, p.Reason
	case projection.TypeApprovalRequested:
		m.ID, m.Msg = p.ID, p.Message
	case projection.TypeApprovalDecided:
		m.ID, m.Status, m.Actor, m.Msg = p.ID, p.Decision, p.By, p.Comment
	case projection.TypeCheckpointCreated:
		m.ID, m.Title = p.ID, p.Label
	case projection.TypeNoteAdded:
		m.Msg = p.Text
	case projection.TypeExecRecorded:
		m.ID, m.ExitCode, m.Msg = p.ID, p.ExitCode, first(p.Command, p.Code)
		m.Code = ""
	case projection.TypePlanCreated, projection.TypePlanClosed:
		m.ID, m.Msg = p.ID, p.Reason
	case projection.TypeTaskClaimed, projection.TypeTaskReleased, projection.TypeTaskLeaseRenewed:
		m.Actor, m.Msg = ev.Actor, p.Reason
	case projection.TypeProjectCreated:
		m.Title = p.Name
	default:
		m.Msg = p.Reason
	}
	if ev.Type == projection.TypeTaskCreated || ev.Type == projection.TypeTaskUpdated {
		m.Task = first(m.Task, p.ID)
	}
	return mcpName(ev, &p), m
}

func first(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// writeEventMCPCompact writes "MCP::<name> {compact json}" and a line for
// people (which starts with "#<seq>"), each at most mcpLineMax bytes:
// the title and message are cut with "…" to fit, then the other text.
func writeEventMCPCompact(w io.Writer, ev flow.Event) error {
	name, m := mcpCompact(ev)
	head := "MCP::" + name + " "
	b, err := fitMCP(&m, mcpLineMax-len(head))
	if err != nil {
		return err
	}
	human := cutBytes(printable(digest.Describe(ev)), mcpLineMax, "…")
	_, err = fmt.Fprintf(w, "%s%s\n%s\n", head, b, human)
	return err
}

// fitMCP encodes m in at most limit bytes, cutting its text fields, the
// longest first, as much as it takes.
func fitMCP(m *mcpMessage, limit int) ([]byte, error) {
	fields := []*string{&m.Msg, &m.Title, &m.Actor, &m.Code, &m.Status, &m.ID, &m.Step, &m.Task, &m.Project}
	for {
		b, err := mcpJSON(m)
		if err != nil || len(b) <= limit {
			return b, err
		}
		longest := fields[0]
		for _, f := range fields[1:] {
			if len(*f) > len(*longest) {
				longest = f
			}
		}
		if *longest == "" { // only the seq is left
			return []byte(`{"seq":` + strconv.FormatUint(m.Seq, 10) + `}`), nil
		}
		over := len(b) - limit
		*longest = cutBytes(*longest, max(0, len(*longest)-over-len("…")-8), "…")
		if *longest == "…" {
			*longest = ""
		}
	}
}

// mcpJSON is m as compact JSON, without HTML escapes.
func mcpJSON(m *mcpMessage) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// cutBytes cuts s to at most n bytes on a rune boundary, ending with
// mark when it cut (mark included in n when it fits).
func cutBytes(s string, n int, mark string) string {
	if len(s) <= n {
		return s
	}
	n = max(0, n-len(mark))
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + mark
}
