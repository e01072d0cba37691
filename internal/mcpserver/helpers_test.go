package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpHarness is `flowctl mcp` run as a child process on pipes, driven by
// the SDK's own client.
type mcpHarness struct {
	t      *testing.T
	f      *flowFile
	cs     *mcp.ClientSession
	exit   chan int
	stderr *lockedBuffer
}

// lockedBuffer is a bytes.Buffer that several goroutines can share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// mcpEnv is the server's environment: testEnv without FLOW_ACTOR (the
// actor comes from the client's name), plus extra.
func mcpEnv(extra map[string]string) map[string]string {
	vars := map[string]string{}
	for k, v := range testEnv {
		if k != "FLOW_ACTOR" {
			vars[k] = v
		}
	}
	for k, v := range extra {
		vars[k] = v
	}
	return vars
}

// startMCP runs `flowctl mcp args...` in f's directory and connects a
// client named client to it. Cleanup hangs up and checks the server
// exited 0.
func startMCP(t *testing.T, f *flowFile, client string, extra map[string]string, args ...string) *mcpHarness {
	t.Helper()
	h := &mcpHarness{t: t, f: f, exit: make(chan int, 1), stderr: &lockedBuffer{}}
	cmd := exec.Command(flowctlBin, append([]string{"mcp"}, args...)...)
	cmd.Dir, cmd.Env, cmd.Stderr = f.dir, environ(mcpEnv(extra)), h.stderr
	clientOut, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	clientIn, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := cmd.Wait()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			code = -1
		}
		h.exit <- code
	}()
	c := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1.0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		cmd.Process.Kill()
		t.Fatalf("connect: %v (server stderr %q)", err, h.stderr.String())
	}
	h.cs = cs
	t.Cleanup(h.stop)
	return h
}

// stop hangs up and waits for the server to exit.
func (h *mcpHarness) stop() {
	h.t.Helper()
	if h.cs == nil {
		return
	}
	h.cs.Close()
	h.cs = nil
	select {
	case code := <-h.exit:
		if code != 0 {
			h.t.Errorf("flowctl mcp exited %d, stderr %q", code, h.stderr.String())
		}
	case <-time.After(10 * time.Second):
		h.t.Errorf("flowctl mcp did not exit after the client hung up")
	}
	if s := h.stderr.String(); strings.Contains(s, "panic") || strings.Contains(s, "level=ERROR") {
		h.t.Errorf("server stderr: %s", s)
	}
}

// call calls a tool and returns the result; a protocol error fails the test.
func (h *mcpHarness) call(name string, args any) *mcp.CallToolResult {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		h.t.Fatalf("%s: protocol error: %v", name, err)
	}
	return res
}

// mustCall calls a tool that must succeed, decodes its structured result
// into out (when not nil) and returns the summary line.
func (h *mcpHarness) mustCall(name string, args any, out any) string {
	h.t.Helper()
	res := h.call(name, args)
	if res.IsError {
		h.t.Fatalf("%s %v: tool error %s", name, args, resultText(res))
	}
	if res.StructuredContent == nil {
		h.t.Fatalf("%s: no structured content", name)
	}
	if out != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			h.t.Fatal(err)
		}
		reflect.ValueOf(out).Elem().SetZero() // no field left from an earlier call
		if err := json.Unmarshal(b, out); err != nil {
			h.t.Fatalf("%s: structured content %s: %v", name, b, err)
		}
	}
	if len(res.Content) == 0 {
		h.t.Fatalf("%s: no text content", name)
	}
	summary := res.Content[0].(*mcp.TextContent).Text
	if summary == "" || strings.Contains(summary, "\n") {
		h.t.Errorf("%s: summary %q is not one line", name, summary)
	}
	return summary
}

// callErr calls a tool that must fail with code, leaving the file exactly
// as it was, and returns the error object.
func (h *mcpHarness) callErr(name string, args any, code flow.Code) ToolError {
	h.t.Helper()
	before := h.f.bytes()
	res := h.call(name, args)
	te := wantToolError(h.t, name, res, code)
	if !bytes.Equal(before, h.f.bytes()) {
		h.t.Errorf("%s %v failed with %s but changed the file", name, args, code)
	}
	return te
}

// wantToolError checks that res is a tool error with code: one text
// content that is the JSON error object, with a message and a hint.
func wantToolError(t *testing.T, name string, res *mcp.CallToolResult, code flow.Code) ToolError {
	t.Helper()
	if !res.IsError {
		t.Fatalf("%s: succeeded (%s), want error %s", name, resultText(res), code)
	}
	if len(res.Content) != 1 || res.StructuredContent != nil {
		t.Errorf("%s: error result has %d contents and structured content %v", name, len(res.Content), res.StructuredContent)
	}
	text := resultText(res)
	var body struct {
		Error ToolError `json:"error"`
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil || strings.Contains(text, "\n") {
		t.Fatalf("%s: error text %q is not one line of {\"error\":{...}}: %v", name, text, err)
	}
	if body.Error.Code != code {
		t.Errorf("%s: error code = %q, want %q (%s)", name, body.Error.Code, code, body.Error.Message)
	}
	if body.Error.Message == "" || body.Error.Hint == "" {
		t.Errorf("%s: error without message or hint: %s", name, text)
	}
	return body.Error
}

// eventCount is how many events the file holds.
func (h *mcpHarness) eventCount() int {
	h.t.Helper()
	return len(h.f.logEvents())
}

// retried calls a write twice with the same arguments (a request_id among
// them): the second call must return the same structured result and
// append nothing.
func (h *mcpHarness) retried(name string, args map[string]any) map[string]any {
	h.t.Helper()
	var first, second map[string]any
	h.mustCall(name, args, &first)
	n := h.eventCount()
	h.mustCall(name, args, &second)
	if got := h.eventCount(); got != n {
		h.t.Errorf("%s retried with request_id %v: %d events appended", name, args["request_id"], got-n)
	}
	a, _ := json.Marshal(first)
	b, _ := json.Marshal(second)
	if !bytes.Equal(a, b) {
		h.t.Errorf("%s retried: result differs\nfirst:  %s\nsecond: %s", name, a, b)
	}
	return first
}

// readResource reads a resource's text.
func (h *mcpHarness) readResource(uri string) (string, error) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := h.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return "", err
	}
	if len(res.Contents) != 1 {
		h.t.Fatalf("%s: %d contents", uri, len(res.Contents))
	}
	return res.Contents[0].Text, nil
}

// mcpFile is a fresh file with project demo and tasks T-1 "first" and
// T-2 "second" (T-2 depends on T-1), made with the CLI as "tester".
func mcpFile(t *testing.T) *flowFile {
	t.Helper()
	f := mustInit(t, "--project", "demo")
	f.mustRun("", "task", "add", "first")
	f.mustRun("", "task", "add", "second", "--dep", "T-1")
	return f
}
