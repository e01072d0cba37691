package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
	"github.com/vmihailenco/msgpack/v5"
	"pgregory.net/rapid"
)

// fataler is what the helpers need of a *testing.T or a *rapid.T.
type fataler interface {
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// mcpTestEvent is an event of type typ whose payload has every text
// field the compact message reads set to text.
func mcpTestEvent(t fataler, typ, project, text string, n int) flow.Event {
	p := map[string]any{}
	for _, k := range []string{"id", "task", "step", "title", "note", "error", "result", "message", "by",
		"comment", "label", "text", "command", "code", "reason", "name", "session", "description", "decision"} {
		p[k] = text
	}
	p["to"], p["progress"], p["exit_code"], p["kind"] = []string{"in_progress", "completed", "failed", "doing", "done", text}[n%6], n%101, n, "memory"
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := msgpack.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return flow.Event{Seq: uint64(n) + 1, Type: typ, Stream: projection.TaskStream(project, "T-"+text), Project: project,
		Actor: text, Time: time.Unix(0, 0).UTC(), Data: data, Raw: raw}
}

// checkMCPLines checks the two lines of one compact event: the first
// "MCP::<name> {json}", the second "#<seq> ...", each at most 200 bytes.
func checkMCPLines(t fataler, out string) (name string, m mcpMessage) {
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2: %q", len(lines), out)
	}
	for _, l := range lines {
		if len(l) > mcpLineMax {
			t.Fatalf("a line of %d bytes, over %d: %q", len(l), mcpLineMax, l)
		}
	}
	rest, ok := strings.CutPrefix(lines[0], "MCP::")
	name, body, ok2 := strings.Cut(rest, " ")
	if !ok || !ok2 || name == "" || strings.ContainsAny(name, " \t\n") {
		t.Fatalf("not an MCP:: line: %q", lines[0])
	}
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil || dec.More() {
		t.Fatalf("payload %q: %v", body, err)
	}
	if !strings.HasPrefix(lines[1], "#") {
		t.Fatalf("line for people %q", lines[1])
	}
	return name, m
}

// TestWatchMCP_LineBound: every event type of the catalog, with any text
// in every field its compact message reads, prints two lines of at most
// 200 bytes, the first a valid MCP:: line whose payload keeps the seq.
func TestWatchMCP_LineBound(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		text := rapid.String().Draw(rt, "text")
		if rapid.Bool().Draw(rt, "long") {
			text = strings.Repeat(text+"é\x01\"<", 60)
		}
		project := rapid.StringMatching(`[a-z][a-z0-9-]{0,80}`).Draw(rt, "project")
		n := rapid.IntRange(0, 1000).Draw(rt, "n")
		for _, typ := range append(projection.Types(), "some.future_type") {
			var buf bytes.Buffer
			ev := mcpTestEvent(rt, typ, project, text, n)
			if err := writeEventMCPCompact(&buf, ev); err != nil {
				rt.Fatal(err)
			}
			_, m := checkMCPLines(rt, buf.String())
			if m.Seq != ev.Seq {
				rt.Fatalf("%s: seq %d, want %d", typ, m.Seq, ev.Seq)
			}
		}
	})
}

// TestWatchMCP_Names: the seed's names, and the compact payload of a
// step's progress.
func TestWatchMCP_Names(t *testing.T) {
	tests := []struct {
		typ, to string
		want    string
	}{
		{projection.TypeStepStatusChanged, "in_progress", "step_start"},
		{projection.TypeStepStatusChanged, "completed", "step_done"},
		{projection.TypeStepStatusChanged, "failed", "step_failed"},
		{projection.TypeTaskStatusChanged, "doing", "task_start"},
		{projection.TypeTaskStatusChanged, "done", "task_done"},
		{projection.TypeApprovalRequested, "", "need_approval"},
		{projection.TypeApprovalDecided, "", "approval_decided"},
		{projection.TypeCheckpointCreated, "", "checkpoint"},
		{projection.TypeTaskCreated, "", "task_created"},
		{projection.TypeExecRecorded, "", "exec"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			data, _ := json.Marshal(map[string]any{"id": "T-1.2", "to": tt.to, "title": "parse", "message": "Proceed?"})
			ev := flow.Event{Seq: 7, Type: tt.typ, Stream: "task/web/T-1", Project: "web", Data: data}
			var buf bytes.Buffer
			if err := writeEventMCPCompact(&buf, ev); err != nil {
				t.Fatal(err)
			}
			name, m := checkMCPLines(t, buf.String())
			if name != tt.want || m.Task != "T-1" {
				t.Errorf("name %q task %q, want %q T-1 (%s)", name, m.Task, tt.want, buf.String())
			}
		})
	}
	data, _ := json.Marshal(map[string]any{"id": "T-1.2", "to": "in_progress", "progress": 40, "note": "half way"})
	var buf bytes.Buffer
	ev := flow.Event{Seq: 9, Type: projection.TypeStepStatusChanged, Stream: "task/web/T-1", Project: "web", Data: data}
	if err := writeEventMCPCompact(&buf, ev); err != nil {
		t.Fatal(err)
	}
	want := `MCP::step_progress {"seq":9,"project":"web","task":"T-1","step":"T-1.2","status":"in_progress","pct":40,"msg":"half way"}`
	if got, _, _ := strings.Cut(buf.String(), "\n"); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
