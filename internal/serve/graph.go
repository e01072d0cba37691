package serve

import (
	"net/http"

	"github.com/flowctl/flowctl/digest"
	"github.com/flowctl/flowctl/flow"
)

// GET /api/v1/projects/{p}/graph: the project's dependency graph laid
// out, at ?at=POINT. By default the graph of the open work
// (digest.ReadOpenGraph: the tasks todo, doing or blocked and what they
// depend on; "open": true), which a dashboard shows and which costs what
// the open work costs; ?all=1 draws every task, as `graph -o json`; with
// ?task=T only that task's neighbourhood (what it depends on and what
// depends on it, transitively), as `graph T -o json`.
func (s *server) graph(w http.ResponseWriter, r *http.Request) {
	s.serveRead(w, r, projectAt, func(c *call, a *answer) error {
		all, err := boolParam(r, "all")
		if err != nil {
			return err
		}
		root := ""
		if v := c.query("task"); v != "" {
			id, err := flow.ParseTaskID(v)
			if err != nil {
				return err
			}
			root = id
		}
		var g *digest.Graph
		if root == "" && !all {
			g, err = digest.ReadOpenGraph(c.eng, c.project, nil)
		} else {
			g, err = digest.ReadGraph(c.eng, c.project, nil, root)
		}
		if err != nil {
			return err
		}
		return a.one(g)
	})
}
