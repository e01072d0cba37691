package digest

import (
	"fmt"
	"html"
	"math"
	"net/url"
	"strconv"
	"strings"
)

// graphSVGTitle is how many runes of a title a node's box shows; its
// <title> (the hover text) holds it whole.
const graphSVGTitle = 26

// GraphCSS styles an SVG of a graph: the boxes by status (st-todo,
// st-doing, st-done, st-blocked, st-cancelled), the edges, and an edge of
// a cycle. A page that shows the SVG serves it as a stylesheet; SVG with
// Standalone holds it in a <style> element.
var GraphCSS = graphCSS()

func graphCSS() string {
	var b strings.Builder
	b.WriteString(".flow-graph{font-family:system-ui,sans-serif;font-size:12px}\n")
	b.WriteString(".flow-graph .node rect{stroke-width:1.5px}\n")
	b.WriteString(".flow-graph .node .id{font-weight:600}\n.flow-graph .node .status{font-weight:400}\n")
	b.WriteString(".flow-graph .node:hover rect,.flow-graph .node:focus rect{stroke-width:3px}\n")
	b.WriteString(".flow-graph .edge{fill:none;stroke:#868e96;stroke-width:1.5px}\n")
	b.WriteString(".flow-graph .edge.broken{stroke:#e03131;stroke-dasharray:4 3}\n")
	b.WriteString(".flow-graph .arrow{fill:#868e96}\n")
	for _, c := range statusColours {
		fmt.Fprintf(&b, ".flow-graph .st-%s rect{fill:%s;stroke:%s}\n.flow-graph .st-%s text{fill:%s}\n",
			c.status, c.fill, c.stroke, c.status, c.text)
	}
	b.WriteString(".flow-graph .st-cancelled .label{text-decoration:line-through}\n")
	return b.String()
}

// SVGOptions says how SVG renders a graph.
type SVGOptions struct {
	// Standalone adds the XML declaration and a <style> element holding
	// GraphCSS, for a file viewed on its own. A page with a strict
	// Content-Security-Policy shows the SVG without it and serves
	// GraphCSS itself.
	Standalone bool
}

// SVG renders g as an SVG image of its layout: a node is a link to
// /p/{project}/tasks/{id} with the class st-{status}, holding its box,
// its id and status, the start of its title, and a <title> with all of
// it (shown on hover); an edge is a path with an arrow (the class broken
// marks an edge of a cycle). It holds no script and no style attribute:
// only geometry, classes and escaped text. The output depends only on g.
func (g *Graph) SVG(opt SVGOptions) string {
	var b strings.Builder
	if opt.Standalone {
		b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
	}
	w, h := svgNum(g.Width), svgNum(g.Height)
	fmt.Fprintf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"flow-graph\" width=\"%s\" height=\"%s\" viewBox=\"0 0 %s %s\" role=\"img\" aria-label=\"%s\">\n",
		w, h, w, h, svgText(g.heading()))
	if opt.Standalone {
		fmt.Fprintf(&b, "<style>\n%s</style>\n", GraphCSS)
	}
	b.WriteString("<defs><marker id=\"flow-arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"8\" markerHeight=\"8\" orient=\"auto\"><path class=\"arrow\" d=\"M0,0L10,5L0,10z\"/></marker></defs>\n")
	b.WriteString("<g class=\"edges\">\n")
	for _, e := range g.Edges {
		class := "edge"
		if e.Broken {
			class = "edge broken"
		}
		fmt.Fprintf(&b, "<path class=\"%s\" data-from=\"%s\" data-to=\"%s\" d=\"%s\" marker-end=\"url(#flow-arrow)\"/>\n",
			class, svgText(e.From), svgText(e.To), svgPath(e.Points))
	}
	b.WriteString("</g>\n<g class=\"nodes\">\n")
	base := "/p/" + url.PathEscape(g.Project) + "/tasks/"
	for _, n := range g.Nodes {
		x, y := n.X-g.NodeWidth/2, n.Y-g.NodeHeight/2
		fmt.Fprintf(&b, "<a class=\"node st-%s\" href=\"%s\" data-id=\"%s\">", svgText(n.Status), svgText(base+url.PathEscape(n.ID)), svgText(n.ID))
		fmt.Fprintf(&b, "<title>%s</title>", svgText(n.ID+" ["+n.Status+"] "+mdLine(n.Title)))
		fmt.Fprintf(&b, "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" rx=\"6\"/>", svgNum(x), svgNum(y), svgNum(g.NodeWidth), svgNum(g.NodeHeight))
		fmt.Fprintf(&b, "<text class=\"id\" x=\"%s\" y=\"%s\">%s <tspan class=\"status\">%s</tspan></text>", svgNum(x+8), svgNum(y+17), svgText(n.ID), svgText(n.Status))
		fmt.Fprintf(&b, "<text class=\"label\" x=\"%s\" y=\"%s\">%s</text></a>\n", svgNum(x+8), svgNum(y+34), svgText(mdClip(mdLine(n.Title), graphSVGTitle)))
	}
	b.WriteString("</g>\n</svg>\n")
	return b.String()
}

// svgText escapes text for an SVG's text and attributes.
func svgText(s string) string { return html.EscapeString(s) }

// svgNum formats a coordinate: an integer, or one decimal.
func svgNum(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

// svgPath is the path through points: straight when it has two, else a
// line from each bend to the next drawn as a curve that leaves and
// arrives vertically.
func svgPath(pts [][2]float64) string {
	var b strings.Builder
	for i, p := range pts {
		if i == 0 {
			fmt.Fprintf(&b, "M%s,%s", svgNum(p[0]), svgNum(p[1]))
			continue
		}
		q := pts[i-1]
		if len(pts) == 2 && q[0] == p[0] || q[1] >= p[1] {
			fmt.Fprintf(&b, "L%s,%s", svgNum(p[0]), svgNum(p[1]))
			continue
		}
		mid := (q[1] + p[1]) / 2
		fmt.Fprintf(&b, "C%s,%s %s,%s %s,%s", svgNum(q[0]), svgNum(mid), svgNum(p[0]), svgNum(mid), svgNum(p[0]), svgNum(p[1]))
	}
	return b.String()
}
