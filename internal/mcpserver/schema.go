package mcpserver

import (
	"fmt"
	"reflect"
	"sort"

	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/view"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The input schemas an agent reads in tools/list: inferred from each
// tool's input struct (as the SDK would), then every parameter without a
// description gets one from paramDocs, and every closed set becomes an
// enum, so that a model never has to guess a value. The SDK validates
// arguments against this same schema.

// paramDocs describe parameters by name wherever the struct tag gives
// none (TestMCP_SchemasDescribeEveryParameter fails on one left out).
var paramDocs = map[string]string{
	"plan":          "plan id, like P-1",
	"title":         "one line, no control characters",
	"description":   "longer text; newlines and tabs are kept",
	"owner":         "who owns it, a name like alice",
	"tags":          "labels, like [\"backend\", \"parser\"]",
	"priority":      "0 to 1000, higher is more urgent (default 0)",
	"cwd":           "the directory it ran in, like /home/me/src/website",
	"success":       "whether it succeeded; give it or exit_code",
	"elapsed_ms":    "how long it ran, in milliseconds, like 812",
	"stderr":        "kept as head and tail, 16 KiB each",
	"added_vars":    "variables the code defined (the seeds' exec log), like [\"df\"]",
	"added_imports": "imports the code added, like [\"pandas\"]",
	"git_head":      "the git commit checked out, like 1a2b3c4",
	"actor":         "only events by this actor, like alice",
	"session":       "only events of this session (the agent session that wrote them)",
	"reason":        "why, in one line (recorded on the event)",
	"note":          "a short note on the step",
	"tag":           "only tasks with this tag, like backend",
}

// paramEnums are the closed sets, by tool and parameter.
var paramEnums = map[string]map[string][]string{
	"task_update":     {"claim": {"claim", "heartbeat", "release"}, "status": taskStatuses},
	"task_list":       {"status": taskStatuses},
	"step_update":     {"action": {"add", "start", "progress", "done", "fail", "skip"}},
	"approval_status": {"status": {"pending", "expired", "granted", "denied"}},
	"project_manage":  {"action": {"list", "show", "create", "archive"}},
}

// addTool is mcp.AddTool with the input schema completed.
func addTool[In, Out any](srv *mcp.Server, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) {
	s, err := jsonschema.ForType(reflect.TypeFor[In](), &jsonschema.ForOptions{})
	if err != nil {
		panic(fmt.Sprintf("tool %s: %v", t.Name, err))
	}
	completeSchema(s, paramEnums[t.Name])
	t.InputSchema = s
	out, err := jsonschema.ForType(reflect.TypeFor[Out](), &jsonschema.ForOptions{TypeSchemas: viewSchemas})
	if err != nil {
		panic(fmt.Sprintf("tool %s: %v", t.Name, err))
	}
	t.OutputSchema = out
	mcp.AddTool(srv, t, h)
}

// viewSchemas are the schemas of the view layer's types whose JSON is not
// what their Go kind says: times are RFC 3339 strings (null when unset),
// a context is an object, a JSON value a user gave is any value.
var viewSchemas = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[projection.Time](): {Types: []string{"null", "string"}, Description: "RFC 3339 time, null when unset"},
	reflect.TypeFor[view.Object]():     {Type: "object"},
	reflect.TypeFor[view.Value]():      {},
}

// completeSchema fills in descriptions and enums, depth first (the items
// of tasks[] too).
func completeSchema(s *jsonschema.Schema, enums map[string][]string) {
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		p := s.Properties[name]
		if p.Description == "" {
			p.Description = paramDocs[name]
		}
		if vals, ok := enums[name]; ok {
			p.Enum = make([]any, len(vals))
			for i, v := range vals {
				p.Enum[i] = v
			}
		}
		if p.Items != nil {
			completeSchema(p.Items, nil)
		}
		completeSchema(p, nil)
	}
}
