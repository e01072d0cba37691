package main

import (
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/digest"
)

func decodeGraph(t *testing.T, stdout string) digest.Graph {
	t.Helper()
	var g digest.Graph
	if err := json.Unmarshal([]byte(stdout), &g); err != nil {
		t.Fatalf("graph JSON: %v\n%s", err, stdout)
	}
	return g
}

func TestGraph(t *testing.T) {
	t.Parallel()
	f := statusFile(t)

	t.Run("Text", func(t *testing.T) {
		stdout, stderr, code := f.run("", "graph")
		if code != 0 || stderr != "" {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		golden(t, "graph_text.golden", stdout)
		if f.mustRun("", "graph", "--format", "text") != stdout {
			t.Errorf("--format text differs from the default")
		}
	})

	t.Run("JSON", func(t *testing.T) {
		stdout := f.mustRun("", "graph", "-o", "json")
		for _, args := range [][]string{{"--format", "json"}, {"--json"}, {"--format", "json", "-o", "json"}} {
			if got := f.mustRun("", append([]string{"graph"}, args...)...); got != stdout {
				t.Errorf("graph %v differs from graph -o json:\n%s\n%s", args, got, stdout)
			}
		}
		g := decodeGraph(t, stdout)
		if g.Project != "alpha" || g.HeadSeq != 37 || g.Tasks != 9 || len(g.Nodes) != 9 || len(g.Edges) != 2 || g.Layers != 3 {
			t.Errorf("graph of alpha: %+v", g)
		}
		if got := f.mustRun("", "graph", "-o", "jsonl"); got != stdout {
			t.Errorf("-o jsonl differs from -o json (one document, one line)")
		}
	})

	t.Run("Neighbourhood", func(t *testing.T) {
		g := decodeGraph(t, f.mustRun("", "graph", "t-2", "-o", "json"))
		var ids []string
		for _, n := range g.Nodes {
			ids = append(ids, n.ID)
		}
		if strings.Join(ids, " ") != "T-1 T-2 T-4" || g.Root != "T-2" {
			t.Errorf("graph T-2: nodes %v, root %q; want T-1 T-2 T-4", ids, g.Root)
		}
	})

	t.Run("At", func(t *testing.T) {
		g := decodeGraph(t, f.mustRun("", "graph", "--at", "10", "-o", "json"))
		if g.HeadSeq != 10 || g.Tasks != 6 || g.Nodes[0].Status != "todo" {
			t.Errorf("graph --at 10: head %d, %d tasks, %+v", g.HeadSeq, g.Tasks, g.Nodes[0])
		}
	})

	t.Run("Formats", func(t *testing.T) {
		for format, want := range map[string]string{
			"mermaid": "flowchart TD\n  T1[\"T-1: lexer\"]\n",
			"dot":     "digraph \"alpha\" {\n",
			"svg":     "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg ",
		} {
			stdout, stderr, code := f.run("", "graph", "--format", format)
			if code != 0 || stderr != "" || !strings.HasPrefix(stdout, want) {
				t.Errorf("--format %s: exit %d, stderr %q, output starts %.60q; want %q", format, code, stderr, stdout, want)
			}
		}
		svg := f.mustRun("", "graph", "--format", "svg")
		if err := xml.Unmarshal([]byte(svg), new(struct{})); err != nil {
			t.Errorf("--format svg is not XML: %v", err)
		}
		if !strings.Contains(svg, `<a class="node st-doing" href="/p/alpha/tasks/T-1"`) || !strings.Contains(svg, "<style>") {
			t.Errorf("--format svg lacks T-1's link or its stylesheet:\n%s", svg)
		}
		if !strings.Contains(f.mustRun("", "graph", "--format", "mermaid"), "  T1 --> T2\n") {
			t.Errorf("mermaid lacks the edge T-1 → T-2")
		}
	})

	t.Run("Errors", func(t *testing.T) {
		statusUnchanged(t, f, 3, "graph", "T-99")
		statusUnchanged(t, f, 2, "graph", "x-1")
		statusUnchanged(t, f, 2, "graph", "T-1", "T-2")
		statusUnchanged(t, f, 2, "graph", "--format", "png")
		statusUnchanged(t, f, 2, "graph", "--format", "mermaid", "-o", "json")
		statusUnchanged(t, f, 2, "graph", "--format", "json", "-o", "text")
		statusUnchanged(t, f, 2, "graph", "--at", "9999")
		statusUnchanged(t, f, 3, "graph", "--at", "C-9")
		statusUnchanged(t, f, 3, "graph", "--project", "nope")
		_, stderr, code := f.run("", "graph", "T-99", "--format", "json")
		if e := wantJSONError(t, stderr, code, 3, "not_found"); !strings.Contains(e.Error.Message, "T-99") {
			t.Errorf("error %q does not name T-99", e.Error.Message)
		}
	})
}
