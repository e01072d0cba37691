package main

import (
	"context"
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
