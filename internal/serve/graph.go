package serve

import (
	"net/http"

	"github.com/flowctl/flowctl/digest"
	"github.com/flowctl/flowctl/flow"
)

// GET /api/v1/projects/{p}/graph: `graph -o json` (`graph --format
// json`): the project's dependency graph laid out, at ?at=POINT, and with
// ?task=T only that task's neighbourhood (what it depends on and what
// depends on it, transitively), as `graph T`.
func (s *server) graph(w http.ResponseWriter, r *http.Request) {
	s.serveRead(w, r, projectAt, func(c *call, a *answer) error {
		root := ""
		if v := c.query("task"); v != "" {
			id, err := flow.ParseTaskID(v)
			if err != nil {
				return err
			}
			root = id
		}
		g, err := digest.ReadGraph(c.eng, c.project, nil, root)
		if err != nil {
			return err
		}
		return a.one(g)
	})
}
