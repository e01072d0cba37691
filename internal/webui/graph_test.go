package webui

import (
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/digest"
	"github.com/flowctl/flowctl/flow"
)

// graphNodes are the ids and statuses of the nodes of a graph page's SVG.
var graphNode = regexp.MustCompile(`<a class="node st-([a-z]+)" href="[^"]*" data-id="([^"]+)"`)

func graphNodes(body string) []string {
	var out []string
	for _, m := range graphNode.FindAllStringSubmatch(body, -1) {
		out = append(out, m[2]+" "+m[1])
	}
	slices.Sort(out)
	return out
}

func TestGraphPage(t *testing.T) {
	f := newFixture(t)
	h := f.handler(false)
	mid := strconv.FormatUint(f.mid, 10)
	cases := []struct {
		name, path string
		nodes      string
		want       []string
	}{
		{"Open", "/p/web/graph", "T-1 done,T-2 doing,T-3 todo,T-4 blocked",
			[]string{`<svg xmlns="http://www.w3.org/2000/svg" class="flow-graph"`, `data-from="T-1" data-to="T-2"`,
				`data-from="T-2" data-to="T-3"`, `href="/p/web/tasks/T-2"`, `data-shown="4" data-total="4"`,
				"4 tasks, 2 dependencies, 3 layers: the tasks todo, doing or blocked", `<option value="T-5">`,
				`<a href="/p/web/graph?all=1" id="graph-all"`, "Open work"}},
		{"All", "/p/web/graph?all=1", "T-1 done,T-2 doing,T-3 todo,T-4 blocked,T-5 cancelled",
			[]string{`data-shown="5" data-total="5"`, "5 tasks, 2 dependencies, 3 layers.", `<option value="T-4">`,
				`<a href="/p/web/graph" id="graph-open"`}},
		{"Task", "/p/web/graph?task=T-3", "T-1 done,T-2 doing,T-3 todo",
			[]string{`data-task="T-3"`, `id="graph-all"`, `value="T-3"`, "T-3, what it depends on", "flowctl graph T-3 --format mermaid",
				`<option value="T-5">`}},
		{"TaskLowerCase", "/p/web/graph?task=t-4", "T-4 blocked", []string{`data-task="T-4"`}},
		{"At", "/p/web/graph?all=1&at=" + mid, "T-1 done,T-2 todo,T-3 todo,T-4 todo,T-5 todo",
			[]string{`id="at-banner"`, `data-at="` + mid + `"`, `<input type="hidden" name="at" value="` + mid + `">`}},
		{"AtTask", "/p/web/graph?at=" + mid + "&task=T-2", "T-1 done,T-2 todo,T-3 todo",
			[]string{`<input type="hidden" name="task" value="T-2">`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := mustGet(t, h, c.path)
			if got := strings.Join(graphNodes(body), ","); got != c.nodes {
				t.Errorf("nodes %s, want %s", got, c.nodes)
			}
			wantIn(t, c.path, body, c.want...)
			wantIn(t, c.path, body, `<link rel="stylesheet" href="/assets/graph.css">`, `data-live=`)
			wantNotIn(t, c.path, body, evil)
		})
	}
	t.Run("Errors", func(t *testing.T) {
		for path, status := range map[string]int{"/p/web/graph?task=T-99": 404, "/p/web/graph?task=x": 400, "/p/web/graph?all=maybe": 400,
			"/p/nope/graph": 404, "/p/web/graph?at=C-9": 404} {
			if code, body := get(t, h, path); code != status || !strings.Contains(body, `id="error"`) {
				t.Errorf("%s: %d, want %d", path, code, status)
			}
		}
	})
	t.Run("Live", func(t *testing.T) {
		wantIn(t, "graph", mustGet(t, h, "/p/web/graph"), `data-live="true"`)
		wantIn(t, "graph at", mustGet(t, h, "/p/web/graph?at="+mid), `data-live="false"`)
	})
	t.Run("TaskLink", func(t *testing.T) {
		wantIn(t, "task", mustGet(t, h, "/p/web/tasks/T-2"), `<a href="/p/web/graph?task=T-2" id="task-graph">graph</a>`)
		wantIn(t, "task at", mustGet(t, h, "/p/web/tasks/T-2?at="+mid), `<a href="/p/web/graph?task=T-2&amp;at=`+mid+`" id="task-graph">`)
	})
}

func TestGraphPage_CSS(t *testing.T) {
	rec := serve(newFixture(t).handler(false), "/assets/graph.css")
	if rec.Code != 200 || rec.Body.String() != digest.GraphCSS {
		t.Fatalf("%d: %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/css; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
}

// TestGraphPage_Limit checks that a project larger than graphLimit is
// drawn limited, and that the page says how many of how many it shows.
func TestGraphPage_Limit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flow.db")
	e, err := flow.Open(path, flow.Options{Create: true, NoSync: true, Actor: "ann"})
	if err != nil {
		t.Fatal(err)
	}
	must(e.CreateProject(flow.NewProject{Name: "big"}))
	n := graphLimit + 20
	for i := range n {
		var deps []string
		if i > 0 && i%2 == 0 {
			deps = []string{"T-" + strconv.Itoa(i)}
		}
		must(e.AddTask(flow.NewTask{Project: "big", Title: "t" + strconv.Itoa(i+1), Deps: deps}))
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	h := New(Config{Path: path})
	body := mustGet(t, h, "/p/big/graph")
	if got := len(graphNodes(body)); got != graphLimit {
		t.Errorf("%d nodes drawn, want %d", got, graphLimit)
	}
	wantIn(t, "big", body, "Showing the first "+strconv.Itoa(graphLimit)+" of "+strconv.Itoa(n)+" tasks",
		`data-shown="`+strconv.Itoa(graphLimit)+`" data-total="`+strconv.Itoa(n)+`"`)
	last := "T-" + strconv.Itoa(n-1) // depends on T-(n-2)
	body = mustGet(t, h, "/p/big/graph?task="+last)
	if got := strings.Join(graphNodes(body), ","); got != "T-"+strconv.Itoa(n-2)+" todo,"+last+" todo" {
		t.Errorf("neighbourhood of %s: %s", last, got)
	}
}
