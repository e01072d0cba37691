package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestFrameID: the id of a frame the server refuses is read from its
// start, at any depth after it, and only from the top-level object.
func TestFrameID(t *testing.T) {
	t.Parallel()
	tests := []struct{ line, want string }{
		{`{"jsonrpc":"2.0","id":7,"method":"ping"}`, "7"},
		{`{"id":"a\"b"}`, `"a\"b"`},
		{`{"method":"x","params":{"a":` + nested(20000) + `},"id":-1.5e3}`, "-1.5e3"},
		{`{"id":"cut","params":[[[{"x":`, `"cut"`},
		{`  {"id":9} trailing`, "9"},
		{`{"params":[[[`, ""},
		{`{"params":{"id":3}}`, ""},
		{`{"id":true}`, ""},
		{`{"id":null}`, ""},
		{`{"id":{"a":1}}`, ""},
		{`[{"id":1}]`, ""},
		{`"id"`, ""},
		{``, ""},
	}
	for _, tt := range tests {
		if got := string(frameID([]byte(tt.line))); got != tt.want {
			t.Errorf("frameID(%.60s) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

// TestFrameConn_OverLimit: a line over the limit is answered with its id
// and the line after it is read whole.
func TestFrameConn_OverLimit(t *testing.T) {
	t.Parallel()
	long := `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":"` + strings.Repeat("y", 300) + `"}}`
	in := long + "\n" + `{"jsonrpc":"2.0","id":4,"method":"ping"}` + "\n"
	msgs, out := readAllFrames(t, in, 100)
	if len(msgs) != 1 || msgs[0].(*jsonrpc.Request).ID.Raw() != int64(4) {
		t.Errorf("messages %v, want the ping with id 4", msgs)
	}
	var r errorReply
	if len(out) != 2 || json.Unmarshal([]byte(out[0]), &r) != nil || string(r.ID) != "3" || r.Error.Code != jsonrpc.CodeInvalidRequest {
		t.Errorf("output %q, want the -32600 of id 3 and the answer to 4", out)
	}
}

// readAllFrames reads in with a frame limit until EOF, answering every
// request, and returns the messages read and the lines written.
func readAllFrames(t testing.TB, in string, limit int) ([]jsonrpc.Message, []string) {
	var out bytes.Buffer
	conn, err := (&frameTransport{r: strings.NewReader(in), w: &out, maxBytes: limit}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := context.Background()
	var msgs []jsonrpc.Message
	for {
		msg, err := conn.Read(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		msgs = append(msgs, msg)
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			if err := conn.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: json.RawMessage(`{}`)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return msgs, strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
}

// FuzzMCPFrames feeds arbitrary input to the frame reader with a small
// frame limit. Read never fails before EOF; every non-blank line becomes
// exactly one message or one error response; an error response is one
// line of JSON-RPC 2.0 with a code of -32700 or -32600 and an id that is
// null, a string or a number.
func FuzzMCPFrames(f *testing.F) {
	f.Add(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
	f.Add("{bad\n[1,2,3]\n\"hello\"\n" + `{"jsonrpc":"2.0","id":2,"method":"ping",}` + "\r\n")
	f.Add(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]` + "\n" + `{"jsonrpc":"2.0","id":"a","result":{}}`)
	f.Add(`{"jsonrpc":"2.0","id":5,"params":` + nested(1200) + "}\n\n  \n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	f.Add(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"x","arguments":{"title":"` + strings.Repeat("z", 200) + "\"}}}\n")
	f.Fuzz(func(t *testing.T, in string) {
		msgs, out := readAllFrames(t, in, 128)
		calls, answers, replies := 0, 0, 0
		for _, m := range msgs {
			if req, ok := m.(*jsonrpc.Request); ok && req.IsCall() {
				calls++
			}
		}
		for _, line := range out {
			if line == "" {
				continue
			}
			var r struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Result  json.RawMessage `json:"result"`
				Error   *jsonrpc.Error  `json:"error"`
			}
			if err := json.Unmarshal([]byte(line), &r); err != nil || r.JSONRPC != "2.0" || r.ID == nil {
				t.Fatalf("output line %q is not a JSON-RPC response (%v)", line, err)
			}
			if r.Result != nil {
				answers++ // readAllFrames's answer to a request
				continue
			}
			replies++
			var id any
			if r.Error == nil || (r.Error.Code != jsonrpc.CodeParseError && r.Error.Code != jsonrpc.CodeInvalidRequest) ||
				r.Error.Message == "" || json.Unmarshal(r.ID, &id) != nil {
				t.Fatalf("error response %q", line)
			}
			switch id.(type) {
			case nil, string, float64:
			default:
				t.Fatalf("error response %q: id is not null, a string or a number", line)
			}
		}
		frames := 0
		for _, line := range strings.Split(in, "\n") {
			if len(trimFrame([]byte(line))) > 0 {
				frames++
			}
		}
		if frames != len(msgs)+replies {
			t.Fatalf("%d frames, %d messages and %d error responses", frames, len(msgs), replies)
		}
		if calls != answers {
			t.Fatalf("%d requests, %d answers", calls, answers)
		}
	})
}
