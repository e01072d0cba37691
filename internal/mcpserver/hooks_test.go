//go:build unix

package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow"
)

// TestMCP_HookVeto: a tool call runs the pre-commit hooks as the CLI
// does; a veto reaches the agent as a tool error with code vetoed and
// the hook's reason, and the file is left byte for byte as it was.
func TestMCP_HookVeto(t *testing.T) {
	f := mcpFile(t)
	dir := filepath.Join(f.dir, flow.DefaultDir, "hooks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\ngrep -q '\"title\":\"forbidden\"' && { echo 'forbidden titles are refused' >&2; exit 2; }\nexit 0\n"
	if err := os.WriteFile(filepath.Join(dir, "pre-commit"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	h := startMCP(t, f, "agent", nil)
	te := h.callErr("task_create", map[string]any{"title": "forbidden"}, flow.CodeVetoed)
	if !strings.Contains(te.Message, "forbidden titles are refused") || !strings.Contains(te.Message, "pre-commit") {
		t.Errorf("message = %q, want the hook's reason", te.Message)
	}
	var out map[string]any
	h.mustCall("task_create", map[string]any{"title": "allowed"}, &out)
}
