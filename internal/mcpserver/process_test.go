package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// mcpChild is `flowctl mcp` spoken to in raw JSON-RPC lines: a real child
// process (the test binary as flowctl, see TestMain) or the command tree
// run in process on pipes.
type mcpChild struct {
	t      *testing.T
	cmd    *exec.Cmd    // nil in process
	wait   func() error // waits for the server to exit; an error unless it exited 0
	stdin  io.WriteCloser
	lines  chan string // every stdout line, in order
	mu     sync.Mutex
	stdout []string // every stdout line read so far
	stderr lockedBuffer
	nextID int
}

func startMCPChild(t *testing.T, dir string, args ...string) *mcpChild {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, flowctlBin, append([]string{"mcp"}, args...)...)
	cmd.Dir = dir
	cmd.Env = environ(nil)
	c := &mcpChild{t: t, cmd: cmd, wait: cmd.Wait, lines: make(chan string, 64)}
	cmd.Stderr = &c.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.stdin = stdin
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go c.readLines(stdout)
	return c
}

// startMCPInProcess was the command tree run in process; the server now
// lives in its own package, and the tests run the flowctl binary.
func startMCPInProcess(t *testing.T, dir string, args ...string) *mcpChild {
	t.Helper()
	return startMCPChild(t, dir, args...)
}

// readLines passes every line the server writes to c.lines.
func (c *mcpChild) readLines(stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		c.mu.Lock()
		c.stdout = append(c.stdout, sc.Text())
		c.mu.Unlock()
		c.lines <- sc.Text()
	}
	close(c.lines)
}

// send writes one raw JSON-RPC line.
func (c *mcpChild) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.stdin, line+"\n"); err != nil {
		c.t.Fatalf("writing to flowctl mcp: %v", err)
	}
}

// request sends a request and returns the response's result (or error).
func (c *mcpChild) request(method, params string) (result, rpcErr json.RawMessage) {
	c.t.Helper()
	c.nextID++
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, c.nextID, method, params))
	timeout := time.After(20 * time.Second)
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("%s: flowctl mcp closed stdout (stderr %q)", method, c.stderr.String())
			}
			var resp struct {
				ID     int             `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal([]byte(line), &resp) == nil && resp.ID == c.nextID {
				return resp.Result, resp.Error
			}
		case <-timeout:
			c.t.Fatalf("%s: no response", method)
		}
	}
}

// callTool calls a tool with raw JSON arguments and returns the result.
func (c *mcpChild) callTool(name, args string) (structured json.RawMessage, text string) {
	c.t.Helper()
	res, rpcErr := c.request("tools/call", fmt.Sprintf(`{"name":%q,"arguments":%s}`, name, args))
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	}
	if rpcErr != nil || json.Unmarshal(res, &r) != nil || r.IsError || len(r.Content) == 0 {
		c.t.Fatalf("%s %s: result %s, error %s", name, args, res, rpcErr)
	}
	return r.StructuredContent, r.Content[0].Text
}

// close hangs up (EOF on stdin) and waits for a clean exit.
func (c *mcpChild) close() {
	c.t.Helper()
	c.stdin.Close()
	for range c.lines {
	}
	if err := c.wait(); err != nil {
		c.t.Errorf("flowctl mcp: %v (stderr %q)", err, c.stderr.String())
	}
}

// TestMCPProcess_Stdio: a real `flowctl mcp` process over stdio: the
// handshake, tools/list, tool calls; another flowctl process writes to the
// file between two calls and the server sees it; every line the server
// wrote on stdout is a JSON-RPC message, and its log went to stderr.
func TestMCPProcess_Stdio(t *testing.T) {
	t.Parallel()
	f := mcpFile(t)
	c := startMCPChild(t, f.dir)

	res, rpcErr := c.request("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw-client","version":"0"}}`)
	if rpcErr != nil || !strings.Contains(string(res), `"name":"flowctl"`) {
		t.Fatalf("initialize: %s %s", res, rpcErr)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	res, rpcErr = c.request("tools/list", `{}`)
	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if rpcErr != nil || json.Unmarshal(res, &list) != nil || len(list.Tools) != len(mcpProfiles["default"]) {
		t.Fatalf("tools/list: %s %s", res, rpcErr)
	}

	// The patch's bytes are kept as sent: spaces, key order, 1.50.
	structured, text := c.callTool("ctx_merge", `{"task":"T-1","patch":{"z": 1.50, "a": [1, 2]},"request_id":"p-1"}`)
	if !strings.Contains(string(structured), `"version":2`) || !strings.HasPrefix(text, "context of T-1") {
		t.Errorf("ctx_merge: %s %q", structured, text)
	}
	if got := f.mustRun("", "log", "-o", "json", "--type", "task.context_merged"); !strings.Contains(got, `"patch":{"z":1.50,"a":[1,2]}`) {
		t.Errorf("the patch shown is not the one sent:\n%s", got)
	}
	if raw := exportedRaw(t, f, 4); !strings.Contains(string(raw), `{"z": 1.50, "a": [1, 2]}`) {
		t.Errorf("the stored patch is not the bytes sent: %q", raw)
	}

	// Invalid UTF-8 in an argument is refused, not replaced with U+FFFD.
	res, rpcErr = c.request("tools/call", "{\"name\":\"task_create\",\"arguments\":{\"title\":\"bad \xff\"}}")
	if rpcErr == nil && !strings.Contains(string(res), `\"code\":\"invalid\"`) {
		t.Errorf("invalid UTF-8 title: %s", res)
	}
	if out := f.mustRun("", "task", "ls"); strings.Contains(out, "bad") {
		t.Errorf("a task with an invalid UTF-8 title was created:\n%s", out)
	}

	// Another flowctl process writes while the server runs.
	if _, stderr, code := f.run("", "task", "add", "from another process"); code != 0 {
		t.Fatalf("flowctl task add in another process: exit %d, %s", code, stderr)
	}
	structured, text = c.callTool("task_ready", `{"all":true}`)
	if !strings.Contains(string(structured), "from another process") || !strings.Contains(text, "T-3") {
		t.Errorf("task_ready after another process wrote: %s %q", structured, text)
	}
	structured, _ = c.callTool("task_get", `{"id":"T-3"}`)
	if !strings.Contains(string(structured), `"title":"from another process"`) {
		t.Errorf("task_get T-3: %s", structured)
	}
	ev := f.logEvents("--type", "task.context_merged")
	if len(ev) != 1 || ev[0].Actor != "raw-client" {
		t.Errorf("the merge was recorded as %+v, want actor raw-client", ev)
	}

	c.close()
	c.mu.Lock()
	lines := c.stdout
	c.mu.Unlock()
	if len(lines) != 6 { // initialize, tools/list and four calls
		t.Errorf("%d lines on stdout, want 6 responses", len(lines))
	}
	for i, line := range lines {
		msg, err := jsonrpc.DecodeMessage([]byte(line))
		var head struct {
			JSONRPC string `json:"jsonrpc"`
		}
		if err != nil || msg == nil || json.Unmarshal([]byte(line), &head) != nil || head.JSONRPC != "2.0" {
			t.Errorf("stdout line %d is not a JSON-RPC 2.0 message (%v): %.200s", i+1, err, line)
		}
	}
	if !strings.Contains(c.stderr.String(), "flowctl mcp: serving 9 tools") {
		t.Errorf("stderr = %q, want the start-up line there", c.stderr.String())
	}
}

// TestMCPProcess_Signal: SIGTERM ends the server at once, cleanly (exit 0,
// nothing but the start-up line on stderr).
func TestMCPProcess_Signal(t *testing.T) {
	t.Parallel()
	c := startMCPChild(t, mcpFile(t).dir)
	if _, rpcErr := c.request("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"0"}}`); rpcErr != nil {
		t.Fatal(string(rpcErr))
	}
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("after SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("flowctl mcp did not exit on SIGTERM")
	}
	if lines := strings.Split(strings.TrimSpace(c.stderr.String()), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "flowctl mcp: serving") {
		t.Errorf("stderr = %q", c.stderr.String())
	}
}
