package mcpserver

import (
	"fmt"
	"strings"
	"time"

	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/view"
)

// The structured results of the MCP tools are the view layer's shapes
// (package view): the CLI's field names and formats; a result leaves out
// fields, never renames them. The SDK derives each tool's output schema
// from these types (see addTool), so a field is required unless it is
// omitempty.

// jsonObject is a JSON object in a result or an argument: its schema is
// {"type":"object"}. Numbers are kept as written (json.Number).
type jsonObject map[string]any

// codeHeadLine is the first line of s, marked when there is more.
func codeHeadLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// Summaries: one line each, for the text content of a result.

func taskLine(t *projection.Task) string {
	s := fmt.Sprintf("%s %q %s, v%d", t.ID, t.Title, t.Status, t.Version)
	if t.Claim.Live(time.Now()) {
		s += ", claimed by " + t.Claim.Actor
	}
	if n := len(t.Steps); n > 0 {
		done := 0
		for _, st := range t.Steps {
			if st.Status == projection.StepCompleted || st.Status == projection.StepSkipped {
				done++
			}
		}
		s += fmt.Sprintf(", %d/%d steps done", done, n)
	}
	return printable(s)
}

func briefsLine(prefix string, tasks []view.TaskBrief) string {
	if len(tasks) == 0 {
		return prefix + ": none"
	}
	parts := make([]string, 0, len(tasks))
	for _, t := range tasks {
		parts = append(parts, fmt.Sprintf("%s %q", t.ID, t.Title))
	}
	return printable(fmt.Sprintf("%s (%d): %s", prefix, len(tasks), strings.Join(parts, "; ")))
}
