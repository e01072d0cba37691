package digest

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/internal/flowtest"
	"github.com/flowctl/flowctl/projection"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// graphFixture: project alpha with seven tasks (T-1..T-7) whose titles
// need escaping or cutting, in every status, with a long edge (T-1→T-4)
// and tasks outside T-3's neighbourhood (T-2's branch reaches it only
// through T-4; T-5 and T-7 not at all).
func graphFixture(tb testing.TB) *flow.Engine {
	tb.Helper()
	e := flowtest.Open(tb)
	statusProject(tb, e, "alpha")
	statusTask(tb, e, "alpha", "design the schema")
	statusTask(tb, e, "alpha", `write the parser <v2> & "quotes" #1 `+"`x`", "T-1")
	statusTask(tb, e, "alpha", "build the index", "T-1")
	statusTask(tb, e, "alpha", "ship it: a very long title that will need to be cut somewhere past forty runes", "T-2", "T-3", "T-1")
	statusTask(tb, e, "alpha", "docs & more")
	statusTask(tb, e, "alpha", "fix the flaky test", "T-3")
	statusTask(tb, e, "alpha", "unrelated")
	statusMove(tb, e, "alpha", "T-1", "doing", "done")
	statusMove(tb, e, "alpha", "T-2", "doing")
	statusMove(tb, e, "alpha", "T-5", "cancelled")
	statusMove(tb, e, "alpha", "T-6", "blocked")
	return e
}

func goldenFile(tb testing.TB, name, got string) {
	tb.Helper()
	path := filepath.Join("testdata", "graph", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (go test -update writes it)", err)
	}
	if got != string(want) {
		tb.Errorf("%s differs (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

func mustGraph(tb testing.TB, e *flow.Engine, at *flow.Point, root string) *Graph {
	tb.Helper()
	g, err := ReadGraph(e, "alpha", at, root)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

func graphJSON(tb testing.TB, g *Graph) string {
	tb.Helper()
	b, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	return string(b) + "\n"
}

func TestGraph_Golden(t *testing.T) {
	e := graphFixture(t)
	whole, near := mustGraph(t, e, nil, ""), mustGraph(t, e, nil, "T-3")
	for _, c := range []struct {
		name string
		got  string
	}{
		{"alpha.txt", whole.Text()},
		{"alpha.mmd", whole.Mermaid()},
		{"alpha.dot", whole.DOT()},
		{"alpha.json", graphJSON(t, whole)},
		{"alpha.svg", whole.SVG(SVGOptions{})},
		{"alpha_standalone.svg", whole.SVG(SVGOptions{Standalone: true})},
		{"alpha_T-3.txt", near.Text()},
		{"alpha_T-3.svg", near.SVG(SVGOptions{})},
	} {
		t.Run(c.name, func(t *testing.T) { goldenFile(t, c.name, c.got) })
	}
}

func TestReadGraph(t *testing.T) {
	e := graphFixture(t)
	t.Run("OK", func(t *testing.T) {
		g := mustGraph(t, e, nil, "")
		if g.Tasks != 7 || len(g.Nodes) != 7 || len(g.Edges) != 6 || g.Layers != 3 {
			t.Fatalf("graph has %d tasks, %d nodes, %d edges, %d layers; want 7, 7, 6, 3", g.Tasks, len(g.Nodes), len(g.Edges), g.Layers)
		}
		layers := map[string]int{}
		for _, n := range g.Nodes {
			layers[n.ID] = n.Layer
		}
		want := map[string]int{"T-1": 0, "T-5": 0, "T-7": 0, "T-2": 1, "T-3": 1, "T-6": 2, "T-4": 2}
		for id, l := range want {
			if layers[id] != l {
				t.Errorf("layer of %s = %d, want %d", id, layers[id], l)
			}
		}
		for _, ed := range g.Edges {
			if ed.From == "T-1" && ed.To == "T-4" && len(ed.Points) != 4 {
				t.Errorf("T-1→T-4 spans two layers: points %v, want 4 (through layer 1)", ed.Points)
			}
		}
	})
	t.Run("Neighbourhood", func(t *testing.T) {
		g := mustGraph(t, e, nil, "T-3")
		var ids []string
		for _, n := range g.Nodes {
			ids = append(ids, n.ID)
		}
		slices.SortFunc(ids, projection.CompareIDs)
		if want := []string{"T-1", "T-3", "T-4", "T-6"}; !slices.Equal(ids, want) || g.Root != "T-3" {
			t.Errorf("neighbourhood of T-3 = %v (root %q), want %v", ids, g.Root, want)
		}
	})
	t.Run("At", func(t *testing.T) {
		g := mustGraph(t, e, &flow.Point{Seq: 3}, "")
		if len(g.Nodes) != 2 || g.HeadSeq != 3 || len(g.Edges) != 1 || g.Nodes[0].Status != "todo" {
			t.Errorf("graph at seq 3: %d nodes, head %d, %d edges, %+v; want T-1 and T-2 as they were", len(g.Nodes), g.HeadSeq, len(g.Edges), g.Nodes)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		for _, c := range []struct {
			project, root string
			at            *flow.Point
		}{{"nope", "", nil}, {"alpha", "T-99", nil}, {"alpha", "", &flow.Point{Checkpoint: "C-9"}}} {
			if _, err := ReadGraph(e, c.project, c.at, c.root); !errors.Is(err, flow.ErrNotFound) {
				t.Errorf("ReadGraph(%q, %v, %q): err = %v, want ErrNotFound", c.project, c.at, c.root, err)
			}
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		if _, err := ReadGraph(e, "alpha", &flow.Point{Seq: 9999}, ""); !errors.Is(err, flow.ErrInvalid) {
			t.Errorf("a seq past the head: err = %v, want ErrInvalid", err)
		}
	})
}

func TestGraph_SVG(t *testing.T) {
	e := graphFixture(t)
	svg := mustGraph(t, e, nil, "").SVG(SVGOptions{})
	t.Run("WellFormed", func(t *testing.T) {
		d := xml.NewDecoder(strings.NewReader(svg))
		links := 0
		for {
			tok, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("not well-formed XML: %v", err)
			}
			se, ok := tok.(xml.StartElement)
			if !ok {
				continue
			}
			switch se.Name.Local {
			case "script", "style", "foreignObject":
				t.Errorf("SVG holds a <%s>", se.Name.Local)
			case "a":
				links++
			}
			for _, a := range se.Attr {
				if a.Name.Local == "style" || strings.HasPrefix(a.Name.Local, "on") {
					t.Errorf("<%s> has the attribute %s", se.Name.Local, a.Name.Local)
				}
			}
		}
		if links != 7 {
			t.Errorf("%d links, want one per task (7)", links)
		}
	})
	t.Run("Escaped", func(t *testing.T) {
		for _, want := range []string{
			`<a class="node st-doing" href="/p/alpha/tasks/T-2" data-id="T-2">`,
			`<title>T-2 [doing] write the parser &lt;v2&gt; &amp; &#34;quotes&#34; #1 `,
			`<title>T-5 [cancelled] docs &amp; more</title>`,
		} {
			if !strings.Contains(svg, want) {
				t.Errorf("SVG lacks %s", want)
			}
		}
		if strings.Contains(svg, "<v2>") {
			t.Errorf("SVG holds a title unescaped")
		}
	})
	t.Run("ProjectInHref", func(t *testing.T) {
		g := &Graph{Project: "a b/c", Nodes: []GraphNode{{ID: "T-1", Status: "todo"}}}
		if s := g.SVG(SVGOptions{}); !strings.Contains(s, `href="/p/a%20b%2Fc/tasks/T-1"`) {
			t.Errorf("project name not escaped in the link:\n%s", s)
		}
	})
}

func TestGraph_Limit(t *testing.T) {
	e := graphFixture(t)
	g := mustGraph(t, e, nil, "")
	l := g.Limit(4)
	if len(l.Nodes) != 4 || l.Tasks != 7 || len(g.Nodes) != 7 {
		t.Fatalf("Limit(4): %d nodes of %d (the graph keeps %d)", len(l.Nodes), l.Tasks, len(g.Nodes))
	}
	kept := map[string]bool{}
	for _, n := range l.Nodes {
		kept[n.ID] = true
		if n.Layer > l.Nodes[len(l.Nodes)-1].Layer {
			t.Errorf("Limit kept %s of layer %d after a lower layer", n.ID, n.Layer)
		}
	}
	for _, ed := range l.Edges {
		if !kept[ed.From] || !kept[ed.To] {
			t.Errorf("edge %s→%s leaves the limited graph", ed.From, ed.To)
		}
	}
	if !strings.Contains(l.Text(), "the first 4 of 7 tasks by layer") {
		t.Errorf("the limited text does not say it is limited:\n%s", l.Text())
	}
	if z := g.Limit(0); len(z.Nodes) != 0 || len(z.Edges) != 0 || z.Layers != 0 || z.Tasks != 7 {
		t.Errorf("Limit(0) = %+v", z)
	}
	if g.Limit(7) != g {
		t.Errorf("Limit(len) is not the graph itself")
	}
}

// TestGraph_Cycle: a damaged file's cycle is broken, not followed: every
// task is laid out once and one edge of the cycle is marked.
func TestGraph_Cycle(t *testing.T) {
	tasks := []*projection.Task{
		{ID: "T-1", Status: "todo", Deps: []string{"T-3"}},
		{ID: "T-2", Status: "todo", Deps: []string{"T-1"}},
		{ID: "T-3", Status: "todo", Deps: []string{"T-2"}},
		{ID: "T-4", Status: "todo", Deps: []string{"T-4", "T-9"}}, // itself, and a task that is not there
	}
	g := NewGraph("p", tasks)
	broken := 0
	for _, ed := range g.Edges {
		if ed.Broken {
			broken++
		}
	}
	if len(g.Nodes) != 4 || len(g.Edges) != 3 || broken != 1 {
		t.Fatalf("%d nodes, %d edges, %d broken; want 4, 3, 1", len(g.Nodes), len(g.Edges), broken)
	}
	for _, s := range []string{g.Text(), g.Mermaid(), g.DOT(), g.SVG(SVGOptions{})} {
		if !strings.Contains(s, "!") && !strings.Contains(s, "cycle") && !strings.Contains(s, "broken") {
			t.Errorf("a rendering does not mark the broken edge:\n%s", s)
		}
	}
}

func TestGraph_Empty(t *testing.T) {
	g := NewGraph("p", nil)
	if g.Layers != 0 || len(g.Nodes) != 0 || g.Nodes == nil || g.Edges == nil {
		t.Errorf("empty graph: %+v", g)
	}
	for _, s := range []string{g.Text(), g.Mermaid(), g.DOT(), g.SVG(SVGOptions{})} {
		if s == "" {
			t.Errorf("empty rendering")
		}
	}
	if b, _ := json.Marshal(g); !strings.Contains(string(b), `"nodes":[],"edges":[]`) {
		t.Errorf("JSON of an empty graph: %s", b)
	}
}

// TestGraph_DamagedTitle: a title with control characters (which only a
// damaged or foreign file holds) is shown as one safe line everywhere.
func TestGraph_DamagedTitle(t *testing.T) {
	g := NewGraph("p", []*projection.Task{{ID: "T-1", Status: "todo", Title: "red \x1b[31mtext\nsecond line \xff"}})
	for name, s := range map[string]string{"text": g.Text(), "mermaid": g.Mermaid(), "dot": g.DOT(), "svg": g.SVG(SVGOptions{})} {
		if strings.Contains(s, "\x1b") || strings.Contains(s, "\xff") || strings.Contains(s, "text\nsecond") {
			t.Errorf("%s shows the title raw:\n%q", name, s)
		}
		want := `red \x1b[31mtext second line`
		if name == "dot" {
			want = `red \\x1b[31mtext second line` // DOT's own escape
		}
		if !strings.Contains(s, want) {
			t.Errorf("%s lacks the escaped title:\n%q", name, s)
		}
	}
}

func TestSVGWriter_Num(t *testing.T) {
	for _, v := range []float64{0, 12, 12.5, 12.04, 12.06, -3.2, -0.04, -0.06, 0.95, 1e6 + 0.3, 1e20, 123456789.15} {
		var w svgWriter
		want := strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
		if want == "-0" {
			want = "0"
		}
		if got := string(w.num(v).buf); got != want {
			t.Errorf("num(%v) = %s, want %s", v, got, want)
		}
	}
}
