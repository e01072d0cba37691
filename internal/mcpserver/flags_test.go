package mcpserver

import (
	"bytes"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow"
)

// TestMCP_IfVersionZero: if_version 0 is refused as invalid input on every
// tool that takes it, instead of being read as "no check" (any version
// passed); the file is left as it was.
func TestMCP_IfVersionZero(t *testing.T) {
	t.Parallel()
	f := mcpFile(t)
	h := startMCP(t, f, "agent", nil, "--tools", "all")
	before := f.bytes()
	for name, args := range map[string]map[string]any{
		"task_update": {"id": "T-1", "status": "doing"},
		"step_update": {"action": "add", "task": "T-1", "title": "x"},
		"ctx_merge":   {"task": "T-1", "patch": map[string]any{"a": 1}},
		"rollback":    {"to": "1", "task": "T-1", "apply": true},
	} {
		args["if_version"] = 0
		te := h.callErr(name, args, flow.CodeInvalid)
		if !strings.Contains(te.Message, "if_version") {
			t.Errorf("%s: %q does not name if_version", name, te.Message)
		}
	}
	if !bytes.Equal(before, f.bytes()) {
		t.Errorf("a refused if_version 0 changed the file")
	}
}

// TestMCP_ClosedSets: the MCP tools refuse an unknown value of a
// closed-set argument as invalid input, as the CLI's flags do, instead
// of an empty list.
func TestMCP_ClosedSets(t *testing.T) {
	t.Parallel()
	f := mcpFile(t)
	h := startMCP(t, f, "agent", nil, "--tools", "all")
	for name, args := range map[string]map[string]any{
		"task_list":       {"status": "nosuch"},
		"approval_status": {"status": "nosuch"},
		"history":         {"type": "nosuch.*"},
	} {
		te := h.callErr(name, args, flow.CodeInvalid)
		if !strings.Contains(te.Message, "nosuch") || !strings.Contains(te.Message, "use one of") && !strings.Contains(te.Message, "any of") {
			t.Errorf("%s: %q does not name the value and the valid ones", name, te.Message)
		}
	}
}

// TestMCP_RollbackDryRun: a dry run appends nothing, so if_version is
// refused instead of ignored, as the CLI refuses --if-version with
// --dry-run (TestFlags_RollbackDryRun).
func TestMCP_RollbackDryRun(t *testing.T) {
	t.Parallel()
	f := mcpFile(t)
	h := startMCP(t, f, "agent", nil, "--tools", "all")
	te := h.callErr("rollback", map[string]any{"to": "1", "if_version": 1}, flow.CodeInvalid)
	if !strings.Contains(te.Message, "apply") {
		t.Errorf("rollback without apply, with if_version: %q does not say it needs apply", te.Message)
	}
}
