package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// TestPostgres_MCP: `flowctl mcp` on a postgres:// store, spoken to in raw
// JSON-RPC lines on pipes: a task created through task_create reads back
// the same through task_get and through `flowctl task show`, and the
// password is in nothing the server writes.
func TestPostgres_MCP(t *testing.T) {
	dsn, pw := pgURL(t)
	dir := t.TempDir()
	vars := map[string]string{"FLOW_DB": dsn}
	if _, stderr, code := runCLIEnv(t, dir, vars, "", "init", "--project", "web"); code != 0 {
		t.Fatalf("init: exit %d: %s", code, stderr)
	}

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errOut lockedBuffer
	e := env{stdin: inR, stdout: outW, stderr: &errOut, dir: dir,
		getenv: func(k string) string {
			if k == "FLOW_ACTOR" {
				return "tester"
			}
			return vars[k]
		}}
	done := make(chan int, 1)
	go func() {
		code := run(context.Background(), []string{"mcp"}, e)
		outW.Close()
		done <- code
	}()
	lines := make(chan string, 16)
	var printed strings.Builder
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	id := 0
	request := func(method, params string) json.RawMessage {
		t.Helper()
		id++
		fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
		timeout := time.After(30 * time.Second)
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					t.Fatalf("%s: the server closed stdout (stderr %q)", method, errOut.String())
				}
				printed.WriteString(line + "\n")
				var resp struct {
					ID     int
					Result json.RawMessage
					Error  json.RawMessage
				}
				if json.Unmarshal([]byte(line), &resp) == nil && resp.ID == id {
					if resp.Error != nil {
						t.Fatalf("%s: %s", method, resp.Error)
					}
					return resp.Result
				}
			case <-timeout:
				t.Fatalf("%s: no answer (stderr %q)", method, errOut.String())
			}
		}
	}
	callTool := func(name, args string) json.RawMessage {
		t.Helper()
		var r struct {
			StructuredContent json.RawMessage
			IsError           bool
		}
		res := request("tools/call", fmt.Sprintf(`{"name":%q,"arguments":%s}`, name, args))
		if json.Unmarshal(res, &r) != nil || r.IsError {
			t.Fatalf("%s %s: %s", name, args, res)
		}
		return r.StructuredContent
	}
	request("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pg-test","version":"0"}}`)
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	var created struct {
		Project string
		Tasks   []struct{ ID, Title string }
	}
	if err := json.Unmarshal(callTool("task_create", `{"title":"made through MCP","tags":["pg"]}`), &created); err != nil {
		t.Fatal(err)
	}
	if created.Project != "web" || len(created.Tasks) != 1 || created.Tasks[0].ID != "T-1" {
		t.Fatalf("task_create answered %+v", created)
	}
	var got struct {
		ID, Title, Status string
		Tags              []string
	}
	if err := json.Unmarshal(callTool("task_get", `{"id":"T-1"}`), &got); err != nil {
		t.Fatal(err)
	}
	if got.ID != "T-1" || got.Title != "made through MCP" || got.Status != "todo" || len(got.Tags) != 1 {
		t.Errorf("task_get answered %+v", got)
	}
	inW.Close()
	for line := range lines {
		printed.WriteString(line + "\n")
	}
	if code := <-done; code != 0 {
		t.Errorf("flowctl mcp exited %d: %s", code, errOut.String())
	}

	stdout, stderr, code := runCLIEnv(t, dir, vars, "", "task", "show", "T-1", "-o", "json")
	if code != 0 {
		t.Fatalf("task show: exit %d: %s", code, stderr)
	}
	var shown struct {
		Title, Status string
		Tags          []string
	}
	if err := json.Unmarshal([]byte(stdout), &shown); err != nil {
		t.Fatal(err)
	}
	if shown.Title != "made through MCP" || shown.Status != "todo" || len(shown.Tags) != 1 || shown.Tags[0] != "pg" {
		t.Errorf("task show printed %s", stdout)
	}
	if strings.Contains(printed.String()+errOut.String(), pw) {
		t.Errorf("the server wrote the password:\n%s%s", printed.String(), errOut.String())
	}
}
