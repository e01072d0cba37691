package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow"
)

// sseMessage is one message of a stream: its fields, or a comment.
type sseMessage struct {
	id, event, data, comment, retry string
}

// sseClient reads messages from a stream, each within a deadline.
type sseClient struct {
	t    *testing.T
	resp *http.Response
	msgs chan sseMessage
}

// startServer serves s on a real listener, its address the config's.
func startServer(t testing.TB, cfg Config, tweak func(s *server)) *httptest.Server {
	t.Helper()
	ts := httptest.NewUnstartedServer(nil)
	cfg.Addr = ts.Listener.Addr().String()
	s := mustServer(t, cfg)
	if tweak != nil {
		tweak(s)
	}
	ts.Config.Handler = s.handler()
	ts.Start()
	t.Cleanup(ts.Close)
	return ts
}

// connect opens the stream at target with headers ("Name: value").
func connect(t *testing.T, ts *httptest.Server, target string, headers ...string) *sseClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", ts.URL+target, nil)
	for _, hv := range headers {
		k, v, _ := strings.Cut(hv, ": ")
		req.Header.Set(k, v)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %v", resp.StatusCode, resp.Header)
	}
	c := &sseClient{t: t, resp: resp, msgs: make(chan sseMessage, 100)}
	go c.read()
	t.Cleanup(func() { cancel(); resp.Body.Close() })
	return c
}

func (c *sseClient) read() {
	defer close(c.msgs)
	sc := bufio.NewScanner(c.resp.Body)
	var m sseMessage
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			c.msgs <- m
			m = sseMessage{}
			continue
		}
		name, val, _ := strings.Cut(line, ":")
		val = strings.TrimPrefix(val, " ")
		switch name {
		case "":
			m.comment = val
		case "id":
			m.id = val
		case "event":
			m.event = val
		case "data":
			m.data += val
		case "retry":
			m.retry = val
		}
	}
}

// next returns the next message, failing after wait.
func (c *sseClient) next(wait time.Duration) sseMessage {
	c.t.Helper()
	select {
	case m, ok := <-c.msgs:
		if !ok {
			c.t.Fatal("the stream ended")
		}
		return m
	case <-time.After(wait):
		c.t.Fatalf("no message within %s", wait)
	}
	return sseMessage{}
}

// nextEvent skips comments and returns the next event's message.
func (c *sseClient) nextEvent(wait time.Duration) sseMessage {
	c.t.Helper()
	deadline := time.Now().Add(wait)
	for {
		m := c.next(time.Until(deadline))
		if m.event != "" {
			return m
		}
	}
}

func TestEvents_Stream(t *testing.T) {
	path := mustFile(t)
	ts := startServer(t, testConfig(path), nil)
	c := connect(t, ts, "/api/v1/events?since=1&project=web")
	if m := c.next(time.Second); m.retry != strconv.Itoa(RetryMS) {
		t.Fatalf("first message %+v, want the retry hint", m)
	}
	var last uint64
	for i := uint64(1); ; i++ {
		m := c.nextEvent(2 * time.Second)
		var ev flow.Event
		if err := json.Unmarshal([]byte(m.data), &ev); err != nil {
			t.Fatal(err)
		}
		if m.event != "flow" || m.id != strconv.FormatUint(ev.Seq, 10) || ev.Seq <= last {
			t.Fatalf("message %+v after seq %d", m, last)
		}
		last = ev.Seq
		if ev.Type == "approval.requested" {
			break
		}
	}
	// Another engine (as another process would) appends: the client sees
	// it within a second.
	eng := mustOpen(t, path, false)
	start := time.Now()
	_, err := eng.AddTask(flow.NewTask{Project: "web", Title: "<new> & \"live\""})
	eng.Close()
	if err != nil {
		t.Fatal(err)
	}
	m := c.nextEvent(time.Second)
	if !strings.Contains(m.data, `"type":"task.created"`) || !strings.Contains(m.data, `<new> & \"live\"`) {
		t.Fatalf("new event: %+v", m)
	}
	t.Logf("append to delivery: %s", time.Since(start))
	if m.id != strconv.FormatUint(last+1, 10) {
		t.Fatalf("id %s after %d", m.id, last)
	}
}

func TestEvents_Resume(t *testing.T) {
	path := mustFile(t)
	ts := startServer(t, testConfig(path), nil)
	first := connect(t, ts, "/api/v1/events?since=1")
	var ids []string
	for len(ids) < 4 {
		ids = append(ids, first.nextEvent(2*time.Second).id)
	}
	// A reconnect with Last-Event-ID resumes right after it, since or not.
	again := connect(t, ts, "/api/v1/events?since=1", "Last-Event-ID: "+ids[1])
	if m := again.nextEvent(2 * time.Second); m.id != ids[2] {
		t.Fatalf("resumed at %s, want %s", m.id, ids[2])
	}
	// Without since, only new events come.
	fresh := connect(t, ts, "/api/v1/events?type=note.*")
	fresh.next(time.Second) // the retry hint
	eng := mustOpen(t, path, false)
	eng.AddTask(flow.NewTask{Project: "web", Title: "not a note"})
	_, err := eng.AddNote(flow.NewNote{Project: "web", Task: "T-3", Text: "a note"})
	eng.Close()
	if err != nil {
		t.Fatal(err)
	}
	m := fresh.nextEvent(2 * time.Second)
	if !strings.Contains(m.data, `"a note"`) {
		t.Fatalf("first new event %+v, want the note", m)
	}
}

func TestEvents_KeepAlive(t *testing.T) {
	ts := startServer(t, testConfig(mustFile(t)), func(s *server) { s.keepAlive = 30 * time.Millisecond })
	c := connect(t, ts, "/api/v1/events")
	c.next(time.Second) // the retry hint
	if m := c.next(time.Second); m.comment != "keep-alive" {
		t.Fatalf("idle stream sent %+v, want a keep-alive comment", m)
	}
}

// TestEvents_NewWhileAWriterHoldsTheFile: a stream of only new events
// opened while a writer holds the file past the lock timeout still
// answers (a browser's EventSource gives up on an error answer) and,
// once the writer lets go, delivers what is appended. Where such a
// stream starts is its first poll's head, so notes are appended until
// one arrives.
func TestEvents_NewWhileAWriterHoldsTheFile(t *testing.T) {
	path := mustFile(t)
	cfg := testConfig(path)
	cfg.Options.LockTimeout = 50 * time.Millisecond
	ts := startServer(t, cfg, nil)
	holder := mustOpen(t, path, false)
	c := connect(t, ts, "/api/v1/events?type=note.*")
	if m := c.next(2 * time.Second); m.retry == "" {
		t.Fatalf("first message %+v, want the retry hint", m)
	}
	if err := holder.Close(); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		eng := mustOpen(t, path, false)
		_, err := eng.AddNote(flow.NewNote{Project: "web", Task: "T-1", Text: fmt.Sprint("after ", i)})
		eng.Close()
		if err != nil {
			t.Fatal(err)
		}
		select {
		case m := <-c.msgs:
			if !strings.Contains(m.data, `"after `) {
				t.Fatalf("first event %+v, want a note appended after the writer let go", m)
			}
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
	t.Fatal("no note delivered after the writer let go")
}
