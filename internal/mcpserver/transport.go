package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The stdio transport of `flowctl mcp`. The SDK's own (mcp.IOTransport)
// feeds stdin to one streaming JSON decoder: a single bad frame ends the
// session, a truncated one swallows the next (go-sdk issue 1209), and on
// EOF it drops the answers to requests still queued. This one reads
// newline-delimited frames and decodes each on its own:
//
//   - a frame that is not JSON is answered -32700 (parse error), id null;
//   - JSON that is not one JSON-RPC 2.0 message (a batch, a string, a
//     wrong version, a frame over maxFrameBytes or nested deeper than
//     maxFrameDepth) is answered -32600 (invalid request), with the
//     frame's id when it can be read, else null;
//   - blank lines are skipped; every other frame goes to the SDK.
//
// The session goes on after each of them. On EOF, Read returns io.EOF only
// once every request read so far has been answered, so that a client that
// writes its requests and closes stdin gets its answers.

const (
	// maxFrameBytes is the longest line (with its newline) the server
	// reads; the rest of a longer line is discarded as it is read. A tool argument is at most
	// 1 MiB of JSON (DESIGN.md section 10): this leaves room for many.
	maxFrameBytes = 16 << 20
	// maxFrameDepth is the deepest nesting of a frame, the limit of the
	// SDK's own decoder. Stored JSON values are held to 64 levels by the
	// engine, which answers deeper ones with a tool error.
	maxFrameDepth = 1000
)

// frameTransport is an mcp.Transport on a reader and a writer of
// newline-delimited JSON-RPC frames.
type frameTransport struct {
	r        io.Reader
	w        io.Writer
	maxBytes int // 0: maxFrameBytes
}

var _ mcp.Transport = (*frameTransport)(nil)

// Connect starts reading frames.
func (t *frameTransport) Connect(context.Context) (mcp.Connection, error) {
	limit := t.maxBytes
	if limit <= 0 {
		limit = maxFrameBytes
	}
	c := &frameConn{w: t.w, limit: limit, frames: make(chan frame), closed: make(chan struct{}), drained: make(chan struct{})}
	go c.readFrames(bufio.NewReaderSize(t.r, 64<<10))
	return c, nil
}

// frame is one line read, or the error that ended reading.
type frame struct {
	line []byte
	over bool // longer than the limit: line holds its first bytes
	err  error
}

// frameConn is the mcp.Connection of a frameTransport.
type frameConn struct {
	limit  int        // the longest frame read
	frames chan frame // from readFrames

	wmu sync.Mutex // one writer at a time: the SDK's writes and Read's answers
	w   io.Writer

	mu        sync.Mutex
	open      int           // requests read and not answered yet
	eof       bool          // the input ended
	drained   chan struct{} // closed when eof and open is 0
	isDrained bool

	closeOnce sync.Once
	closed    chan struct{}
}

var _ mcp.Connection = (*frameConn)(nil)

// readFrames passes the lines of r to Read until r ends or c is closed.
// The goroutine outlives Close while r blocks (stdin cannot be
// interrupted); it ends at the next line or EOF.
func (c *frameConn) readFrames(r *bufio.Reader) {
	for {
		line, over, err := readLine(r, c.limit)
		if (over || len(trimFrame(line)) > 0) && !c.pass(frame{line: line, over: over}) {
			return
		}
		if err != nil {
			c.pass(frame{err: err})
			return
		}
	}
}

// pass hands f to Read; false when c is closed.
func (c *frameConn) pass(f frame) bool {
	select {
	case c.frames <- f:
		return true
	case <-c.closed:
		return false
	}
}

// readLine reads up to and including the next newline, or to the end of
// r. Of a line longer than limit bytes (with its newline) it keeps the
// first limit bytes and discards the rest as it reads it (over is true).
// err is the error that ended the line before a newline, io.EOF at the
// end of r.
func readLine(r *bufio.Reader, limit int) (line []byte, over bool, err error) {
	for {
		chunk, rerr := r.ReadSlice('\n')
		if room := limit - len(line); len(chunk) > room {
			chunk, over = chunk[:max(room, 0)], true
		}
		line = append(line, chunk...)
		if rerr != bufio.ErrBufferFull {
			return line, over, rerr
		}
	}
}

// Read returns the next JSON-RPC message. A bad frame is answered here and
// skipped. At the end of the input it waits until every request read has
// been answered, then returns io.EOF.
func (c *frameConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		f, err := c.next(ctx)
		if err != nil {
			return nil, err
		}
		msg, bad := c.decode(f)
		if bad != nil {
			if err := c.writeLine(bad); err != nil {
				return nil, err
			}
			continue
		}
		if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
			c.track(+1, false)
		}
		return msg, nil
	}
}

// next is the next frame; at the end of the input, once every request
// read has been answered, the error that ended it.
func (c *frameConn) next(ctx context.Context) (frame, error) {
	var f frame
	select {
	case f = <-c.frames:
	case <-c.closed:
		return f, io.EOF
	case <-ctx.Done():
		return f, ctx.Err()
	}
	if f.err == nil {
		return f, nil
	}
	c.track(0, true)
	select {
	case <-c.drained:
	case <-c.closed:
	case <-ctx.Done():
	}
	return f, f.err
}

// decode is f's message, or the error response to write instead.
func (c *frameConn) decode(f frame) (jsonrpc.Message, []byte) {
	if f.over {
		return nil, badFrame(frameID(f.line), jsonrpc.CodeInvalidRequest,
			fmt.Sprintf("invalid request: a line is at most %d bytes", c.limit))
	}
	return decodeFrame(f.line)
}

// track adds n to the requests not answered yet, notes the end of the
// input, and closes drained once the input has ended and none is left.
func (c *frameConn) track(n int, eof bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.open += n
	c.eof = c.eof || eof
	if c.eof && c.open <= 0 && !c.isDrained {
		c.isDrained = true
		close(c.drained)
	}
}

// Write writes msg as one line. A response counts as an answer, even if
// the write fails (then nothing more can be answered).
func (c *frameConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if _, ok := msg.(*jsonrpc.Response); ok {
		defer c.track(-1, false)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("mcp: encoding a message: %w", err)
	}
	return c.writeLine(b)
}

// writeLine writes b and a newline, serialized with every other write.
func (c *frameConn) writeLine(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(append(b, '\n'))
	return err
}

// Close ends Read; the reader and the writer are not closed (they are the
// process's stdin and stdout).
func (c *frameConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// SessionID is empty: stdio has one session.
func (c *frameConn) SessionID() string { return "" }

// errorReply is a JSON-RPC error response written by the transport. ID is
// the raw id of the frame, or null.
type errorReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   jsonrpc.Error   `json:"error"`
}

// decodeFrame decodes one line. For a line that is not one JSON-RPC
// message it returns the error response to write instead.
func decodeFrame(line []byte) (jsonrpc.Message, []byte) {
	line = trimFrame(line)
	if frameDepth(line) > maxFrameDepth {
		return nil, badFrame(frameID(line), jsonrpc.CodeInvalidRequest,
			fmt.Sprintf("invalid request: JSON nested deeper than %d levels", maxFrameDepth))
	}
	if !json.Valid(line) {
		return nil, badFrame(nil, jsonrpc.CodeParseError, "parse error: "+syntaxError(line))
	}
	switch line[0] {
	case '{':
	case '[':
		return nil, badFrame(nil, jsonrpc.CodeInvalidRequest, "invalid request: an array (a batch) is not supported; send one message per line")
	default:
		return nil, badFrame(nil, jsonrpc.CodeInvalidRequest, "invalid request: a message is a JSON object")
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err == nil && !isMessage(line, msg) {
		err = errors.New(`a message has "method", "result" or "error"`)
	}
	if err != nil {
		return nil, badFrame(frameID(line), jsonrpc.CodeInvalidRequest, "invalid request: "+err.Error())
	}
	return msg, nil
}

// trimFrame is line without the JSON whitespace around it (and so without
// its "\n" or "\r\n").
func trimFrame(line []byte) []byte {
	return bytes.Trim(line, " \t\r\n")
}

// isMessage reports whether a decoded frame is a request, or a response
// with a result or an error (the SDK takes an object with an id and
// neither for a response).
func isMessage(line []byte, msg jsonrpc.Message) bool {
	if _, ok := msg.(*jsonrpc.Response); !ok {
		return true
	}
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	return json.Unmarshal(line, &r) == nil && (r.Result != nil || r.Error != nil)
}

// syntaxError says why line is not JSON.
func syntaxError(line []byte) string {
	err := json.Unmarshal(line, new(json.RawMessage))
	if err == nil {
		return "not JSON"
	}
	return err.Error()
}

// badFrame is the error response with id (nil: null), code and message.
func badFrame(id json.RawMessage, code int64, message string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(errorReply{JSONRPC: "2.0", ID: id, Error: jsonrpc.Error{Code: code, Message: message}})
	if err != nil { // id is not JSON (frameID returns only strings and numbers)
		return badFrame(nil, code, message)
	}
	return b
}

// frameDepth is the deepest nesting of objects and arrays in line, which
// need not be valid JSON.
func frameDepth(line []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, b := range line {
		switch {
		case escaped:
			escaped = false
		case inString:
			escaped, inString = b == '\\', b != '"'
		case b == '"':
			inString = true
		case b == '{' || b == '[':
			depth++
			deepest = max(deepest, depth)
		case b == '}' || b == ']':
			depth--
		}
	}
	return deepest
}

// frameID is the id of a frame that is a JSON object with a string or
// number "id" member before anything unreadable, else nil. line may be
// invalid after that point, cut short, or nested at any depth.
func frameID(line []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for {
		key, err := dec.Token()
		if err != nil || key == json.Delim('}') {
			return nil
		}
		if key == "id" {
			return idValue(dec)
		}
		if skipValue(dec) != nil {
			return nil
		}
	}
}

// idValue reads the value of an id member: its JSON if a string or a
// number, else nil.
func idValue(dec *json.Decoder) json.RawMessage {
	tok, err := dec.Token()
	if err != nil {
		return nil
	}
	switch v := tok.(type) {
	case string:
		b, _ := json.Marshal(v)
		return b
	case json.Number:
		return json.RawMessage(v)
	}
	return nil
}

// skipValue reads one value, at any depth, token by token.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}
