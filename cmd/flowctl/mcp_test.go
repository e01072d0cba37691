package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/internal/mcpserver"
	"github.com/flowctl/flowctl/snapshot"
)

// The server's own tests are in internal/mcpserver; these test how
// `flowctl mcp` wires it: its flags and the CLI's error table.

// TestMCP_BadFlags: an unknown tool or text mode is a usage error (exit 2,
// one line) before anything is served.
func TestMCP_BadFlags(t *testing.T) {
	t.Parallel()
	f := mcpFile(t)
	before := f.bytes()
	for _, args := range [][]string{{"--tools", "task_get,nope"}, {"--tools", ","}, {"--text", "loud"}} {
		stdout, stderr, code := runCLI(t, f.dir, "", append([]string{"mcp"}, args...)...)
		wantError(t, stderr, code, 2)
		if stdout != "" {
			t.Errorf("mcp %v printed %q on stdout", args, stdout)
		}
	}
	_, stderr, code := runCLIEnv(t, f.dir, map[string]string{"FLOW_MCP_TOOLS": "bogus"}, "", "mcp")
	wantError(t, stderr, code, 2, "bogus")
	if string(before) != string(f.bytes()) {
		t.Error("a refused mcp command changed the file")
	}
}

// TestMCP_ErrorTable: every error class maps to its code with a hint.
func TestMCP_ErrorTable(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err  error
		want flow.Code
	}{
		{fmt.Errorf("x: %w", flow.ErrNotFound), flow.CodeNotFound},
		{fmt.Errorf("x: %w", flow.ErrInvalid), flow.CodeInvalid},
		{fmt.Errorf("x: %w", eventlog.ErrConflict), flow.CodeConflict},
		{fmt.Errorf("x: %w", flow.ErrBlocked), flow.CodeConflict},
		{fmt.Errorf("x: %w", eventlog.ErrBusy), flow.CodeBusy},
		{fmt.Errorf("x: %w", flow.ErrPending), flow.CodePending},
		{fmt.Errorf("x: %w", eventlog.ErrCorrupt), flow.CodeCorrupt},
		{fmt.Errorf("x: %w", snapshot.ErrCorrupt), flow.CodeCorrupt},
		{errors.New("boom"), flow.CodeInternal},
		{exitStatus{errors.New("exit 42"), 42, false}, flow.CodeInternal},
	}
	for _, c := range cases {
		te := mcpserver.Config{Classify: mcpClassify}.ToolError(c.err)
		if te.Code != c.want || te.Hint == "" || te.Message == "" {
			t.Errorf("newToolError(%v) = %+v, want code %s with a hint", c.err, te, c.want)
		}
		var back mcpserver.ToolError
		if err := json.Unmarshal([]byte(te.Error()), &struct{ Error *mcpserver.ToolError }{&back}); err != nil || back != *te {
			t.Errorf("%v: error text %q does not round-trip: %v", c.err, te.Error(), err)
		}
	}
}

// mcpFile is a fresh file with project demo and tasks T-1 "first" and
// T-2 "second" (T-2 depends on T-1), made as "tester".
func mcpFile(t *testing.T) *flowFile {
	t.Helper()
	f := mustInit(t, "--project", "demo")
	f.mustRun("", "task", "add", "first")
	f.mustRun("", "task", "add", "second", "--dep", "T-1")
	return f
}
