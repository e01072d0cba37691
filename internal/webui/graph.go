package webui

import (
	"html/template"
	"net/http"
	"strconv"

	"github.com/flowctl/flowctl/digest"
	"github.com/flowctl/flowctl/flow"
)

// graphLimit is how many tasks the graph page draws: past it, the first
// ones by layer (digest.Graph.Limit), and the page says how many of how
// many it shows. A task's neighbourhood (?task=T) shows the rest.
const graphLimit = 300

// graphPickerLimit is how many tasks the task picker offers.
const graphPickerLimit = 1000

// graphView is the graph page's data.
type graphView struct {
	Root   string        // ?task=T: the task whose neighbourhood is drawn
	All    bool          // ?all=1: every task (by default the open work)
	SVG    template.HTML // the layout, as digest renders it (escaped there)
	Shown  int           // tasks drawn
	Total  int           // tasks in the graph before the limit
	Tasks  []graphTask   // the task picker's options
	Edges  int           // edges drawn
	Layers int
}

// graphTask is one option of the task picker.
type graphTask struct{ ID, Title string }

// graphPage draws the project's dependency graph as the server-side SVG
// of package digest, which /assets/graph.css styles: by default the open
// work (digest.ReadOpenGraph: what is todo, doing or blocked and what it
// depends on), with ?all=1 every task, with ?task=T that task's
// neighbourhood.
func (u *ui) graphPage(rq *request) error {
	pg := rq.page
	pg.Name, pg.Title = "graph", "Graph · "+rq.project
	v := &graphView{}
	pg.Data = v
	q := rq.r.URL.Query()
	if s := q.Get("task"); s != "" {
		id, err := flow.ParseTaskID(s)
		if err != nil {
			return httpError{http.StatusBadRequest, "task=" + s + ": " + err.Error()}
		}
		v.Root = id
		pg.Title = "Graph of " + id + " · " + rq.project
	}
	if s := q.Get("all"); s != "" {
		all, err := strconv.ParseBool(s)
		if err != nil {
			return httpError{http.StatusBadRequest, "all=" + s + ": must be true or false"}
		}
		v.All = all
	}
	var g *digest.Graph
	err := rq.eng.Read(func(r *flow.Reader) error {
		index, err := r.TaskIndex(rq.project)
		if err != nil {
			return err
		}
		for _, t := range index[:min(len(index), graphPickerLimit)] {
			v.Tasks = append(v.Tasks, graphTask{t.ID, t.Title})
		}
		if v.Root == "" && !v.All {
			open, err := digest.OpenTasks(r, rq.project)
			if err != nil {
				return err
			}
			tasks, err := digest.WithDeps(r, rq.project, open)
			g = digest.NewGraph(rq.project, tasks)
			g.Open = true
			return err
		}
		tasks, err := r.Tasks(rq.project)
		if err != nil {
			return err
		}
		if v.Root != "" {
			if tasks = digest.Neighbourhood(tasks, v.Root); len(tasks) == 0 {
				return httpError{http.StatusNotFound, "task " + v.Root + " not found in " + rq.project}
			}
		}
		g = digest.NewGraph(rq.project, tasks)
		return nil
	})
	if err != nil {
		return err
	}
	g.HeadSeq, g.Root = pg.AtSeq, v.Root
	g = g.Limit(graphLimit)
	v.Shown, v.Total, v.Edges, v.Layers = len(g.Nodes), g.Tasks, len(g.Edges), g.Layers
	// digest escapes every text it writes and writes no script or style.
	v.SVG = template.HTML(g.SVG(digest.SVGOptions{}))
	return nil
}

// graphCSS serves digest.GraphCSS, the SVG's stylesheet (the CSP forbids
// the <style> a standalone SVG holds).
func graphCSS(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/css; charset=utf-8")
	h.Set("Cache-Control", "public, max-age=300")
	h.Set("X-Content-Type-Options", "nosniff")
	w.Write([]byte(digest.GraphCSS))
}
