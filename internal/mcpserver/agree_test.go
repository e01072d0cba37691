package mcpserver

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow"
)

// sameFields checks that every field of got (MCP's structured result)
// is in want (the CLI's -o json of the same entity) with the same value,
// at every depth: MCP may leave fields out, never rename or reformat one.
func sameFields(t *testing.T, path string, got, want any) {
	t.Helper()
	switch g := got.(type) {
	case map[string]any:
		w, ok := want.(map[string]any)
		if !ok {
			t.Errorf("%s: MCP has an object, the CLI %v", path, want)
			return
		}
		for k, v := range g {
			wv, ok := w[k]
			if !ok {
				t.Errorf("%s.%s: MCP has the field, the CLI does not", path, k)
				continue
			}
			sameFields(t, path+"."+k, v, wv)
		}
	case []any:
		w, ok := want.([]any)
		if !ok || len(w) != len(g) {
			t.Errorf("%s: MCP has %v, the CLI %v", path, got, want)
			return
		}
		for i := range g {
			sameFields(t, fmt.Sprintf("%s[%d]", path, i), g[i], w[i])
		}
	default:
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: MCP has %v, the CLI %v", path, got, want)
		}
	}
}

func decodeMap(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	return m
}

// TestMCP_AgreesWithCLI: task_get, approval_status, exec_record and
// checkpoint_create return the fields of `flowctl ... -o json` of the
// same entity, under the same names and in the same format.
func TestMCP_AgreesWithCLI(t *testing.T) {
	t.Parallel()
	f := mcpFile(t)
	f.mustRun("", "plan", "new", "the plan")
	f.mustRun("", "task", "add", "third", "--dep", "T-1,T-2", "--tag", "a,b", "--priority", "7",
		"--description", "more", "--owner", "bob", "--plan", "P-1", "--ref", "gh#3")
	f.mustRun("", "step", "add", "T-3", "sketch")
	f.mustRun("", "step", "add", "T-3", "build")
	f.mustRun("", "step", "start", "T-3.1")
	f.mustRun("", "step", "progress", "T-3.1", "40", "--note", "half")
	f.mustRun("", "ctx", "merge", "T-3", `{"branch":"x","n":1.50,"deep":{"list":[1,{"a":null}]}}`)
	f.mustRun("", "task", "claim", "T-3", "--session", "s1")
	f.mustRun("", "approval", "request", "--task", "T-3", "-m", "deploy?", "--action", `{"run":"deploy","n":2}`, "--expires", "1h")
	h := startMCP(t, f, "agent", nil, "--tools", "all")

	t.Run("Task", func(t *testing.T) {
		var got map[string]any
		h.mustCall("task_get", map[string]any{"id": "T-3"}, &got)
		want := decodeMap(t, f.mustRun("", "task", "show", "T-3", "-o", "json"))
		for _, k := range []string{"claim", "steps", "context", "deps", "tags", "updated_at", "version"} {
			if _, ok := got[k]; !ok {
				t.Errorf("task_get has no %s", k)
			}
		}
		sameFields(t, "task", got, want)
	})
	t.Run("Approval", func(t *testing.T) {
		var got struct{ Approvals []map[string]any }
		h.mustCall("approval_status", map[string]any{"id": "A-1"}, &got)
		sameFields(t, "approval", got.Approvals[0], decodeMap(t, f.mustRun("", "approval", "show", "A-1", "-o", "json")))
	})
	t.Run("Exec", func(t *testing.T) {
		var got map[string]any
		h.mustCall("exec_record", map[string]any{"task": "T-3", "command": "make", "exit_code": 2, "elapsed_ms": 12.5, "stdout": "out"}, &got)
		sameFields(t, "exec", got, decodeMap(t, f.mustRun("", "exec", "show", got["id"].(string), "-o", "json")))
	})
	t.Run("Checkpoint", func(t *testing.T) {
		var got map[string]any
		h.mustCall("checkpoint_create", map[string]any{"label": "here", "task": "T-3"}, &got)
		var all []map[string]any
		if err := json.Unmarshal([]byte(f.mustRun("", "checkpoint", "ls", "-o", "json")), &all); err != nil || len(all) == 0 {
			t.Fatalf("checkpoint ls: %v", err)
		}
		sameFields(t, "checkpoint", got, all[len(all)-1])
	})
	t.Run("Project", func(t *testing.T) {
		var got struct{ Projects []map[string]any }
		h.mustCall("project_manage", map[string]any{"action": "show", "name": "demo"}, &got)
		sameFields(t, "project", got.Projects[0], decodeMap(t, f.mustRun("", "project", "show", "demo", "-o", "json")))
	})
}

// TestMCP_HistoryShowsJSONValues: history's data shows a context patch
// as a JSON object, as log does (README, "JSON output contract").
func TestMCP_HistoryShowsJSONValues(t *testing.T) {
	t.Parallel()
	f := mcpFile(t)
	f.mustRun("", "ctx", "merge", "T-1", `{"a":{"b":[1,2]}}`)
	f.mustRun("", "ctx", "merge", "T-2", `{"big":123456789012345678901234567890}`)
	h := startMCP(t, f, "agent", nil, "--tools", "standard")
	var out struct {
		Events []struct {
			Data map[string]any `json:"data"`
		} `json:"events"`
	}
	h.mustCall("history", map[string]any{"type": "task.context_merged"}, &out)
	if len(out.Events) != 2 {
		t.Fatalf("history = %+v, want the 2 context merges", out.Events)
	}
	for _, ev := range out.Events {
		if _, ok := ev.Data["patch"].(map[string]any); !ok {
			t.Errorf("patch = %#v, want a JSON object", ev.Data["patch"])
		}
	}
}

// TestMCP_NumberOutOfRange: a patch with a number no double holds is
// invalid input, as on the CLI.
func TestMCP_NumberOutOfRange(t *testing.T) {
	t.Parallel()
	h := startMCP(t, mcpFile(t), "agent", nil)
	te := h.callErr("ctx_merge", json.RawMessage(`{"task":"T-1","patch":{"a":1e999}}`), flow.CodeInvalid)
	if !strings.Contains(te.Message, "1e999") {
		t.Errorf("message %q does not name the number", te.Message)
	}
}
