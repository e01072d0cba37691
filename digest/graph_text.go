package digest

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/flowctl/flowctl/projection"
)

// GraphTextWidth is the width the text of a graph fits in.
const GraphTextWidth = 80

// graphDepsShown is how many dependencies a line of the text names
// before it counts the rest.
const graphDepsShown = 3

// statusColours are the fill and stroke of each status, shared by the
// Mermaid, DOT and SVG renderings.
var statusColours = []struct{ status, fill, stroke, text string }{
	{projection.StatusTodo, "#f1f3f5", "#868e96", "#212529"},
	{projection.StatusDoing, "#d0ebff", "#1c7ed6", "#212529"},
	{projection.StatusDone, "#d3f9d8", "#2f9e44", "#212529"},
	{projection.StatusBlocked, "#ffe3e3", "#e03131", "#212529"},
	{projection.StatusCancelled, "#f8f9fa", "#adb5bd", "#868e96"},
}

func statusColour(status string) (fill, stroke, text string) {
	for _, c := range statusColours {
		if c.status == status {
			return c.fill, c.stroke, c.text
		}
	}
	return "#ffffff", "#495057", "#212529"
}

// graphLine is mdLine, without its work for the text it would not change
// (a title is one line of text already, unless a file is damaged).
func graphLine(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	return mdLine(s)
}

// heading is the first line of the text of g: what it shows.
func (g *Graph) heading() string {
	what := "project " + g.Project
	if g.Root != "" {
		what = g.Root + " and its dependencies and dependents in project " + g.Project
	}
	count := plural(len(g.Nodes), "task", "tasks")
	if len(g.Nodes) < g.Tasks {
		count = fmt.Sprintf("the first %d of %d tasks by layer", len(g.Nodes), g.Tasks)
	}
	return fmt.Sprintf("Dependency graph of %s: %s in %s, at seq %d", graphLine(what), count, plural(g.Layers, "layer", "layers"), g.HeadSeq)

}

// deps returns, per task, the edges into it, in the order of g.Edges.
func (g *Graph) deps() map[string][]GraphEdge {
	in := map[string][]GraphEdge{}
	for _, e := range g.Edges {
		in[e.To] = append(in[e.To], e)
	}
	return in
}

// Text renders g as layers of lines, GraphTextWidth columns wide: a task
// per line (`T-3 [doing] title ← T-1, T-2`, naming what it depends on),
// layer by layer. An edge of a cycle is marked with "!".
func (g *Graph) Text() string {
	var b strings.Builder
	b.WriteString(g.heading() + "\n")
	in, broken, layer := g.deps(), false, -1
	for _, n := range g.Nodes {
		if n.Layer != layer {
			layer = n.Layer
			fmt.Fprintf(&b, "\nlayer %d%s\n", layer, map[bool]string{true: " (depends on nothing)"}[layer == 0])
		}
		var ids []string
		for _, e := range in[n.ID] {
			if len(ids) == graphDepsShown {
				ids = append(ids, fmt.Sprintf("+%d", len(in[n.ID])-graphDepsShown))
				break
			}
			ids = append(ids, e.From+map[bool]string{true: "!"}[e.Broken])
			broken = broken || e.Broken
		}
		b.WriteString(textLine(n, ids) + "\n")
	}
	if len(g.Nodes) == 0 {
		b.WriteString("\nNo tasks.\n")
	}
	if broken {
		b.WriteString("\n! a dependency of a cycle, which only a damaged file holds: left out of the layers\n")
	}
	return b.String()
}

// textLine is one task's line: its title cut so that the line fits.
func textLine(n GraphNode, deps []string) string {
	head := fmt.Sprintf("  %s [%s] ", n.ID, n.Status)
	tail := ""
	if len(deps) > 0 {
		tail = "  ← " + strings.Join(deps, ", ")
	}
	room := max(10, GraphTextWidth-utf8.RuneCountInString(head)-utf8.RuneCountInString(tail))
	return head + mdClip(graphLine(n.Title), room) + tail
}

// mermaidID is a task's id as a Mermaid node id (T-3 is T3).
func mermaidID(id string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return -1
	}, id)
}

// mermaidText escapes text for a quoted Mermaid label.
var mermaidText = strings.NewReplacer(`&`, "#amp;", `"`, "#quot;", `<`, "#lt;", `>`, "#gt;", "#", "#35;", "`", "#96;")

// graphLabel is how many runes of a title a node's label shows.
const graphLabel = 40

// Mermaid renders g as a Mermaid flowchart, top down, a class per status
// (st_todo, st_doing, ...); an edge of a cycle is dotted and labelled.
func (g *Graph) Mermaid() string {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	if len(g.Nodes) == 0 {
		b.WriteString("  %% no tasks\n")
	}
	byStatus := map[string][]string{}
	for _, n := range g.Nodes {
		label := n.ID + ": " + mdClip(graphLine(n.Title), graphLabel)
		fmt.Fprintf(&b, "  %s[\"%s\"]\n", mermaidID(n.ID), mermaidText.Replace(label))
		byStatus[n.Status] = append(byStatus[n.Status], mermaidID(n.ID))
	}
	for _, e := range g.Edges {
		arrow := "-->"
		if e.Broken {
			arrow = "-.->|cycle|"
		}
		fmt.Fprintf(&b, "  %s %s %s\n", mermaidID(e.From), arrow, mermaidID(e.To))
	}
	for _, c := range statusColours {
		fmt.Fprintf(&b, "  classDef st_%s fill:%s,stroke:%s,color:%s\n", c.status, c.fill, c.stroke, c.text)
	}
	for _, c := range statusColours {
		if ids := byStatus[c.status]; len(ids) > 0 {
			fmt.Fprintf(&b, "  class %s st_%s\n", strings.Join(ids, ","), c.status)
		}
	}
	return b.String()
}

var dotEscape = strings.NewReplacer(`\`, `\\`, `"`, `\"`)

// dotText quotes lines of text as a DOT string, one line each.
func dotText(lines ...string) string {
	for i, s := range lines {
		lines[i] = dotEscape.Replace(graphLine(s))
	}
	return `"` + strings.Join(lines, `\n`) + `"`
}

// DOT renders g as a Graphviz digraph, top down, boxes filled by status;
// an edge of a cycle is dashed and does not constrain the ranks.
func (g *Graph) DOT() string {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n", dotText(g.Project))
	b.WriteString("  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=11];\n")
	for _, n := range g.Nodes {
		fill, stroke, text := statusColour(n.Status)
		label := dotText(n.ID+" ["+n.Status+"]", mdClip(graphLine(n.Title), graphLabel))
		fmt.Fprintf(&b, "  %s [label=%s, tooltip=%s, fillcolor=%q, color=%q, fontcolor=%q];\n",
			dotText(n.ID), label, dotText(n.ID+" ["+n.Status+"] "+n.Title), fill, stroke, text)
	}
	for _, e := range g.Edges {
		attrs := ""
		if e.Broken {
			attrs = ` [style=dashed, color="#e03131", constraint=false, label="cycle"]`
		}
		fmt.Fprintf(&b, "  %s -> %s%s;\n", dotText(e.From), dotText(e.To), attrs)
	}
	b.WriteString("}\n")
	return b.String()
}
