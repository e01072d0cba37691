package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpFuzzTools are the tools FuzzMCPToolCall calls (the "all" profile).
var mcpFuzzTools = []string{"flow_prime", "task_ready", "task_get", "task_create", "task_update", "step_update",
	"ctx_merge", "exec_record", "approval_request", "task_list", "approval_status", "history", "search", "dep_update",
	"checkpoint_create", "rollback", "project_manage"}

// FuzzMCPToolCall sends arbitrary arguments to every tool of a running
// server. The server must never crash or hang; a call either succeeds or
// is a tool error with a code of DESIGN.md section 8 other than internal
// or corrupt (the file is fine and the input is the client's); and the
// file must still verify.
func FuzzMCPToolCall(f *testing.F) {
	f.Add(uint8(3), []byte(`{"title":"x"}`))
	f.Add(uint8(6), []byte(`{"task":"T-1","patch":{"a":{"b":null}}}`))
	f.Add(uint8(4), []byte(`{"id":"T-2","claim":"claim","status":"done"}`))
	f.Add(uint8(5), []byte(`{"action":"progress","step":"T-1.1","progress":101}`))
	f.Add(uint8(14), []byte(`{"to":"C-9","apply":true}`))
	f.Add(uint8(7), []byte(`{"code":"x","success":true,"elapsed_ms":-1}`))
	f.Add(uint8(0), []byte(`{"budget":-5}`))
	f.Fuzz(func(t *testing.T, tool uint8, args []byte) {
		var obj map[string]any
		if json.Unmarshal(args, &obj) != nil {
			return // the SDK refuses non-object arguments before any tool runs
		}
		file := mcpFile(t)
		h := startMCP(t, file, "fuzzer", nil, "--tools", "all")
		name := mcpFuzzTools[int(tool)%len(mcpFuzzTools)]
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		res, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
		if err != nil {
			if ctx.Err() != nil {
				t.Fatalf("%s %s: the server hung", name, args)
			}
			return // a protocol error: the request was refused as a whole
		}
		if res.IsError {
			var body struct {
				Error struct{ Code flow.Code } `json:"error"`
			}
			text := resultText(res)
			if json.Unmarshal([]byte(text), &body) != nil || strings.Contains(text, "\n") {
				t.Fatalf("%s %s: error %q is not one line of the error object", name, args, text)
			}
			if body.Error.Code == flow.CodeInternal || body.Error.Code == flow.CodeCorrupt {
				t.Fatalf("%s %s: %s", name, args, text)
			}
		}
	})
}
