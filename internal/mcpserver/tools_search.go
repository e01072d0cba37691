package mcpserver

import (
	"fmt"
	"strings"

	"github.com/flowctl/flowctl/flow"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ---- search

type searchIn struct {
	scopeArg
	Query string `json:"query" jsonschema:"words to find (any of them); a word is two or more letters or digits, matched whole without case"`
	At    string `json:"at,omitempty" jsonschema:"search the project as it stood at this point: a seq, a checkpoint (C-1) or an RFC 3339 time"`
	Limit int    `json:"limit,omitempty" jsonschema:"the best this many hits (default 20, at most 200)"`
}

// searchMax is the most hits one search returns.
const searchMax = 200

func addSearchTool(srv *mcp.Server, s *mcpServer) {
	addTool(srv, &mcp.Tool{Name: "search",
		Description: "Find tasks (title, description, context values), notes, memories and exec commands by their words, best first, each hit with the field that matched and a snippet.",
		Annotations: readOnlyTool("Search")}, tool(s, true, true, searchTool))
}

func searchTool(c *call, in searchIn) (flow.SearchResult, string, error) {
	if in.Limit < 0 || in.Limit > searchMax {
		return flow.SearchResult{}, "", invalid("limit %d: give 1 to %d", in.Limit, searchMax)
	}
	eng := c.eng
	if in.At != "" {
		p, err := flow.ParsePoint(in.At)
		if err != nil {
			return flow.SearchResult{}, "", err
		}
		if err := eng.Begun(c.project, p); err != nil {
			return flow.SearchResult{}, "", err
		}
		eng = eng.At(c.project, p)
	}
	res, err := eng.Search(flow.SearchQuery{Text: in.Query, Project: c.project, Limit: in.Limit})
	if err != nil {
		return flow.SearchResult{}, "", err
	}
	parts := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		parts[i] = h.Kind + " " + h.ID + " " + h.Field
	}
	line := fmt.Sprintf("%d hits for %q in %s", len(res.Hits), in.Query, c.project)
	if len(parts) > 0 {
		line += ": " + strings.Join(parts, ", ")
	}
	return *res, printable(line), nil
}
