package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"strings"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
	"github.com/flowctl/flowctl/view"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The resources: a task, its context, and the log from a seq on. Tasks
// are read in the default project (FLOW_PROJECT, the switched-to or the
// only one); the events are the whole file's.

// eventsPage is how many events one read of flow://events returns.
const eventsPage = 500

type eventsResource struct {
	Events    []view.Event `json:"events"`
	NextSince uint64       `json:"next_since"` // read flow://events?since=NEXT_SINCE for what follows
	More      bool         `json:"more"`       // the page is full: there are more events now
}

func (s *mcpServer) addResources(srv *mcp.Server) {
	srv.AddResourceTemplate(&mcp.ResourceTemplate{Name: "task", URITemplate: "flow://task/{id}", MIMEType: "application/json",
		Description: "A task of the default project: status, deps, claim, steps, context, version."}, s.readTask)
	srv.AddResourceTemplate(&mcp.ResourceTemplate{Name: "task-context", URITemplate: "flow://task/{id}/context", MIMEType: "application/json",
		Description: "A task's context object, exactly as stored."}, s.readContext)
	srv.AddResourceTemplate(&mcp.ResourceTemplate{Name: "events", URITemplate: "flow://events?since={seq}", MIMEType: "application/json",
		Description: "Events from seq on, oldest first, at most 500 per read; next_since continues."}, s.readEvents)
}

func (s *mcpServer) readTask(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return s.readResource(req, func(c *call, u *url.URL) (any, error) {
		id, err := resourceTaskID(u, "")
		if err != nil {
			return nil, err
		}
		t, err := c.eng.Task(c.project, id)
		if err != nil {
			return nil, err
		}
		return view.TaskOf(t), nil
	})
}

func (s *mcpServer) readContext(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return s.readResource(req, func(c *call, u *url.URL) (any, error) {
		id, err := resourceTaskID(u, "/context")
		if err != nil {
			return nil, err
		}
		tc, err := c.eng.Context(c.project, id)
		if err != nil {
			return nil, err
		}
		if tc.Context == "" {
			return json.RawMessage(projection.EmptyContext), nil
		}
		return json.RawMessage(tc.Context), nil
	})
}

func (s *mcpServer) readEvents(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return s.readResourceIn(req, false, func(c *call, u *url.URL) (any, error) {
		since, err := strconv.ParseUint(u.Query().Get("since"), 10, 64)
		if err != nil {
			return nil, invalid("since=%q: give a seq (0 for the start)", u.Query().Get("since"))
		}
		out := eventsResource{Events: []view.Event{}, NextSince: max(since, 1)}
		err = c.eng.Events(flow.Filter{SinceSeq: since}, func(ev flow.Event) error {
			if len(out.Events) == eventsPage {
				out.More = true
				return errPageFull
			}
			out.Events = append(out.Events, view.EventOf(ev))
			out.NextSince = ev.Seq + 1
			return nil
		})
		if err != nil && !errors.Is(err, errPageFull) {
			return nil, err
		}
		return out, nil
	})
}

// errPageFull ends a page of events.
var errPageFull = errors.New("page full")

// resourceTaskID reads the task id of flow://task/{id}{suffix}.
func resourceTaskID(u *url.URL, suffix string) (string, error) {
	id, ok := strings.CutSuffix(strings.TrimPrefix(u.Path, "/"), suffix)
	if !ok || id == "" || strings.Contains(id, "/") {
		return "", invalid("%s is not a task resource", u.String())
	}
	return flow.ParseTaskID(id)
}

func (s *mcpServer) readResource(req *mcp.ReadResourceRequest, fn func(c *call, u *url.URL) (any, error)) (*mcp.ReadResourceResult, error) {
	return s.readResourceIn(req, true, fn)
}

// readResourceIn reads one resource as JSON; errors are JSON-RPC errors
// whose data is the tool error object ({code, message, hint}).
func (s *mcpServer) readResourceIn(req *mcp.ReadResourceRequest, needProject bool, fn func(c *call, u *url.URL) (any, error)) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	u, err := url.Parse(uri)
	if err != nil {
		return nil, s.resourceError(uri, invalid("%q is not a URI", uri))
	}
	var v any
	err = s.with(req.ClientInfo(), true, "", needProject, func(c *call) error {
		var err error
		v, err = fn(c, u)
		return err
	})
	if err != nil {
		return nil, s.resourceError(uri, err)
	}
	b, err := marshalJSON(v)
	if err != nil {
		return nil, s.resourceError(uri, err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
}

// resourceError turns err into a JSON-RPC error: not found as the SDK's
// resource-not-found error, bad input as invalid params, the rest as an
// internal error; the data carries the code, message and hint.
func (s *mcpServer) resourceError(uri string, err error) error {
	te := s.c.ToolError(err)
	code := int64(jsonrpc.CodeInternalError)
	switch te.Code {
	case flow.CodeNotFound, flow.CodeInvalid: // the SDK's resource-not-found code is this one
		code = jsonrpc.CodeInvalidParams
	}
	data, _ := marshalJSON(map[string]any{"uri": uri, "error": te})
	return &jsonrpc.Error{Code: code, Message: te.Message, Data: data}
}
