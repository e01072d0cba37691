package webui

import (
	"html/template"
	"net/http"

	"github.com/flowctl/flowctl/digest"
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/projection"
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
	SVG    template.HTML // the layout, as digest renders it (escaped there)
	Shown  int           // tasks drawn
	Total  int           // tasks in the graph before the limit
	Tasks  []graphTask   // the task picker's options
	Edges  int           // edges drawn
	Layers int
}

// graphTask is one option of the task picker.
type graphTask struct{ ID, Title string }

// graphPage draws the project's dependency graph (or, with ?task=T, that
// task's neighbourhood) as the server-side SVG of package digest, which
// /assets/graph.css styles.
func (u *ui) graphPage(rq *request) error {
	pg := rq.page
	pg.Name, pg.Title = "graph", "Graph · "+rq.project
	v := &graphView{}
	pg.Data = v
	if s := rq.r.URL.Query().Get("task"); s != "" {
		id, err := flow.ParseTaskID(s)
		if err != nil {
			return httpError{http.StatusBadRequest, "task=" + s + ": " + err.Error()}
		}
		v.Root = id
		pg.Title = "Graph of " + id + " · " + rq.project
	}
	var tasks []*projection.Task
	err := rq.eng.Read(func(r *flow.Reader) error {
		var err error
		tasks, err = r.Tasks(rq.project)
		return err
	})
	if err != nil {
		return err
	}
	for _, t := range tasks[:min(len(tasks), graphPickerLimit)] {
		v.Tasks = append(v.Tasks, graphTask{t.ID, t.Title})
	}
	if v.Root != "" {
		if tasks = digest.Neighbourhood(tasks, v.Root); len(tasks) == 0 {
			return httpError{http.StatusNotFound, "task " + v.Root + " not found in " + rq.project}
		}
	}
	g := digest.NewGraph(rq.project, tasks)
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
