package mcpserver

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestMCP_Prompts(t *testing.T) {
	t.Parallel()
	f := mcpFile(t)
	f.mustRun("", "step", "add", "T-1", "sketch")
	f.mustRun("", "approval", "request", "--task", "T-1", "--message", "push?", "--action", `{"push":true}`)
	h := startMCP(t, f, "agent", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	list, err := h.cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range list.Prompts {
		names = append(names, p.Name)
		if p.Description == "" {
			t.Errorf("prompt %s has no description", p.Name)
		}
		for _, a := range p.Arguments {
			if a.Description == "" {
				t.Errorf("prompt %s: argument %s has no description", p.Name, a.Name)
			}
		}
	}
	if want := []string{"finish-task", "request-approval", "start-session"}; !slices.Equal(sorted(names), want) {
		t.Fatalf("prompts = %v, want %v", names, want)
	}

	tests := []struct {
		name string
		args map[string]string
		want []string // substrings of the message
	}{
		{"start-session", nil, []string{"first", "task_ready", `"claim":"claim"`}},
		{"start-session", map[string]string{"task": "T-2"}, []string{`Claim T-2 ("second", now todo)`}},
		{"finish-task", map[string]string{"task": "T-1"}, []string{"T-1.1", "A-1", "exec_record", `"status":"done"`}},
		{"request-approval", map[string]string{"task": "T-2", "action": `{"run":"rm -rf build"}`}, []string{"approval_request", `{"run":"rm -rf build"}`, "flowctl approval grant"}},
	}
	for _, tc := range tests {
		res, err := h.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: tc.name, Arguments: tc.args})
		if err != nil {
			t.Fatalf("%s %v: %v", tc.name, tc.args, err)
		}
		if len(res.Messages) != 1 {
			t.Fatalf("%s: %d messages, want 1", tc.name, len(res.Messages))
		}
		text := res.Messages[0].Content.(*mcp.TextContent).Text
		for _, w := range tc.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s %v: message lacks %q:\n%s", tc.name, tc.args, w, text)
			}
		}
	}

	t.Run("UnknownTask", func(t *testing.T) {
		_, err := h.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "finish-task", Arguments: map[string]string{"task": "T-99"}})
		if err == nil || !strings.Contains(err.Error(), "not_found") {
			t.Errorf("err = %v, want a not_found error", err)
		}
	})
}

// TestMCP_SchemasDescribeEveryParameter: an agent reads every parameter's
// meaning and every closed set's values in tools/list.
func TestMCP_SchemasDescribeEveryParameter(t *testing.T) {
	t.Parallel()
	h := startMCP(t, mcpFile(t), "agent", nil, "--tools", "all")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := h.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	enums := map[string]bool{}
	for _, tool := range res.Tools {
		b, err := json.Marshal(tool.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var s schemaNode
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		s.walk(tool.Name, func(path string, p *schemaNode) {
			if p.Description == "" {
				t.Errorf("%s: parameter %s has no description", tool.Name, path)
			}
			if len(p.Enum) > 0 {
				enums[tool.Name+"."+path] = true
			}
		})
	}
	for _, want := range []string{"task_update.status", "task_update.claim", "task_list.status",
		"step_update.action", "approval_status.status", "project_manage.action"} {
		if !enums[want] {
			t.Errorf("%s is not an enum", want)
		}
	}
	t.Run("EnumRefusesOtherValues", func(t *testing.T) {
		res := h.call("task_update", map[string]any{"id": "T-1", "status": "finished"})
		if !res.IsError || !strings.Contains(resultText(res), `"invalid"`) {
			t.Errorf("status finished: %s", resultText(res))
		}
	})
}

// schemaNode is the part of a JSON schema the test reads.
type schemaNode struct {
	Description string                 `json:"description"`
	Enum        []any                  `json:"enum"`
	Properties  map[string]*schemaNode `json:"properties"`
	Items       *schemaNode            `json:"items"`
}

func (s *schemaNode) walk(prefix string, fn func(path string, p *schemaNode)) {
	for name, p := range s.Properties {
		fn(name, p)
		p.walk(name+".", func(path string, q *schemaNode) { fn(name+"."+path, q) })
		if p.Items != nil {
			p.Items.walk(name+"[].", func(path string, q *schemaNode) { fn(name+"[]."+path, q) })
		}
	}
}
