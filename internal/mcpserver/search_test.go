package mcpserver

import (
	"testing"

	"github.com/flowctl/flowctl/flow"
)

// TestMCP_Search: hits with their field, at a point, and refusals.
func TestMCP_Search(t *testing.T) {
	t.Parallel()
	h := startMCP(t, mcpFile(t), "agent", nil, "--tools", "standard")
	h.mustCall("task_update", map[string]any{"id": "T-2", "title": "second parser"}, nil)
	var got flow.SearchResult
	h.mustCall("search", map[string]any{"query": "Second"}, &got)
	if len(got.Hits) != 1 || got.Hits[0].ID != "T-2" || got.Hits[0].Field != "title" || got.Hits[0].Snippet != "second parser" {
		t.Errorf("hits = %+v", got.Hits)
	}
	h.mustCall("search", map[string]any{"query": "parser", "at": "3"}, &got)
	if len(got.Hits) != 0 || got.At != 3 {
		t.Errorf("at 3: %+v", got)
	}
	h.callErr("search", map[string]any{"query": "-"}, flow.CodeInvalid)
	h.callErr("search", map[string]any{"query": "x", "limit": 500}, flow.CodeInvalid)
	h.callErr("search", map[string]any{"query": "first", "at": "C-9"}, flow.CodeNotFound)
}
