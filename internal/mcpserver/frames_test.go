package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow"
)

// rpcReply is one line the server wrote, decoded.
type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// next returns the next line the server writes.
func (c *mcpChild) next() rpcReply {
	c.t.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok {
			c.t.Fatalf("flowctl mcp closed stdout (stderr %q)", c.stderr.String())
		}
		var r rpcReply
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			c.t.Fatalf("stdout line is not JSON (%v): %.200s", err, line)
		}
		return r
	case <-time.After(20 * time.Second):
		c.t.Fatalf("no answer (stderr %q)", c.stderr.String())
	}
	return rpcReply{}
}

// initialize does the handshake.
func (c *mcpChild) initialize() {
	c.t.Helper()
	if res, rpcErr := c.request("initialize", mcpInitParams); rpcErr != nil {
		c.t.Fatalf("initialize: %s %s", res, rpcErr)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

const mcpInitParams = `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw-client","version":"0"}}`

// nested is a JSON value nested depth levels deep.
func nested(depth int) string {
	return strings.Repeat("[", depth) + strings.Repeat("]", depth)
}

// toolCallFrame is a tools/call request with raw arguments.
func toolCallFrame(id int, name, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, name, args)
}

// TestMCP_BadFrames: a frame the server cannot take is answered with a
// JSON-RPC error (or, for arguments it can read, a tool error), the
// session goes on, the next request is answered, the server exits 0 when
// stdin closes, and the file is as it was.
func TestMCP_BadFrames(t *testing.T) {
	t.Parallel()
	huge := toolCallFrame(900, "task_create", `{"title":"`+strings.Repeat("x", 20<<20)+`"}`)
	tests := []struct {
		name  string
		frame string
		code  int64  // the JSON-RPC error code; 0: a tool error invalid
		id    string // the id of the answer
	}{
		{"NotJSON", `{bad json`, -32700, "null"},
		{"ArrayOfNumbers", `[1,2,3]`, -32600, "null"},
		{"String", `"hello"`, -32600, "null"},
		{"Number", `5`, -32600, "null"},
		{"Null", `null`, -32600, "null"},
		{"EmptyObject", `{}`, -32600, "null"},
		{"TrailingComma", `{"jsonrpc":"2.0","id":900,"method":"ping",}`, -32700, "null"},
		{"Batch", `[{"jsonrpc":"2.0","id":900,"method":"ping"}]`, -32600, "null"},
		{"EmptyBatch", `[]`, -32600, "null"},
		{"WrongVersion", `{"jsonrpc":"1.0","id":900,"method":"ping"}`, -32600, "900"},
		{"ObjectID", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, "null"},
		{"StringIDNoMethod", `{"jsonrpc":"2.0","id":"x","params":{}}`, -32600, `"x"`},
		{"TwoMessagesOnALine", `{"jsonrpc":"2.0","id":900,"method":"ping"} {"jsonrpc":"2.0","id":901,"method":"ping"}`, -32700, "null"},
		{"DeepArguments", toolCallFrame(900, "task_create", `{"title":"x","a":`+nested(10001)+`}`), -32600, "900"},
		{"DeepArgumentsInTheFrameLimit", toolCallFrame(900, "ctx_merge", `{"task":"T-1","patch":{"a":`+nested(500)+`}}`), 0, "900"},
		{"HugeLine", huge, -32600, "900"},
		{"LargeArgumentsInTheFrameLimit", toolCallFrame(900, "task_create", `{"title":"`+strings.Repeat("x", 2<<20)+`"}`), 0, "900"},
		{"TruncatedLine", toolCallFrame(900, "task_get", `{"id":"T-1"}`)[:60], -32700, "null"},
		{"TruncatedBeforeAValue", `{"jsonrpc":"2.0","id":900,"method":"tools/call","params":{"name":"task_get","arguments":`, -32700, "null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := mcpFile(t)
			before := f.bytes()
			c := startMCPInProcess(t, f.dir)
			c.initialize()
			c.send(tt.frame)
			r := c.next()
			if string(r.ID) != tt.id {
				t.Errorf("answer id %s, want %s", r.ID, tt.id)
			}
			if tt.code != 0 && (r.Error == nil || r.Error.Code != tt.code || r.Error.Message == "") {
				t.Errorf("answer %+v %.200s, want error %d", r.Error, r.Result, tt.code)
			}
			if tt.code == 0 && !isToolErrorInvalid(r.Result) {
				t.Errorf("answer %+v %.200s, want a tool error invalid", r.Error, r.Result)
			}
			// The next request is answered.
			_, text := c.callTool("task_get", `{"id":"T-1"}`)
			if !strings.Contains(text, "T-1") {
				t.Errorf("task_get after the bad frame: %q", text)
			}
			c.close()
			if !bytes.Equal(before, f.bytes()) {
				t.Errorf("the bad frame changed the file")
			}
		})
	}
}

// isToolErrorInvalid reports whether result is a tool error with code invalid.
func isToolErrorInvalid(result json.RawMessage) bool {
	var r struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if json.Unmarshal(result, &r) != nil || !r.IsError || len(r.Content) != 1 {
		return false
	}
	var body struct {
		Error ToolError `json:"error"`
	}
	return json.Unmarshal([]byte(r.Content[0].Text), &body) == nil && body.Error.Code == flow.CodeInvalid
}

// TestMCP_FramesAfterBadOnes: several bad frames in a row, blank lines,
// CRLF line ends and a frame without a final newline before EOF are each
// handled on their own.
func TestMCP_FramesAfterBadOnes(t *testing.T) {
	t.Parallel()
	c := startMCPInProcess(t, mcpFile(t).dir)
	c.initialize()
	in := "{bad\n\n  \n[1]\r\n" + `{"jsonrpc":"2.0","id":1001,"method":"ping"}` + "\r\n" + `{"jsonrpc":"2.0","id":1002,"method":"ping"}`
	if _, err := io.WriteString(c.stdin, in); err != nil {
		t.Fatal(err)
	}
	c.stdin.Close()
	// JSON-RPC does not order answers: the server may answer the two
	// pings in either order, so the answers are compared as a set.
	var got []string
	for range 4 {
		r := c.next()
		code := int64(0)
		if r.Error != nil {
			code = r.Error.Code
		}
		got = append(got, fmt.Sprintf("%s %d", r.ID, code))
	}
	slices.Sort(got)
	want := []string{"1001 0", "1002 0", "null -32600", "null -32700"}
	if !slices.Equal(got, want) {
		t.Errorf("answers %q, want %q", got, want)
	}
	c.close()
}

// rawSession is the whole input of a client that writes the handshake
// and one tool call and closes stdin at once.
var rawSession = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":` + mcpInitParams + "}\n" +
	`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
	toolCallFrame(2, "task_get", `{"id":"T-1"}`) + "\n"

// wantAllAnswered checks that a session of rawSession answered both
// requests, in a clean exit, with nothing logged.
func wantAllAnswered(t *testing.T, c *mcpChild) {
	t.Helper()
	ids := map[string]bool{}
	for line := range c.lines {
		var r rpcReply
		if json.Unmarshal([]byte(line), &r) == nil && r.Error == nil {
			ids[string(r.ID)] = true
		}
	}
	if err := c.wait(); err != nil {
		t.Errorf("flowctl mcp: %v (stderr %q)", err, c.stderr.String())
	}
	if !ids["1"] || !ids["2"] {
		t.Errorf("answered %v, want 1 and 2 (stderr %q)", ids, c.stderr.String())
	}
	if s := c.stderr.String(); strings.Contains(s, "level=") {
		t.Errorf("stderr: %s", s)
	}
}

// TestMCP_AnswersBeforeEOF: what a client asked before it closed stdin
// is answered before the server exits 0.
func TestMCP_AnswersBeforeEOF(t *testing.T) {
	t.Parallel()
	f := mcpFile(t)
	for range 20 {
		c := startMCPInProcess(t, f.dir)
		if _, err := io.WriteString(c.stdin, rawSession); err != nil {
			t.Fatal(err)
		}
		c.stdin.Close()
		wantAllAnswered(t, c)
	}
}

// TestMCPProcess_AnswersBeforeEOF: the same with a real process and its
// stdin a pipe that the client closes right after writing.
func TestMCPProcess_AnswersBeforeEOF(t *testing.T) {
	t.Parallel()
	f := mcpFile(t)
	for range 20 {
		c := startMCPChild(t, f.dir, "-q")
		if _, err := io.WriteString(c.stdin, rawSession); err != nil {
			t.Fatal(err)
		}
		c.stdin.Close()
		wantAllAnswered(t, c)
	}
}
