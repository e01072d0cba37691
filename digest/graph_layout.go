package digest

import (
	"math"
	"slices"
)

// The geometry of a laid-out graph, in SVG user units.
const (
	nodeWidth   = 180.0
	nodeHeight  = 44.0
	layerGap    = 56.0 // between the boxes of two layers
	layerStep   = nodeHeight + layerGap
	nodeGap     = 24.0 // between two boxes of a layer
	dummyGap    = 12.0 // between a bend of a long edge and its neighbours
	graphMargin = 16.0
	// aloneColumns is the least number of columns of the grid of tasks
	// with no dependency and no dependent (see layout).
	aloneColumns = 6
	// orderRounds bounds the barycenter sweeps (one down, one up each);
	// they stop sooner when a round removes no crossing.
	orderRounds = 8
	// placeRounds bounds how many times positions are pulled towards
	// their neighbours' (one pass down, one up each).
	placeRounds = 4
	// layoutBudget bounds the vertices (boxes and bends) the sweeps and
	// pulls visit in all, so that a large graph gets fewer rounds (one at
	// least) and its layout stays fast: a graph too large for the budget
	// is too large to read as a whole anyway.
	layoutBudget = 40_000
)

// rounds is how many rounds, limit at most, a graph of v vertices gets
// within layoutBudget, one at least.
func rounds(limit, v int) int { return max(1, min(limit, layoutBudget/max(v, 1))) }

// layout is a laid-out graph: the Sugiyama method, step by step. Cycles
// are broken (a depth-first search marks its back edges, which only a
// damaged file can have, and leaves them out); layers are the longest
// path from a source; an edge spanning several layers gets a dummy
// vertex in each layer it crosses; the vertices of each layer are
// ordered by barycenter sweeps, keeping the order with the fewest
// crossings; then x is placed, pulled towards each vertex's neighbours
// without overlapping. Vertices 0..n-1 are the nodes, then the dummies.
//
// A node with no edge at all (a task that depends on nothing and that
// nothing depends on) is in layer 0, but is not drawn in its row: such
// tasks are often most of a project, and would make that row as wide as
// all of them. They are drawn in a grid below the layers instead, as
// wide as the layers' widest row (aloneColumns at least), in id order,
// after the rest of layer 0.
type layout struct {
	n      int
	layers int
	alone  []bool // per node: it has no edge
	bands  int    // the layers of the nodes that are not alone
	layer  []int
	order  []int
	x, y   []float64
	width  float64
	height float64
	broken []bool         // per edge
	points [][][2]float64 // per edge
	// the layered graph, with dummies
	up, down links     // per vertex: neighbours in the layer above, below
	rows     [][]int32 // per layer: its vertices, in order
	chains   [][]int32 // per edge: its vertices, from..to (nil when broken)
}

// layOut lays out n nodes with edges from→to (sorted, no duplicates, no
// self-loops).
func layOut(n int, edges [][2]int) *layout {
	l := &layout{n: n, broken: backEdges(n, edges), alone: make([]bool, n)}
	for v := range n {
		l.alone[v] = true
	}
	for _, e := range edges {
		l.alone[e[0]], l.alone[e[1]] = false, false
	}
	l.layerNodes(edges)
	l.addDummies(edges)
	l.orderRows()
	l.place()
	l.route(edges)
	return l
}

// backEdges marks the edges that close a cycle: the back edges of a
// depth-first search from each node in turn, iterative so that a long
// chain cannot overflow the stack.
func backEdges(n int, edges [][2]int) []bool {
	out := adjacency(n, edges)
	broken := make([]bool, len(edges))
	const (
		white = iota
		grey
		black
	)
	colour := make([]uint8, n)
	type frame struct{ v, next int }
	for s := range n {
		if colour[s] != white {
			continue
		}
		stack := []frame{{s, 0}}
		colour[s] = grey
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if f.next == len(out[f.v]) {
				colour[f.v] = black
				stack = stack[:len(stack)-1]
				continue
			}
			e := out[f.v][f.next]
			f.next++
			switch w := edges[e][1]; colour[w] {
			case grey:
				broken[e] = true
			case white:
				colour[w] = grey
				stack = append(stack, frame{w, 0})
			}
		}
	}
	return broken
}

// adjacency lists, per node, the indexes of the edges leaving it.
func adjacency(n int, edges [][2]int) [][]int {
	out := make([][]int, n)
	for i, e := range edges {
		out[e[0]] = append(out[e[0]], i)
	}
	return out
}

// layerNodes gives each node the length of the longest path to it
// (Kahn's order over the edges that are not broken).
func (l *layout) layerNodes(edges [][2]int) {
	l.layer = make([]int, l.n)
	indeg := make([]int, l.n)
	for i, e := range edges {
		if !l.broken[i] {
			indeg[e[1]]++
		}
	}
	out := adjacency(l.n, edges)
	queue := make([]int, 0, l.n)
	for v := range l.n {
		if indeg[v] == 0 {
			queue = append(queue, v)
		}
	}
	for i := 0; i < len(queue); i++ {
		v := queue[i]
		l.layers = max(l.layers, l.layer[v]+1)
		for _, e := range out[v] {
			if l.broken[e] {
				continue
			}
			w := edges[e][1]
			l.layer[w] = max(l.layer[w], l.layer[v]+1)
			if indeg[w]--; indeg[w] == 0 {
				queue = append(queue, w)
			}
		}
	}
}

// addDummies builds the layered graph: each edge that is not broken
// becomes a chain of vertices, one per layer from its from to its to,
// and each vertex lists its neighbours above and below (in one array
// each, indexed by vertex).
func (l *layout) addDummies(edges [][2]int) {
	l.chains = make([][]int32, len(edges))
	var segs [][2]int32
	for i, e := range edges {
		if l.broken[i] {
			continue
		}
		chain := []int32{int32(e[0])}
		for ly := l.layer[e[0]] + 1; ly < l.layer[e[1]]; ly++ {
			l.layer = append(l.layer, ly)
			chain = append(chain, int32(len(l.layer)-1))
		}
		chain = append(chain, int32(e[1]))
		for k := 1; k < len(chain); k++ {
			segs = append(segs, [2]int32{chain[k-1], chain[k]})
		}
		l.chains[i] = chain
	}
	l.down, l.up = newLinks(len(l.layer), segs, 0), newLinks(len(l.layer), segs, 1)
	for v, ly := range l.layer {
		if v >= l.n || !l.alone[v] {
			l.bands = max(l.bands, ly+1)
		}
	}
	l.rows = make([][]int32, l.bands)
	for v, ly := range l.layer {
		if v >= l.n || !l.alone[v] {
			l.rows[ly] = append(l.rows[ly], int32(v))
		}
	}
}

// links lists each vertex's neighbours on one side: those of v are
// to[start[v]:start[v+1]].
type links struct {
	start []int32
	to    []int32
}

func (k links) of(v int32) []int32 { return k.to[k.start[v]:k.start[v+1]] }

// newLinks lists, for each of n vertices, the other end of the segments
// whose end side is it (0: the upper end, listing the lower ones).
func newLinks(n int, segs [][2]int32, side int) links {
	k := links{start: make([]int32, n+1), to: make([]int32, len(segs))}
	for _, s := range segs {
		k.start[s[side]+1]++
	}
	for v := range n {
		k.start[v+1] += k.start[v]
	}
	fill := slices.Clone(k.start[:n])
	for _, s := range segs {
		k.to[fill[s[side]]] = s[1-side]
		fill[s[side]]++
	}
	return k
}

// orderRows orders each layer by barycenter sweeps, down (by the
// positions of the vertices above) then up (below), and keeps the order
// with the fewest crossings seen.
func (l *layout) orderRows() {
	pos := make([]float64, len(l.layer))
	setPos := func() {
		for _, row := range l.rows {
			for i, v := range row {
				pos[v] = float64(i)
			}
		}
	}
	setPos()
	best, bestCross := cloneRows(l.rows), l.crossings(pos)
	var sorter rowSorter
	for round := 0; round < rounds(orderRounds, len(l.layer)) && bestCross > 0; round++ {
		for ly := 1; ly < l.bands; ly++ {
			sorter.sortRow(l.rows[ly], l.up, pos)
		}
		for ly := l.bands - 2; ly >= 0; ly-- {
			sorter.sortRow(l.rows[ly], l.down, pos)
		}
		c := l.crossings(pos)
		if c >= bestCross {
			break
		}
		best, bestCross = cloneRows(l.rows), c
	}
	l.rows = best
	setPos()
	l.order = make([]int, len(l.layer))
	for v := range pos {
		l.order[v] = int(pos[v])
	}
	next := 0
	if l.bands > 0 {
		next = len(l.rows[0])
	}
	for v := range l.n {
		if l.alone[v] {
			l.order[v], next = next, next+1
		}
	}
}

// sortRow sorts row by the mean position of each vertex's neighbours in
// the layer next (a vertex without any keeps its own position), stably,
// and records the new positions. The sort key is one integer: the mean
// in units of 1/rankScale above the vertex's position before, which
// breaks ties (so the sort is stable).
func (r *rowSorter) sortRow(row []int32, next links, pos []float64) {
	buf := r.keys[:0]
	for i, v := range row {
		key := pos[v]
		if ns := next.of(v); len(ns) > 0 {
			sum := 0.0
			for _, w := range ns {
				sum += pos[w]
			}
			key = sum / float64(len(ns))
		}
		buf = append(buf, uint64(key*rankScale)<<rankPosBits|uint64(i))
	}
	slices.Sort(buf)
	old := append(r.old[:0], row...)
	for i, k := range buf {
		v := old[k&(1<<rankPosBits-1)]
		row[i], pos[v] = v, float64(i)
	}
	r.keys, r.old = buf, old
}

// rowSorter holds sortRow's scratch space, from one row to the next.
type rowSorter struct {
	keys []uint64
	old  []int32
}

// The parts of sortRow's key: the mean, to 1/rankScale, over the
// position before, in rankPosBits bits (rows of up to 16M vertices and
// means below 2^24).
const (
	rankScale   = 1 << 16
	rankPosBits = 24
)

func cloneRows(rows [][]int32) [][]int32 {
	out := make([][]int32, len(rows))
	for i, r := range rows {
		out[i] = slices.Clone(r)
	}
	return out
}

// crossings counts the pairs of segments that cross between each two
// adjacent layers: the inversions among the lower ends of the segments
// sorted by their upper ends, counted with a Fenwick tree.
func (l *layout) crossings(pos []float64) int {
	total := 0
	var ends []int
	var tree []int
	for ly := 0; ly+1 < l.bands; ly++ {
		ends = ends[:0]
		for _, v := range l.rows[ly] { // in order: upper ends ascend
			start := len(ends)
			for _, w := range l.down.of(v) {
				ends = append(ends, int(pos[w]))
			}
			slices.Sort(ends[start:])
		}
		size := len(l.rows[ly+1])
		tree = slices.Grow(tree[:0], size+1)[:size+1]
		clear(tree)
		for i, e := range ends {
			// segments seen so far whose lower end is right of e
			total += i - fenwickSum(tree, e+1)
			for j := e + 1; j <= size; j += j & -j {
				tree[j]++
			}
		}
	}
	return total
}

// fenwickSum is the count of lower ends at positions below n.
func fenwickSum(tree []int, n int) int {
	s := 0
	for ; n > 0; n -= n & -n {
		s += tree[n]
	}
	return s
}

// place gives every vertex its x: packed from the left in its layer's
// order, then pulled towards the mean x of its neighbours above (a pass
// down) and below (a pass up), each layer kept in order and apart; then
// shifted so that the leftmost box starts at the margin.
func (l *layout) place() {
	l.x, l.y = make([]float64, len(l.layer)), make([]float64, len(l.layer))
	for _, row := range l.rows {
		for i, v := range row {
			if i > 0 {
				prev := row[i-1]
				l.x[v] = l.x[prev] + l.sep(prev, v)
			}
		}
	}
	want := make([]float64, len(l.layer))
	var buf []float64
	for range rounds(placeRounds, len(l.layer)) {
		for ly := 1; ly < l.bands; ly++ {
			buf = l.pull(l.rows[ly], l.up, want, buf)
		}
		for ly := l.bands - 2; ly >= 0; ly-- {
			buf = l.pull(l.rows[ly], l.down, want, buf)
		}
	}
	left, right := math.Inf(1), math.Inf(-1)
	for _, row := range l.rows {
		for _, v := range row {
			left, right = min(left, l.x[v]-l.half(v)), max(right, l.x[v]+l.half(v))
		}
	}
	if l.bands == 0 {
		left, right = 0, 0
	}
	for _, row := range l.rows {
		for _, v := range row {
			l.x[v] = math.Round(l.x[v] - left + graphMargin)
			l.y[v] = float64(l.layer[v])*layerStep + nodeHeight/2 + graphMargin
		}
	}
	l.width = math.Ceil(right - left + 2*graphMargin)
	l.height = max(0, float64(l.bands)*layerStep-layerGap) + 2*graphMargin
	l.placeAlone()
}

// placeAlone puts the nodes that are alone in a grid below the layers,
// in id order, row by row.
func (l *layout) placeAlone() {
	cols := max(aloneColumns, int((l.width-2*graphMargin+nodeGap)/(nodeWidth+nodeGap)))
	top := graphMargin
	if l.bands > 0 {
		top = l.height - graphMargin + layerGap
	}
	k := 0
	for v := range l.n {
		if !l.alone[v] {
			continue
		}
		col, row := k%cols, k/cols
		l.x[v] = graphMargin + nodeWidth/2 + float64(col)*(nodeWidth+nodeGap)
		l.y[v] = top + nodeHeight/2 + float64(row)*layerStep
		l.width = max(l.width, l.x[v]+nodeWidth/2+graphMargin)
		l.height = max(l.height, l.y[v]+nodeHeight/2+graphMargin)
		k++
	}
}

// half is half the width a vertex takes: a box, or nothing for a bend.
func (l *layout) half(v int32) float64 {
	if int(v) < l.n {
		return nodeWidth / 2
	}
	return 0
}

// sep is the least distance between the centres of a and b, side by side.
func (l *layout) sep(a, b int32) float64 {
	gap := nodeGap
	if int(a) >= l.n || int(b) >= l.n {
		gap = dummyGap
	}
	return l.half(a) + gap + l.half(b)
}

// pull moves each vertex of row towards the mean x of its neighbours in
// next, keeping the row in order and apart: the mean of a placement
// packed from the left (each as far left as it wants but right of the
// one before) and one packed from the right, both of which keep every
// distance, so their mean does too.
func (l *layout) pull(row []int32, next links, want, fromLeft []float64) []float64 {
	if len(row) == 0 {
		return fromLeft
	}
	for _, v := range row {
		want[v] = l.x[v]
		if ns := next.of(v); len(ns) > 0 {
			sum := 0.0
			for _, w := range ns {
				sum += l.x[w]
			}
			want[v] = sum / float64(len(ns))
		}
	}
	fromLeft = slices.Grow(fromLeft[:0], len(row))[:len(row)]
	for i, v := range row {
		fromLeft[i] = want[v]
		if i > 0 {
			fromLeft[i] = max(want[v], fromLeft[i-1]+l.sep(row[i-1], v))
		}
	}
	x := want[row[len(row)-1]]
	for i := len(row) - 1; i >= 0; i-- {
		v := row[i]
		if i < len(row)-1 {
			x = min(want[v], x-l.sep(v, row[i+1]))
		}
		l.x[v] = (fromLeft[i] + x) / 2
	}
	return fromLeft
}

// route gives each edge its points: from the bottom of its from's box
// down through each layer it crosses (where its bend stands, from the
// top of the layer's boxes to their bottom, so that it passes beside
// them) to the top of its to's box; a broken edge goes straight
// between the facing sides of its two boxes.
func (l *layout) route(edges [][2]int) {
	l.points = make([][][2]float64, len(edges))
	for i, e := range edges {
		if l.broken[i] {
			a, b := int32(e[0]), int32(e[1])
			dy := nodeHeight / 2
			if l.y[b] < l.y[a] {
				dy = -dy
			}
			l.points[i] = [][2]float64{{l.x[a], l.y[a] + dy}, {l.x[b], l.y[b] - dy}}
			continue
		}
		chain := l.chains[i]
		pts := make([][2]float64, 0, 2*len(chain)-2)
		pts = append(pts, [2]float64{l.x[chain[0]], l.y[chain[0]] + nodeHeight/2})
		for _, v := range chain[1 : len(chain)-1] { // through the band of each layer crossed
			pts = append(pts, [2]float64{l.x[v], l.y[v] - nodeHeight/2}, [2]float64{l.x[v], l.y[v] + nodeHeight/2})
		}
		to := chain[len(chain)-1]
		l.points[i] = append(pts, [2]float64{l.x[to], l.y[to] - nodeHeight/2})
	}
}
