package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/digest"
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/view"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func toolNames(t *testing.T, h *mcpHarness) []string {
	t.Helper()
	res, err := h.cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	return names
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestMCP_Profiles: --tools and FLOW_MCP_TOOLS choose the tools listed.
func TestMCP_Profiles(t *testing.T) {
	t.Parallel()
	f := mcpFile(t)
	cases := []struct {
		name  string
		args  []string
		extra map[string]string
		want  []string
	}{
		{"Default", nil, nil, mcpProfiles["default"]},
		{"Standard", []string{"--tools", "standard"}, nil, mcpProfiles["standard"]},
		{"All", []string{"--tools", "all"}, nil, mcpProfiles["all"]},
		{"List", []string{"--tools", "task_get, rollback"}, nil, []string{"task_get", "rollback"}},
		{"ProfilePlusTool", []string{"--tools", "default,history"}, nil, append(slices.Clone(mcpProfiles["default"]), "history")},
		{"Env", nil, map[string]string{"FLOW_MCP_TOOLS": "task_list"}, []string{"task_list"}},
		{"FlagOverridesEnv", []string{"--tools", "task_get"}, map[string]string{"FLOW_MCP_TOOLS": "all"}, []string{"task_get"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := startMCP(t, f, "agent", c.extra, c.args...)
			if got, want := toolNames(t, h), sorted(c.want); !slices.Equal(got, want) {
				t.Errorf("tools = %v, want %v", got, want)
			}
		})
	}
	if n := len(mcpProfiles["default"]); n != 9 {
		t.Errorf("default profile has %d tools, want the 9 of the issue", n)
	}
}

// TestMCP_ToolMetadata: every tool has a description, input and output
// schemas, and annotations; reads are read-only, rollback destructive.
func TestMCP_ToolMetadata(t *testing.T) {
	t.Parallel()
	h := startMCP(t, mcpFile(t), "agent", nil, "--tools", "all")
	res, err := h.cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	readOnly := []string{"flow_prime", "task_ready", "task_get", "task_list", "approval_status", "history", "search"}
	for _, tl := range res.Tools {
		if tl.Description == "" || len(tl.Description) > 200 || tl.InputSchema == nil || tl.OutputSchema == nil || tl.Annotations == nil {
			t.Errorf("%s: description %q, input schema %v, output schema %v, annotations %v",
				tl.Name, tl.Description, tl.InputSchema != nil, tl.OutputSchema != nil, tl.Annotations)
			continue
		}
		a := tl.Annotations
		if got, want := a.ReadOnlyHint, slices.Contains(readOnly, tl.Name); got != want {
			t.Errorf("%s: readOnlyHint = %v, want %v", tl.Name, got, want)
		}
		if !a.ReadOnlyHint {
			destructive := tl.Name == "rollback" || tl.Name == "project_manage"
			if a.DestructiveHint == nil || *a.DestructiveHint != destructive {
				t.Errorf("%s: destructiveHint = %v, want %v", tl.Name, a.DestructiveHint, destructive)
			}
			props := tl.InputSchema.(map[string]any)["properties"].(map[string]any)
			if _, ok := props["request_id"]; !ok {
				t.Errorf("%s: a write without request_id", tl.Name)
			}
		}
	}
}

// TestMCP_TextContent: results carry a summary line and, by default, the
// JSON; --text summary keeps the line only.
func TestMCP_TextContent(t *testing.T) {
	t.Parallel()
	f := mcpFile(t)
	for _, c := range []struct {
		args []string
		want int
	}{{nil, 2}, {[]string{"--text", "summary"}, 1}, {[]string{"--text", "full"}, 2}} {
		h := startMCP(t, f, "agent", nil, c.args...)
		res := h.call("task_get", map[string]any{"id": "T-1"})
		if len(res.Content) != c.want {
			t.Errorf("mcp %v: %d text contents, want %d", c.args, len(res.Content), c.want)
		}
		if got := res.Content[0].(*mcp.TextContent).Text; !strings.HasPrefix(got, `T-1 "first" todo`) {
			t.Errorf("summary = %q", got)
		}
		if c.want == 2 {
			var got view.Task
			if err := json.Unmarshal([]byte(res.Content[1].(*mcp.TextContent).Text), &got); err != nil || got.ID != "T-1" {
				t.Errorf("second text is not the task's JSON: %v %+v", err, got)
			}
		}
	}
}

// TestMCP_Actor: writes are recorded as the client's name, unless
// FLOW_ACTOR or --actor says otherwise; ready and prime see that actor.
func TestMCP_Actor(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		extra map[string]string
		args  []string
		want  string
	}{
		{"ClientName", nil, nil, "claude-code"},
		{"FLOW_ACTOR", map[string]string{"FLOW_ACTOR": "alice"}, nil, "alice"},
		{"Flag", map[string]string{"FLOW_ACTOR": "alice"}, []string{"--actor", "bob"}, "bob"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := mcpFile(t)
			h := startMCP(t, f, "claude-code", c.extra, c.args...)
			var u taskUpdateOut
			h.mustCall("task_update", map[string]any{"id": "T-1", "claim": "claim", "status": "doing"}, &u)
			if u.Task.Claim == nil || u.Task.Claim.Actor != c.want {
				t.Errorf("claim = %+v, want by %q", u.Task.Claim, c.want)
			}
			evs := f.logEvents("--stream", "task/demo/T-1")
			last := evs[len(evs)-1]
			if last.Actor != c.want {
				t.Errorf("event %s actor = %q, want %q", last.Type, last.Actor, c.want)
			}
			var p primeOut
			h.mustCall("flow_prime", nil, &p)
			if p.Actor != c.want || !strings.Contains(p.Markdown, "T-1") {
				t.Errorf("prime actor = %q, want %q; markdown %q", p.Actor, c.want, p.Markdown)
			}
		})
	}
}

// TestMCP_CommonErrors: errors every tool shares: no file, an unknown
// project, a file locked by another writer (busy), a damaged file.
func TestMCP_CommonErrors(t *testing.T) {
	t.Parallel()
	t.Run("NoFile", func(t *testing.T) {
		t.Parallel()
		f := mcpFile(t)
		h := startMCP(t, f, "agent", nil, "--db", filepath.Join(t.TempDir(), "missing.db"))
		te := h.callErr("task_ready", nil, flow.CodeNotFound)
		if !strings.Contains(te.Hint, "flowctl init") {
			t.Errorf("hint %q does not say how to make the file", te.Hint)
		}
	})
	t.Run("UnknownProject", func(t *testing.T) {
		t.Parallel()
		h := startMCP(t, mcpFile(t), "agent", nil)
		h.callErr("task_get", map[string]any{"id": "T-1", "project": "nope"}, flow.CodeNotFound)
	})
	t.Run("NoProject", func(t *testing.T) {
		t.Parallel()
		f := mcpFile(t)
		f.mustRun("", "project", "new", "other")
		if err := os.Remove(filepath.Join(filepath.Dir(f.path), "current")); err != nil {
			t.Fatal(err)
		}
		h := startMCP(t, f, "agent", nil)
		te := h.callErr("task_ready", nil, flow.CodeInvalid)
		if !strings.Contains(te.Hint, "project") {
			t.Errorf("hint %q does not mention project", te.Hint)
		}
		h.mustCall("task_ready", map[string]any{"project": "demo"}, nil)
	})
	t.Run("Busy", func(t *testing.T) {
		t.Parallel()
		f := mcpFile(t)
		h := startMCP(t, f, "agent", nil, "--lock-timeout", "50ms")
		eng, err := flow.Open(f.path, flow.Options{Actor: "holder"})
		if err != nil {
			t.Fatal(err)
		}
		h.callErr("task_get", map[string]any{"id": "T-1"}, flow.CodeBusy)
		h.callErr("task_create", map[string]any{"title": "x"}, flow.CodeBusy)
		eng.Close()
		h.mustCall("task_get", map[string]any{"id": "T-1"}, nil)
	})
	t.Run("SchemaMismatch", func(t *testing.T) {
		t.Parallel()
		h := startMCP(t, mcpFile(t), "agent", nil)
		h.callErr("task_get", map[string]any{"id": 3}, flow.CodeInvalid)
		h.callErr("task_ready", map[string]any{"bogus": true}, flow.CodeInvalid)
		h.callErr("task_get", nil, flow.CodeInvalid)
	})
}

// TestMCP_CheckArguments: invalid UTF-8 and duplicate keys anywhere in
// the arguments are refused (the SDK would replace or drop them).
func TestMCP_CheckArguments(t *testing.T) {
	t.Parallel()
	ok := []string{``, `{}`, `{"a":1,"b":{"a":1}}`, `{"tasks":[{"key":"a"},{"key":"a"}]}`, `{"a":[[],{}],"b":[{"x":{"y":[1,{"x":2}]}}]}`, `{"k":"{\"k\":1,\"k\":2}"}`}
	bad := []string{"{\"t\":\"\xff\"}", `{"a":1,"a":2}`, `{"tasks":[{"key":"a","key":"b"}]}`, `{"p":{"x":{"y":1,"y":2}}}`, `{"a":[{"b":1},{"c":1,"c":2}]}`, `{"a":`}
	for _, s := range ok {
		if err := checkArguments([]byte(s)); err != nil {
			t.Errorf("checkArguments(%s) = %v, want nil", s, err)
		}
	}
	for _, s := range bad {
		if err := checkArguments([]byte(s)); !errors.Is(err, flow.ErrInvalid) {
			t.Errorf("checkArguments(%q) = %v, want ErrInvalid", s, err)
		}
	}
	h := startMCP(t, mcpFile(t), "agent", nil)
	h.callErr("task_create", json.RawMessage(`{"title":"a","title":"b"}`), flow.CodeInvalid)
	h.callErr("task_create", json.RawMessage(`{"tasks":[{"title":"a","deps":["T-1"],"deps":["T-2"]}]}`), flow.CodeInvalid)
}

// TestMCP_FlowPrime: the digest names the held task and the ready ones;
// a bad budget is invalid.
func TestMCP_FlowPrime(t *testing.T) {
	t.Parallel()
	h := startMCP(t, mcpFile(t), "agent", nil)
	h.mustCall("task_update", map[string]any{"id": "T-1", "claim": "claim", "status": "doing"}, nil)
	var p primeOut
	sum := h.mustCall("flow_prime", map[string]any{"budget": 500}, &p)
	if p.Project != "demo" || p.Actor != "agent" || p.HeadSeq == 0 || !strings.Contains(p.Markdown, "T-1") || !strings.Contains(sum, "demo") {
		t.Errorf("prime = %+v, summary %q", p, sum)
	}
	if len(p.Markdown) > 500*digest.PrimeCharsPerToken {
		t.Errorf("prime is %d bytes, over its budget of 500 tokens", len(p.Markdown))
	}
	h.callErr("flow_prime", map[string]any{"budget": -1}, flow.CodeInvalid)
	h.callErr("flow_prime", map[string]any{"project": "nope"}, flow.CodeNotFound)
}

// TestMCP_TaskReady: ready lists what can start; all explains the rest;
// the client's own claim does not hide a task from it.
func TestMCP_TaskReady(t *testing.T) {
	t.Parallel()
	f := mcpFile(t)
	h := startMCP(t, f, "agent", nil)
	var r readyOut
	sum := h.mustCall("task_ready", nil, &r)
	if len(r.Tasks) != 1 || r.Tasks[0].ID != "T-1" || !r.Tasks[0].Ready {
		t.Errorf("ready = %+v", r.Tasks)
	}
	if !strings.Contains(sum, `T-1 "first"`) {
		t.Errorf("summary %q does not name T-1", sum)
	}
	h.mustCall("task_ready", map[string]any{"all": true}, &r)
	if len(r.Tasks) != 2 || r.Tasks[1].Ready || len(r.Tasks[1].Reasons) == 0 || !strings.Contains(r.Tasks[1].Reasons[0], "T-1") {
		t.Errorf("ready all = %+v", r.Tasks)
	}
	h.mustCall("task_update", map[string]any{"id": "T-1", "claim": "claim"}, nil)
	h.mustCall("task_ready", nil, &r)
	if len(r.Tasks) != 1 || r.Tasks[0].ID != "T-1" || r.Tasks[0].ClaimedBy != "agent" {
		t.Errorf("own claim: ready = %+v", r.Tasks)
	}
	other := startMCP(t, f, "other-agent", nil)
	other.mustCall("task_ready", nil, &r)
	if len(r.Tasks) != 0 {
		t.Errorf("another client sees a claimed task as ready: %+v", r.Tasks)
	}
	h.callErr("task_ready", map[string]any{"project": "nope"}, flow.CodeNotFound)
}

// TestMCP_TaskGet: a task with its context and version; unknown and
// malformed ids.
func TestMCP_TaskGet(t *testing.T) {
	t.Parallel()
	h := startMCP(t, mcpFile(t), "agent", nil)
	var got view.Task
	h.mustCall("task_get", map[string]any{"id": "t-2"}, &got)
	if got.ID != "T-2" || got.Title != "second" || got.Status != "todo" || !slices.Equal(got.Deps, []string{"T-1"}) || got.Version != 1 {
		t.Errorf("task_get = %+v", got)
	}
	if ctx := got.Context; ctx != "{}" {
		t.Errorf("context = %#v, want {}", got.Context)
	}
	h.callErr("task_get", map[string]any{"id": "T-9"}, flow.CodeNotFound)
	h.callErr("task_get", map[string]any{"id": "nine"}, flow.CodeInvalid)
}

// TestMCP_TaskCreate: one task, a batch with deps between its items and
// on existing tasks, refusals before anything is written, and retries.
func TestMCP_TaskCreate(t *testing.T) {
	t.Parallel()
	f := mcpFile(t)
	h := startMCP(t, f, "agent", nil)

	t.Run("One", func(t *testing.T) {
		var out taskCreateOut
		sum := h.mustCall("task_create", map[string]any{"title": "third", "deps": []string{"T-1"}, "tags": []string{"x"}, "priority": 2}, &out)
		if len(out.Tasks) != 1 || out.Tasks[0].ID != "T-3" || !slices.Equal(out.Tasks[0].Deps, []string{"T-1"}) || out.Tasks[0].Priority != 2 {
			t.Errorf("created %+v", out.Tasks)
		}
		if sum != `created T-3 "third"` {
			t.Errorf("summary = %q", sum)
		}
	})
	t.Run("Batch", func(t *testing.T) {
		var out taskCreateOut
		h.mustCall("task_create", map[string]any{"tasks": []map[string]any{
			{"key": "design", "title": "design"},
			{"key": "build", "title": "build", "deps": []string{"design", "T-2"}},
			{"title": "ship", "deps": []string{"build", "design"}},
		}}, &out)
		want := []struct {
			key, id string
			deps    []string
		}{{"design", "T-4", nil}, {"build", "T-5", []string{"T-2", "T-4"}}, {"", "T-6", []string{"T-4", "T-5"}}}
		if len(out.Tasks) != len(want) {
			t.Fatalf("created %+v", out.Tasks)
		}
		for i, w := range want {
			if g := out.Tasks[i]; g.Key != w.key || g.ID != w.id || !slices.Equal(g.Deps, w.deps) {
				t.Errorf("tasks[%d] = %+v, want key %q id %s deps %v", i, g, w.key, w.id, w.deps)
			}
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, args := range []map[string]any{
			{},
			{"title": "  "},
			{"title": "a", "tasks": []map[string]any{{"title": "b"}}},
			{"tasks": []map[string]any{{"key": "a", "title": "a", "deps": []string{"b"}}, {"key": "b", "title": "b"}}},
			{"tasks": []map[string]any{{"key": "a", "title": "a"}, {"key": "a", "title": "b"}}},
			{"tasks": []map[string]any{{"title": "a"}, {"title": ""}}},
			{"title": "a", "plan": "plan-x"},
			{"title": strings.Repeat("x", flow.MaxTitle+1)},
			{"title": "a", "priority": -3},
			{"title": "a\nb"},
			{"title": "a\x1b[31mb\a"},
			{"title": "a\x00"},
			{"title": "a", "tags": []string{"x\ny"}},
			{"title": "a", "description": "ok\n\tbut \x1b[2J"},
			{"tasks": []map[string]any{{"title": "a"}, {"title": "b\rc"}}},
		} {
			h.callErr("task_create", args, flow.CodeInvalid)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		h.callErr("task_create", map[string]any{"title": "a", "deps": []string{"T-99"}}, flow.CodeNotFound)
		h.callErr("task_create", map[string]any{"tasks": []map[string]any{{"title": "a"}, {"title": "b", "deps": []string{"T-99"}}}}, flow.CodeNotFound)
		h.callErr("task_create", map[string]any{"title": "a", "plan": "P-7"}, flow.CodeNotFound)
	})
	t.Run("Retry", func(t *testing.T) {
		one := h.retried("task_create", map[string]any{"title": "once", "request_id": "req-1"})
		batch := h.retried("task_create", map[string]any{"request_id": "req-2", "tasks": []map[string]any{
			{"key": "a", "title": "a"}, {"title": "b", "deps": []string{"a"}}}})
		if one["tasks"].([]any)[0].(map[string]any)["id"] != "T-7" || len(batch["tasks"].([]any)) != 2 {
			t.Errorf("retried results: %v %v", one, batch)
		}
		h.callErr("task_create", map[string]any{"title": "other", "request_id": "req-1"}, flow.CodeConflict)
	})
	t.Run("FailedBatchCreatesNothing", func(t *testing.T) {
		args := map[string]any{"request_id": "req-3", "tasks": []map[string]any{
			{"key": "a", "title": "part one"}, {"title": strings.Repeat("x", flow.MaxTitle+1), "deps": []string{"a"}}}}
		before := f.bytes()
		res := h.call("task_create", args)
		te := wantToolError(t, "task_create", res, flow.CodeInvalid)
		if !strings.Contains(te.Message, "tasks[1]") || !strings.Contains(te.Message, "nothing was created") {
			t.Errorf("failed batch: %+v", te)
		}
		if !bytes.Equal(before, f.bytes()) {
			t.Error("a failed batch changed the file")
		}
		args["tasks"].([]map[string]any)[1]["title"] = "part two"
		var out taskCreateOut
		h.mustCall("task_create", args, &out)
		if len(out.Tasks) != 2 || out.Tasks[0].ID != "T-10" || out.Tasks[1].ID != "T-11" {
			t.Errorf("batch after the fix = %+v, want T-10 and T-11", out.Tasks)
		}
	})
	t.Run("ErrConflict", func(t *testing.T) {
		f.mustRun("", "project", "new", "old")
		f.mustRun("", "project", "archive", "old")
		h.callErr("task_create", map[string]any{"title": "a", "project": "old"}, flow.CodeConflict)
		h.callErr("task_create", map[string]any{"tasks": []map[string]any{{"title": "a"}}, "project": "old"}, flow.CodeConflict)
	})
}

// TestMCP_TaskUpdate: claim and start in one call, edits, moves, release,
// heartbeat, and every refusal.
func TestMCP_TaskUpdate(t *testing.T) {
	t.Parallel()
	f := mcpFile(t)
	h := startMCP(t, f, "agent", nil)
	var u taskUpdateOut

	h.mustCall("task_update", map[string]any{"id": "T-1", "claim": "claim", "status": "doing", "lease": "10m"}, &u)
	if u.Task.Status != "doing" || u.Task.Claim == nil || u.Task.Claim.Actor != "agent" || !slices.Equal(u.Applied, []string{"claim", "status"}) {
		t.Errorf("claim+start = %+v", u)
	}
	h.mustCall("task_update", map[string]any{"id": "T-1", "title": "first, renamed", "tags": []string{"a", "b"}, "priority": 3, "if_version": u.Task.Version}, &u)
	if u.Task.Title != "first, renamed" || u.Task.Priority != 3 || !slices.Equal(u.Task.Tags, []string{"a", "b"}) {
		t.Errorf("edit = %+v", u.Task)
	}
	h.mustCall("task_update", map[string]any{"id": "T-1", "claim": "heartbeat"}, &u)
	if !slices.Equal(u.Applied, []string{"heartbeat"}) {
		t.Errorf("heartbeat applied %v", u.Applied)
	}

	t.Run("ErrConflict", func(t *testing.T) {
		h.callErr("task_update", map[string]any{"id": "T-2", "status": "doing", "if_version": 7}, flow.CodeConflict)
		h.callErr("task_update", map[string]any{"id": "T-2", "status": "done"}, flow.CodeConflict) // todo -> done
		h.mustCall("task_update", map[string]any{"id": "T-2", "status": "doing"}, nil)
		te := h.callErr("task_update", map[string]any{"id": "T-2", "status": "done"}, flow.CodeConflict) // T-1 not done
		if !strings.Contains(te.Message, "T-1") {
			t.Errorf("blocked done: %q does not name T-1", te.Message)
		}
		f.mustRun("", "task", "claim", "T-2") // tester claims it
		h.callErr("task_update", map[string]any{"id": "T-2", "claim": "claim"}, flow.CodeConflict)
		h.callErr("task_update", map[string]any{"id": "T-2", "claim": "release"}, flow.CodeConflict)
		h.callErr("task_update", map[string]any{"id": "T-2", "claim": "heartbeat"}, flow.CodeConflict)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, args := range []map[string]any{
			{"id": "T-1"},
			{"id": "T-1", "status": "finished"},
			{"id": "T-1", "claim": "grab"},
			{"id": "T-1", "claim": "claim", "lease": "soon"},
			{"id": "T-1", "claim": "claim", "lease": "1000000h"},
			{"id": "T-1", "claim": "claim", "lease": "0s"},
			{"id": "T-1", "priority": -1},
			{"id": "T-1", "priority": 1001},
			{"id": "T-1", "title": ""},
			{"id": "T-1", "title": "a\nb"},
			{"id": "T-1", "owner": "ann\x1b[31m"},
			{"id": "T-1", "status": "blocked", "reason": "\x07"},
			{"id": "first"},
		} {
			h.callErr("task_update", args, flow.CodeInvalid)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		h.callErr("task_update", map[string]any{"id": "T-9", "status": "doing"}, flow.CodeNotFound)
		h.callErr("task_update", map[string]any{"id": "T-1", "plan": "P-4"}, flow.CodeNotFound)
	})
	t.Run("PartAppliedThenRefused", func(t *testing.T) {
		h.mustCall("task_create", map[string]any{"title": "gamma"}, nil) // T-3
		res := h.call("task_update", map[string]any{"id": "T-3", "claim": "claim", "status": "done"})
		te := wantToolError(t, "task_update", res, flow.CodeConflict)
		if !strings.Contains(te.Message, "after claim") {
			t.Errorf("message %q does not say the claim was applied", te.Message)
		}
	})
	t.Run("DoneAndRelease", func(t *testing.T) {
		h.mustCall("task_update", map[string]any{"id": "T-1", "status": "done", "claim": "release"}, &u)
		if u.Task.Status != "done" || u.Task.Claim != nil || !slices.Equal(u.Applied, []string{"status", "release"}) {
			t.Errorf("done+release = %+v", u)
		}
	})
	t.Run("Retry", func(t *testing.T) {
		h.mustCall("task_create", map[string]any{"title": "delta"}, nil) // T-4
		got := h.retried("task_update", map[string]any{"id": "T-4", "claim": "claim", "status": "doing", "owner": "me", "request_id": "u-1"})
		if got["task"].(map[string]any)["status"] != "doing" {
			t.Errorf("retried update = %v", got)
		}
		h.callErr("task_update", map[string]any{"id": "T-4", "claim": "claim", "status": "blocked", "owner": "me", "request_id": "u-1"}, flow.CodeConflict)
	})
}

// TestMCP_StepUpdate: add, start, progress, done, fail, skip, and refusals.
func TestMCP_StepUpdate(t *testing.T) {
	t.Parallel()
	h := startMCP(t, mcpFile(t), "agent", nil)
	var s view.TaskStep
	h.mustCall("step_update", map[string]any{"action": "add", "task": "T-1", "title": "parse"}, &s)
	if s.Task != "T-1" || s.ID != "T-1.1" || s.Status != "pending" {
		t.Errorf("add = %+v", s)
	}
	h.mustCall("step_update", map[string]any{"action": "start", "step": "T-1.1"}, &s)
	sum := h.mustCall("step_update", map[string]any{"action": "progress", "step": "T-1.1", "progress": 40, "note": "half"}, &s)
	if s.Status != "in_progress" || s.Progress != 40 || s.Note != "half" || !strings.Contains(sum, "40%") {
		t.Errorf("progress = %+v, %q", s, sum)
	}
	h.mustCall("step_update", map[string]any{"action": "done", "step": "T-1.1", "result": "ok"}, &s)
	if s.Status != "completed" || s.Progress != 100 || s.Result != "ok" {
		t.Errorf("done = %+v", s)
	}
	h.mustCall("step_update", map[string]any{"action": "add", "task": "T-1", "title": "two"}, nil)
	h.mustCall("step_update", map[string]any{"action": "skip", "step": "T-1.2"}, &s)
	h.mustCall("step_update", map[string]any{"action": "add", "task": "T-1", "title": "three"}, nil)
	h.mustCall("step_update", map[string]any{"action": "start", "step": "T-1.3"}, nil)
	h.mustCall("step_update", map[string]any{"action": "fail", "step": "T-1.3", "error": "boom"}, &s)
	if s.Status != "failed" || s.Error != "boom" {
		t.Errorf("fail = %+v", s)
	}
	for _, args := range []map[string]any{
		{"action": "jump", "step": "T-1.1"},
		{"action": "add", "title": "no task"},
		{"action": "add", "task": "T-1"},
		{"action": "start"},
		{"action": "progress", "step": "T-1.3"},
		{"action": "progress", "step": "T-1.3", "progress": 140},
		{"action": "start", "step": "T-1"},
	} {
		h.callErr("step_update", args, flow.CodeInvalid)
	}
	h.callErr("step_update", map[string]any{"action": "start", "step": "T-1.1"}, flow.CodeConflict) // completed is final
	h.callErr("step_update", map[string]any{"action": "add", "task": "T-1", "title": "x", "if_version": 1}, flow.CodeConflict)
	h.callErr("step_update", map[string]any{"action": "start", "step": "T-1.9"}, flow.CodeNotFound)
	h.callErr("step_update", map[string]any{"action": "add", "task": "T-9", "title": "x"}, flow.CodeNotFound)
	h.retried("step_update", map[string]any{"action": "add", "task": "T-2", "title": "once", "request_id": "s-1"})
	h.retried("step_update", map[string]any{"action": "start", "step": "T-2.1", "request_id": "s-2"})
}

// TestMCP_CtxMerge: merges return the merged context and the new version;
// the patch is stored byte for byte (a number no float64 holds survives).
func TestMCP_CtxMerge(t *testing.T) {
	t.Parallel()
	f := mcpFile(t)
	h := startMCP(t, f, "agent", nil)
	var c view.Context
	h.mustCall("ctx_merge", map[string]any{"task": "T-1", "patch": map[string]any{"branch": "main", "files": []string{"a.go"}, "meta": map[string]any{"x": 1}}}, &c)
	if c.Task != "T-1" || c.Version != 2 || c.ContextVersion != 1 {
		t.Errorf("merge = %+v", c)
	}
	sum := h.mustCall("ctx_merge", map[string]any{"task": "T-1", "patch": map[string]any{"branch": nil, "meta": map[string]any{"y": 2}}, "if_version": 2}, &c)
	want := map[string]any{"files": []any{"a.go"}, "meta": map[string]any{"x": 1.0, "y": 2.0}}
	if g, _ := json.Marshal(c.Context); string(g) != mustJSON(t, want) || c.Version != 3 {
		t.Errorf("merged context = %s v%d, want %s v3", g, c.Version, mustJSON(t, want))
	}
	if sum != "context of T-1: 2 keys (files, meta), v3" {
		t.Errorf("summary = %q", sum)
	}

	// Exact bytes: the SDK's client would turn 12345678901234567890 into a
	// float64, so send the arguments as raw JSON.
	raw := json.RawMessage(`{"task":"T-2","patch":{"big":12345678901234567890,"pi":3.14159265358979323846}}`)
	h.mustCall("ctx_merge", raw, nil)
	stored := f.mustRun("", "ctx", "get", "T-2")
	if !strings.Contains(stored, "12345678901234567890") || !strings.Contains(stored, "3.14159265358979323846") {
		t.Errorf("stored context %q lost the exact numbers", stored)
	}
	text, err := h.readResource("flow://task/T-2/context")
	if err != nil || text != `{"big":12345678901234567890,"pi":3.14159265358979323846}` {
		t.Errorf("context resource = %q, %v", text, err)
	}

	h.mustCall("ctx_merge", map[string]any{"task": "T-2", "patch": map[string]any{"only": true}, "replace": true}, &c)
	if g, _ := json.Marshal(c.Context); string(g) != `{"only":true}` {
		t.Errorf("replace = %s", g)
	}
	for _, patch := range []json.RawMessage{
		json.RawMessage(`{"task":"T-1","patch":[1,2]}`),
		json.RawMessage(`{"task":"T-1","patch":"text"}`),
		json.RawMessage(`{"task":"T-1","patch":{"a":1,"a":2}}`),
		json.RawMessage(`{"task":"T-1","patch":` + strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70) + `}`),
		json.RawMessage(`{"task":"T-1","patch":{"blob":"` + strings.Repeat("x", flow.MaxInput) + `"}}`),
		json.RawMessage(`{"task":"one","patch":{}}`),
	} {
		h.callErr("ctx_merge", patch, flow.CodeInvalid)
	}
	h.callErr("ctx_merge", map[string]any{"task": "T-9", "patch": map[string]any{"a": 1}}, flow.CodeNotFound)
	h.callErr("ctx_merge", map[string]any{"task": "T-1", "patch": map[string]any{"a": 1}, "if_version": 1}, flow.CodeConflict)
	h.retried("ctx_merge", map[string]any{"task": "T-1", "patch": map[string]any{"step": "review"}, "request_id": "c-1"})
	h.callErr("ctx_merge", map[string]any{"task": "T-1", "patch": map[string]any{"step": "other"}, "request_id": "c-1"}, flow.CodeConflict)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestMCP_ExecRecord: a run on a task, with its output; bad records.
func TestMCP_ExecRecord(t *testing.T) {
	t.Parallel()
	f := mcpFile(t)
	h := startMCP(t, f, "agent", nil)
	var x view.ExecSummary
	sum := h.mustCall("exec_record", map[string]any{"task": "T-1", "command": "go test ./...", "exit_code": 1, "elapsed_ms": 1520.5,
		"stdout": "FAIL\n", "stderr": "x_test.go:3: boom\n", "added_vars": []string{"x"}}, &x)
	if x.ID != "X-1" || x.Task != "T-1" || x.ExitCode != 1 || x.Success || x.Actor != "agent" || x.ElapsedMS != 1520.5 {
		t.Errorf("exec = %+v", x)
	}
	if sum != `recorded X-1 on T-1: "go test ./..." exit 1, 1520.5 ms` {
		t.Errorf("summary = %q", sum)
	}
	if out := f.mustRun("", "exec", "show", "X-1"); !strings.Contains(out, "x_test.go:3: boom") {
		t.Errorf("exec show does not have the stderr:\n%s", out)
	}
	h.mustCall("exec_record", map[string]any{"code": "print(1)\nprint(2)", "success": true}, &x)
	if x.ID != "X-2" || !x.Success || x.Command != "" || x.Code != "print(1)\nprint(2)" {
		t.Errorf("code exec = %+v", x)
	}
	for _, args := range []map[string]any{
		{"exit_code": 0},
		{"command": "ls"},
		{"command": "ls", "success": true, "exit_code": 2},
		{"command": "ls", "success": true, "step": "T-1"},
		{"command": "ls", "exit_code": 99999999999},
		{"command": "ls", "exit_code": -1},
		{"command": "ls", "exit_code": 256},
		{"command": "ls", "exit_code": 0, "elapsed_ms": 1e18},
		{"command": "ls\x1b[2J", "exit_code": 0},
		{"command": "ls", "exit_code": 0, "cwd": "/tmp\n/x"},
	} {
		h.callErr("exec_record", args, flow.CodeInvalid)
	}
	h.callErr("exec_record", map[string]any{"command": "ls", "success": true, "task": "T-9"}, flow.CodeNotFound)
	h.retried("exec_record", map[string]any{"command": "make", "exit_code": 0, "task": "T-2", "request_id": "x-1"})
}

// TestMCP_ApprovalRequest: a request keeps its task from done; the action
// is bound by its exact bytes.
func TestMCP_ApprovalRequest(t *testing.T) {
	t.Parallel()
	f := mcpFile(t)
	h := startMCP(t, f, "agent", nil, "--tools", "standard")
	var a view.Approval
	// Keys out of order and 1.50: a round trip through a Go map and a
	// float64 would give {"cmd":"deploy","n":1.5}.
	raw := json.RawMessage(`{"task":"T-1","message":"deploy?","action":{"n":1.50,"cmd":"deploy"},"ttl":"1h"}`)
	sum := h.mustCall("approval_request", raw, &a)
	if a.ID != "A-1" || a.Task != "T-1" || a.Status != "pending" || a.RequestedBy != "agent" || a.Expires == 0 {
		t.Errorf("approval = %+v", a)
	}
	if want := flow.ActionHash([]byte(`{"n":1.50,"cmd":"deploy"}`)); a.ActionHash != want {
		t.Errorf("action hash = %s, want the hash of the exact bytes %s", a.ActionHash, want)
	}
	if !strings.Contains(sum, "flowctl approval grant A-1") {
		t.Errorf("summary %q does not say how a person decides", sum)
	}
	h.mustCall("task_update", map[string]any{"id": "T-1", "status": "doing"}, nil)
	h.callErr("task_update", map[string]any{"id": "T-1", "status": "done"}, flow.CodePending)
	h.callErr("task_update", map[string]any{"id": "T-1", "status": "done", "force": true}, flow.CodePending)

	for _, args := range []map[string]any{
		{"task": "T-1"},
		{"task": "T-1", "message": "x", "ttl": "-1h"},
		{"task": "T-1", "message": "x", "ttl": "1000000h"},
		{"task": "T-1", "message": "x", "step": "T-2.1"},
	} {
		h.callErr("approval_request", args, flow.CodeInvalid)
	}
	h.callErr("approval_request", json.RawMessage(`{"message":"x","action":{"a":1,"a":2}}`), flow.CodeInvalid)
	h.callErr("approval_request", map[string]any{"task": "T-9", "message": "x"}, flow.CodeNotFound)
	f.mustRun("", "task", "cancel", "T-2")
	h.callErr("approval_request", map[string]any{"task": "T-2", "message": "x"}, flow.CodeConflict)
	h.retried("approval_request", map[string]any{"message": "project-wide", "request_id": "a-1"})
}

// TestMCP_ApprovalStatus: list, read one, and check one against an action:
// pending, denied, mismatched, granted.
func TestMCP_ApprovalStatus(t *testing.T) {
	t.Parallel()
	f := mcpFile(t)
	h := startMCP(t, f, "agent", nil, "--tools", "standard")
	h.mustCall("approval_request", json.RawMessage(`{"task":"T-1","message":"rm -rf build?","action":{"rm":"build"}}`), nil)
	h.mustCall("approval_request", map[string]any{"message": "other"}, nil)
	var s approvalStatusOut
	h.mustCall("approval_status", map[string]any{"task": "T-1"}, &s)
	if len(s.Approvals) != 1 || s.Approvals[0].ID != "A-1" || s.Granted {
		t.Errorf("list = %+v", s)
	}
	h.mustCall("approval_status", map[string]any{"status": "pending"}, &s)
	if len(s.Approvals) != 2 {
		t.Errorf("pending = %+v", s.Approvals)
	}
	h.callErr("approval_status", json.RawMessage(`{"id":"A-1","action":{"rm":"build"}}`), flow.CodePending)
	f.mustRun("", "approval", "grant", "A-1")
	h.mustCall("approval_status", json.RawMessage(`{"id":"A-1","action":{"rm":"build"}}`), &s)
	if !s.Granted || s.Approvals[0].DecidedBy != "tester" {
		t.Errorf("granted = %+v", s)
	}
	h.callErr("approval_status", json.RawMessage(`{"id":"A-1","action":{"rm":"/"}}`), flow.CodeConflict)
	f.mustRun("", "approval", "deny", "A-2")
	h.callErr("approval_status", json.RawMessage(`{"id":"A-2","action":{}}`), flow.CodeConflict)
	h.mustCall("approval_status", map[string]any{"id": "A-2"}, &s)
	if s.Granted || s.Approvals[0].Status != "denied" {
		t.Errorf("denied = %+v", s)
	}
	h.callErr("approval_status", map[string]any{"id": "A-9"}, flow.CodeNotFound)
	h.callErr("approval_status", map[string]any{"status": "maybe"}, flow.CodeInvalid)
	h.callErr("approval_status", map[string]any{"action": map[string]any{}}, flow.CodeInvalid)
}

// TestMCP_TaskList: filters, and bad ones.
func TestMCP_TaskList(t *testing.T) {
	t.Parallel()
	f := mcpFile(t)
	h := startMCP(t, f, "agent", nil, "--tools", "standard")
	f.mustRun("", "task", "start", "T-1")
	var l taskListOut
	h.mustCall("task_list", nil, &l)
	if len(l.Tasks) != 2 {
		t.Errorf("all = %+v", l.Tasks)
	}
	h.mustCall("task_list", map[string]any{"status": "doing"}, &l)
	if len(l.Tasks) != 1 || l.Tasks[0].ID != "T-1" {
		t.Errorf("doing = %+v", l.Tasks)
	}
	h.mustCall("task_list", map[string]any{"limit": 1}, &l)
	if len(l.Tasks) != 1 || l.Tasks[0].ID != "T-1" || !l.More {
		t.Errorf("limit 1 = %+v", l)
	}
	l = taskListOut{}
	h.mustCall("task_list", map[string]any{"limit": 2}, &l)
	if len(l.Tasks) != 2 || l.More {
		t.Errorf("limit 2 = %+v", l)
	}
	h.callErr("task_list", map[string]any{"limit": -1}, flow.CodeInvalid)
	h.callErr("task_list", map[string]any{"status": "later"}, flow.CodeInvalid)
	h.callErr("task_list", map[string]any{"plan": "x"}, flow.CodeInvalid)
	h.callErr("task_list", map[string]any{"project": "nope"}, flow.CodeNotFound)
}

// TestMCP_History: a task's events and the project's, newest limit.
func TestMCP_History(t *testing.T) {
	t.Parallel()
	h := startMCP(t, mcpFile(t), "agent", nil, "--tools", "standard")
	h.mustCall("ctx_merge", map[string]any{"task": "T-1", "patch": map[string]any{"a": 1}}, nil)
	var out historyOut
	h.mustCall("history", map[string]any{"task": "T-1"}, &out)
	if len(out.Events) != 2 || out.Events[0].Type != "task.created" || out.Events[1].Type != "task.context_merged" || out.Events[1].Actor != "agent" {
		t.Errorf("task history = %+v", out.Events)
	}
	h.mustCall("history", map[string]any{"limit": 2}, &out)
	if len(out.Events) != 2 || out.Events[1].Type != "task.context_merged" {
		t.Errorf("project history, limit 2 = %+v", out.Events)
	}
	h.mustCall("history", map[string]any{"type": "task.created", "since_seq": 3}, &out)
	if len(out.Events) != 1 || out.Events[0].Seq != 3 {
		t.Errorf("filtered = %+v", out.Events)
	}
	h.callErr("history", map[string]any{"limit": 5000}, flow.CodeInvalid)
	h.callErr("history", map[string]any{"task": "T-9"}, flow.CodeNotFound)
}

// TestMCP_DepUpdate: add and remove; a cycle is refused.
func TestMCP_DepUpdate(t *testing.T) {
	t.Parallel()
	h := startMCP(t, mcpFile(t), "agent", nil, "--tools", "standard")
	h.mustCall("task_create", map[string]any{"title": "third"}, nil)
	var d depUpdateOut
	h.mustCall("dep_update", map[string]any{"task": "T-3", "add": []string{"T-1", "T-2"}}, &d)
	if !slices.Equal(d.Deps, []string{"T-1", "T-2"}) {
		t.Errorf("deps = %+v", d)
	}
	h.mustCall("dep_update", map[string]any{"task": "T-3", "remove": []string{"T-1"}}, &d)
	if !slices.Equal(d.Deps, []string{"T-2"}) {
		t.Errorf("deps = %+v", d)
	}
	te := h.callErr("dep_update", map[string]any{"task": "T-1", "add": []string{"T-3"}}, flow.CodeConflict)
	if !strings.Contains(te.Message, "T-1 -> T-3 -> T-2 -> T-1") {
		t.Errorf("cycle message %q", te.Message)
	}
	h.callErr("dep_update", map[string]any{"task": "T-3"}, flow.CodeInvalid)
	h.callErr("dep_update", map[string]any{"task": "T-3", "add": []string{"x"}}, flow.CodeInvalid)
	h.callErr("dep_update", map[string]any{"task": "T-3", "add": []string{"T-9"}}, flow.CodeNotFound)
	h.callErr("dep_update", map[string]any{"task": "T-9", "add": []string{"T-1"}}, flow.CodeNotFound)
	h.retried("dep_update", map[string]any{"task": "T-3", "add": []string{"T-1"}, "remove": []string{"T-2"}, "request_id": "d-1"})
}

// TestMCP_CheckpointAndRollback: a checkpoint, a dry run that appends
// nothing, an applied rollback, and refusals.
func TestMCP_CheckpointAndRollback(t *testing.T) {
	t.Parallel()
	f := mcpFile(t)
	h := startMCP(t, f, "agent", nil, "--tools", "all")
	var c view.Checkpoint
	h.mustCall("checkpoint_create", map[string]any{"label": "before", "task": "T-1"}, &c)
	if c.ID != "C-1" || c.Label != "before" || c.AtSeq != 3 {
		t.Errorf("checkpoint = %+v", c)
	}
	h.callErr("checkpoint_create", map[string]any{"task": "T-9"}, flow.CodeNotFound)
	h.callErr("checkpoint_create", map[string]any{"label": strings.Repeat("l", flow.MaxTitle+1)}, flow.CodeInvalid)
	h.retried("checkpoint_create", map[string]any{"label": "again", "request_id": "cp-1"})

	h.mustCall("task_update", map[string]any{"id": "T-1", "status": "doing"}, nil)
	n := h.eventCount()
	var r rollbackOut
	sum := h.mustCall("rollback", map[string]any{"to": "C-1"}, &r)
	if r.Applied || len(r.Changes) == 0 || r.Changes[0].ID != "T-1" || h.eventCount() != n || !strings.Contains(sum, "dry run") {
		t.Errorf("dry run = %+v (%q), events %d -> %d", r, sum, n, h.eventCount())
	}
	h.mustCall("rollback", map[string]any{"to": "C-1", "apply": true, "reason": "undo"}, &r)
	if !r.Applied || r.Seq == 0 {
		t.Errorf("applied = %+v", r)
	}
	var got view.Task
	h.mustCall("task_get", map[string]any{"id": "T-1"}, &got)
	if got.Status != "todo" {
		t.Errorf("after rollback T-1 is %s", got.Status)
	}
	h.callErr("rollback", map[string]any{"to": "C-9"}, flow.CodeNotFound)
	h.callErr("rollback", map[string]any{"to": "yesterday"}, flow.CodeInvalid)
	h.callErr("rollback", map[string]any{"to": "99999"}, flow.CodeInvalid)
	h.callErr("rollback", map[string]any{"to": "C-1", "task": "T-9", "apply": true}, flow.CodeNotFound)

	h.mustCall("task_update", map[string]any{"id": "T-2", "title": "renamed"}, nil)
	args := map[string]any{"to": "C-1", "task": "T-2", "apply": true, "request_id": "rb-1"}
	h.mustCall("rollback", args, &r)
	n = h.eventCount()
	h.mustCall("rollback", args, &r)
	if h.eventCount() != n || !r.Applied {
		t.Errorf("retried rollback: %+v, events %d -> %d", r, n, h.eventCount())
	}
}

// TestMCP_ProjectManage: list, create, show, archive and refusals.
func TestMCP_ProjectManage(t *testing.T) {
	t.Parallel()
	h := startMCP(t, mcpFile(t), "agent", nil, "--tools", "all")
	var p projectOut
	h.mustCall("project_manage", map[string]any{"action": "create", "name": "site", "description": "the site"}, &p)
	if len(p.Projects) != 1 || p.Projects[0].Name != "site" || p.Projects[0].Archived {
		t.Errorf("create = %+v", p)
	}
	var ready readyOut
	h.mustCall("task_ready", nil, &ready) // demo stays selected
	h.mustCall("project_manage", map[string]any{"action": "list"}, &p)
	if len(p.Projects) != 2 {
		t.Errorf("list = %+v", p)
	}
	h.mustCall("project_manage", map[string]any{"action": "show", "name": "de"}, &p)
	if p.Projects[0].Name != "demo" || p.Projects[0].Counters.Tasks != 2 {
		t.Errorf("show = %+v", p)
	}
	h.mustCall("project_manage", map[string]any{"action": "archive", "name": "site", "reason": "done"}, &p)
	if !p.Projects[0].Archived {
		t.Errorf("archive = %+v", p)
	}
	h.callErr("project_manage", map[string]any{"action": "create", "name": "demo"}, flow.CodeConflict)
	h.callErr("project_manage", map[string]any{"action": "create", "name": "bad name!"}, flow.CodeInvalid)
	h.callErr("project_manage", map[string]any{"action": "rename", "name": "demo"}, flow.CodeInvalid)
	h.callErr("project_manage", map[string]any{"action": "show"}, flow.CodeInvalid)
	h.callErr("project_manage", map[string]any{"action": "show", "name": "nope"}, flow.CodeNotFound)
	h.callErr("project_manage", map[string]any{"action": "archive", "name": "nope"}, flow.CodeNotFound)
	h.retried("project_manage", map[string]any{"action": "create", "name": "again", "request_id": "p-1"})
}

// TestMCP_Resources: a task, its context, and the events from a seq on;
// unknown ones are JSON-RPC errors carrying the code.
func TestMCP_Resources(t *testing.T) {
	t.Parallel()
	h := startMCP(t, mcpFile(t), "agent", nil)
	res, err := h.cs.ListResourceTemplates(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var templates []string
	for _, rt := range res.ResourceTemplates {
		templates = append(templates, rt.URITemplate)
	}
	if want := []string{"flow://events?since={seq}", "flow://task/{id}", "flow://task/{id}/context"}; !slices.Equal(sorted(templates), want) {
		t.Errorf("templates = %v, want %v", templates, want)
	}
	h.mustCall("ctx_merge", map[string]any{"task": "T-1", "patch": map[string]any{"k": "v"}}, nil)

	text, err := h.readResource("flow://task/T-1")
	var task view.Task
	if err != nil || json.Unmarshal([]byte(text), &task) != nil || task.ID != "T-1" || task.Version != 2 {
		t.Errorf("task resource = %q, %v", text, err)
	}
	if text, err := h.readResource("flow://task/T-1/context"); err != nil || text != `{"k":"v"}` {
		t.Errorf("context resource = %q, %v", text, err)
	}
	var evs eventsResource
	text, err = h.readResource("flow://events?since=2")
	if err != nil || json.Unmarshal([]byte(text), &evs) != nil {
		t.Fatalf("events resource = %q, %v", text, err)
	}
	if len(evs.Events) != 3 || evs.Events[0].Seq != 2 || evs.NextSince != 5 || evs.More {
		t.Errorf("events since 2 = %+v", evs)
	}
	text, _ = h.readResource("flow://events?since=5")
	if json.Unmarshal([]byte(text), &evs) != nil || len(evs.Events) != 0 || evs.NextSince != 5 {
		t.Errorf("events since 5 = %q", text)
	}

	for uri, code := range map[string]flow.Code{
		"flow://task/T-9":         flow.CodeNotFound,
		"flow://task/T-9/context": flow.CodeNotFound,
		"flow://task/x":           flow.CodeInvalid,
		"flow://events?since=x":   flow.CodeInvalid,
		"flow://nothing":          flow.CodeNotFound,
	} {
		_, err := h.readResource(uri)
		var we *jsonrpc.Error
		if !errors.As(err, &we) {
			t.Errorf("%s: error %v, want a JSON-RPC error", uri, err)
			continue
		}
		if uri == "flow://nothing" {
			continue // refused by the SDK: no template matches
		}
		var data struct {
			Error ToolError `json:"error"`
		}
		if err := json.Unmarshal(we.Data, &data); err != nil || data.Error.Code != code {
			t.Errorf("%s: error data %s, want code %s", uri, we.Data, code)
		}
	}
}

// TestMCP_EventsPaging: a read returns at most a page; next_since goes on.
func TestMCP_EventsPaging(t *testing.T) {
	t.Parallel()
	f := mustInit(t, "--project", "demo")
	eng, err := flow.Open(f.path, flow.Options{Actor: "bulk", NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range eventsPage + 10 {
		if _, err := eng.AddTask(flow.NewTask{Project: "demo", Title: fmt.Sprintf("t%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := eng.Close(); err != nil {
		t.Fatal(err)
	}
	h := startMCP(t, f, "agent", nil)
	var evs eventsResource
	text, err := h.readResource("flow://events?since=0")
	if err != nil || json.Unmarshal([]byte(text), &evs) != nil {
		t.Fatal(text, err)
	}
	if len(evs.Events) != eventsPage || !evs.More || evs.NextSince != eventsPage+1 {
		t.Errorf("first page: %d events, more %v, next %d", len(evs.Events), evs.More, evs.NextSince)
	}
	text, _ = h.readResource(fmt.Sprintf("flow://events?since=%d", evs.NextSince))
	if json.Unmarshal([]byte(text), &evs) != nil || len(evs.Events) != 11 || evs.More {
		t.Errorf("second page: %d events, more %v", len(evs.Events), evs.More)
	}
}

// TestMCP_ClosesFileBetweenCalls: while the server runs, the CLI in the
// same process writes to the file between two calls, and the server sees
// it (the cache follows the head).
func TestMCP_ClosesFileBetweenCalls(t *testing.T) {
	t.Parallel()
	f := mcpFile(t)
	h := startMCP(t, f, "agent", nil)
	var got view.Task
	h.mustCall("task_get", map[string]any{"id": "T-1"}, &got)
	f.mustRun("", "task", "edit", "T-1", "--title", "changed by a person")
	h.mustCall("task_get", map[string]any{"id": "T-1"}, &got)
	if got.Title != "changed by a person" {
		t.Errorf("after a CLI edit the server reads %q", got.Title)
	}
}

// TestMCP_TaskUpdateIsAllOrNothing: a call whose last part is refused
// applies none of its parts.
func TestMCP_TaskUpdateIsAllOrNothing(t *testing.T) {
	t.Parallel()
	f := mcpFile(t)
	h := startMCP(t, f, "agent", nil)
	before := f.bytes()
	h.callErr("task_update", map[string]any{"id": "T-2", "claim": "claim", "status": "done"}, flow.CodeConflict)
	if !bytes.Equal(before, f.bytes()) {
		t.Fatal("a refused task_update applied its claim")
	}
}
