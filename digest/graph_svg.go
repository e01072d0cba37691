package digest

import (
	"fmt"
	"html"
	"math"
	"net/url"
	"slices"
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
	b := svgWriter{buf: make([]byte, 0, 512*(len(g.Nodes)+len(g.Edges))+1024)}
	if opt.Standalone {
		b.raw("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
	}
	b.raw(`<svg xmlns="http://www.w3.org/2000/svg" class="flow-graph" width="`).num(g.Width).raw(`" height="`).num(g.Height)
	b.raw(`" viewBox="0 0 `).num(g.Width).raw(" ").num(g.Height).raw(`" aria-label="`).text(g.heading()).raw("\">\n")
	if opt.Standalone {
		b.raw("<style>\n").raw(GraphCSS).raw("</style>\n")
	}
	b.raw(`<defs><marker id="flow-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto"><path class="arrow" d="M0,0L10,5L0,10z"/></marker></defs>` + "\n")
	b.raw("<g class=\"edges\">\n")
	for _, e := range g.Edges {
		b.raw(`<path class="edge`)
		if e.Broken {
			b.raw(" broken")
		}
		b.raw(`" data-from="`).text(e.From).raw(`" data-to="`).text(e.To).raw(`" d="`)
		b.path(e.Points)
		b.raw("\" marker-end=\"url(#flow-arrow)\"/>\n")
	}
	b.raw("</g>\n<g class=\"nodes\">\n")
	base := "/p/" + url.PathEscape(g.Project) + "/tasks/"
	for _, n := range g.Nodes {
		x, y := n.X-g.NodeWidth/2, n.Y-g.NodeHeight/2
		b.raw(`<a class="node st-`).text(n.Status).raw(`" href="`).text(base + url.PathEscape(n.ID)).raw(`" data-id="`).text(n.ID).raw(`">`)
		b.raw("<title>").text(n.ID + " [" + n.Status + "] " + graphLine(n.Title)).raw("</title>")
		b.raw(`<rect x="`).num(x).raw(`" y="`).num(y).raw(`" width="`).num(g.NodeWidth).raw(`" height="`).num(g.NodeHeight).raw(`" rx="6"/>`)
		b.raw(`<text class="id" x="`).num(x + 8).raw(`" y="`).num(y + 17).raw(`">`).text(n.ID).raw(` <tspan class="status">`).text(n.Status).raw("</tspan></text>")
		b.raw(`<text class="label" x="`).num(x + 8).raw(`" y="`).num(y + 34).raw(`">`).text(mdClip(graphLine(n.Title), graphSVGTitle)).raw("</text></a>\n")
	}
	b.raw("</g>\n</svg>\n")
	return string(b.buf)
}

// svgWriter appends the parts of an SVG to a buffer.
type svgWriter struct{ buf []byte }

func (w *svgWriter) raw(s string) *svgWriter { w.buf = append(w.buf, s...); return w }

// text appends s escaped for an SVG's text and attributes.
func (w *svgWriter) text(s string) *svgWriter {
	if !strings.ContainsAny(s, `<>&'"`) {
		return w.raw(s)
	}
	return w.raw(html.EscapeString(s))
}

// num appends a coordinate, to a tenth: 12, 12.5, -3.2 (as
// strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) would, in
// integers).
func (w *svgWriter) num(v float64) *svgWriter {
	tenths := math.Round(v * 10)
	if math.Abs(tenths) >= 1<<53 || math.IsNaN(tenths) {
		w.buf = strconv.AppendFloat(w.buf, tenths/10, 'f', -1, 64)
		return w
	}
	t := int64(tenths)
	if t < 0 {
		w.buf, t = append(w.buf, '-'), -t
	}
	w.buf = strconv.AppendInt(w.buf, t/10, 10)
	if t%10 != 0 {
		w.buf = append(w.buf, '.', byte('0'+t%10))
	}
	return w
}

func (w *svgWriter) point(cmd byte, p [2]float64) *svgWriter {
	w.buf = append(w.buf, cmd)
	return w.num(p[0]).raw(",").num(p[1])
}

// path appends the path through pts: a straight line from the first to
// the second when they are the only ones or the second is not below the
// first, else, bend to bend, a curve that leaves and arrives vertically.
func (w *svgWriter) path(pts [][2]float64) {
	pts = straighten(pts)
	for i, p := range pts {
		if i == 0 {
			w.point('M', p)
			continue
		}
		q := pts[i-1]
		if len(pts) == 2 && q[0] == p[0] || q[1] >= p[1] {
			w.point('L', p)
			continue
		}
		mid := (q[1] + p[1]) / 2
		w.point('C', [2]float64{q[0], mid}).point(' ', [2]float64{p[0], mid}).point(' ', p)
	}
}

// straighten drops the points in the middle of a vertical run (a long
// edge's bends placed one under the other), which draw nothing.
func straighten(pts [][2]float64) [][2]float64 {
	var out [][2]float64
	for i, p := range pts {
		if i > 0 && i < len(pts)-1 && pts[i-1][0] == p[0] && pts[i+1][0] == p[0] {
			if out == nil {
				out = slices.Clone(pts[:i])
			}
			continue
		}
		if out != nil {
			out = append(out, p)
		}
	}
	if out == nil {
		return pts
	}
	return out
}
