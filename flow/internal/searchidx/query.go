package searchidx

import (
	"bytes"
	"container/heap"
	"encoding/binary"
	"math"
	"slices"
	"strings"

	"github.com/flowctl/flowctl/flow/store"
)

// Query is what Top looks for.
type Query struct {
	Words   []string // lowered, as Words gives them, without repeats
	Project string   // "": every project
	UpTo    uint64   // only postings of events at most this seq; 0: all
	Events  uint64   // how many events there are (BM25's N)
}

// Lists are the postings a query reads: per project, per word, the
// chunks of the word's list, whose postings are decoded only when Top
// may keep one of them.
type Lists struct {
	q        Query
	tx       store.Tx // where the stored chunks are read again to be decoded
	projects []string
	lists    map[string][][]chunk
	decoded  [][]Posting // the postings of the chunks decoded (chunk.ps)
	df       []int       // per word: postings in all the lists read
}

// chunk is one chunk of a list: stored (not decoded yet: its value is
// read again, by its key, when it is) or decoded (ps). Its postings are
// at least first and less than the next chunk's first. A common word's
// list has a chunk per ChunkSize postings, tens of thousands at 10M
// events: a stored chunk keeps neither its key nor its value, which the
// scan that found it does not copy, and holds no pointer (16 bytes the
// garbage collector does not scan).
type chunk struct {
	first  Posting
	impact uint16 // the low 16 bits of its posting of the highest Gain
	ps     int32  // decoded: 1 + its index in Lists.decoded; 0: stored
}

// done reports whether c is decoded.
func (c *chunk) done() bool { return c.ps != 0 }

// postings are the postings of a decoded chunk.
func (l *Lists) postings(c *chunk) []Posting { return l.decoded[c.ps-1] }

// setPostings makes c a decoded chunk of ps.
func (l *Lists) setPostings(c *chunk, ps []Posting) {
	if c.ps == 0 {
		l.decoded = append(l.decoded, nil)
		c.ps = int32(len(l.decoded))
	}
	l.decoded[c.ps-1] = ps
}

// decode decodes a stored chunk of word i in project once, reading its
// value again.
func (l *Lists) decode(c *chunk, project string, i int) error {
	if c.done() {
		return nil
	}
	k := chunkKey(listPrefix(l.q.Words[i], project), c.first)
	v, err := l.tx.Get(Bucket, k)
	if err != nil {
		return err
	}
	if v == nil {
		return corrupt(k)
	}
	ps, err := decodeChunk(nil, len(k)-8, k, v)
	if err != nil {
		return err
	}
	l.setPostings(c, ps)
	return nil
}

// Read reads the postings of q's words: from the stored index in tx
// (nil: none), and from extra (postings not stored: events appended by a
// flowctl that keeps no index, or the whole log read when the index is
// of another format; nil: none). It reads the lists' impact blocks
// and decodes only the last chunk of each list (its length,
// and where the postings up to q.UpTo end, are in it): a chunk before
// it holds ChunkSize postings (doc.go).
func Read(tx store.Tx, extra *Writer, q Query) (*Lists, error) {
	l := &Lists{q: q, tx: tx, lists: map[string][][]chunk{}, df: make([]int, len(q.Words))}
	var pending *Writer
	if tx != nil {
		var err error
		if pending, err = readPending(tx, q); err != nil {
			return nil, err
		}
	}
	for i, word := range q.Words {
		if tx != nil {
			if err := l.readStored(tx, i, word); err != nil {
				return nil, err
			}
		}
		for _, from := range []*Writer{pending, extra} {
			if err := l.keepFrom(from, i, word); err != nil {
				return nil, err
			}
		}
	}
	for proj, lists := range l.lists {
		for i, cs := range lists {
			n, err := l.count(cs, proj, i)
			if err != nil {
				return nil, err
			}
			lists[i], l.df[i] = cs[:n], l.df[i]+l.held(cs[:n])
		}
	}
	slices.Sort(l.projects)
	return l, nil
}

// keepFrom keeps the postings of word i of w's lists (nil: none).
func (l *Lists) keepFrom(w *Writer, i int, word string) error {
	if w == nil {
		return nil
	}
	wp := wordPrefix(word)
	for p, ps := range w.lists {
		if !strings.HasPrefix(p, string(wp)) {
			continue
		}
		proj, _, ok := projectOf([]byte(p), len(wp), 0)
		if !ok || (l.q.Project != "" && proj != l.q.Project) {
			continue
		}
		if err := l.keep(proj, i, *ps); err != nil {
			return err
		}
	}
	return nil
}

// readPending reads the postings of q's words, in q's project, of the
// pending entries of events up to q.UpTo.
func readPending(tx store.Tx, q Query) (*Writer, error) {
	w := &Writer{lists: map[string]*[]Posting{}}
	words := map[string]bool{}
	for _, word := range q.Words {
		words[word] = true
	}
	err := store.ScanShared(tx, PendingBucket, nil, func(k, v []byte) error {
		if len(k) == 8 && q.UpTo != 0 && binary.BigEndian.Uint64(k) > q.UpTo {
			return store.ErrStop
		}
		if q.Project != "" && len(v) >= 2 && !bytes.Equal(v[2:min(len(v), 2+int(binary.BigEndian.Uint16(v)))], []byte(q.Project)) {
			return nil
		}
		return decodePending(k, v, func(seq uint64, project, word []byte, low uint16) {
			if words[string(word)] {
				w.buf = appendListPrefix(w.buf[:0], word, string(project))
				w.add(w.buf, Posting(seq<<16|uint64(low)))
			}
		})
	})
	return w, err
}

// readStored reads the chunks of word i's lists, each list's from its
// impact blocks (its full chunks' first postings and best postings' low
// bits, without their values, which are read when a chunk is decoded)
// and its last chunk, decoded. It finds the lists from the last, with
// one Store.Last each, never reading the chunks in between.
func (l *Lists) readStored(tx store.Tx, i int, word string) error {
	prefix := wordPrefix(word)
	n := len(prefix)
	if l.q.Project != "" {
		prefix = listPrefix(word, l.q.Project)
	}
	max := after(prefix)
	for {
		k, v, err := tx.Last(Bucket, prefix, max)
		if err != nil || k == nil {
			return err
		}
		proj, pl, ok := projectOf(k, n, 8)
		if !ok {
			return corrupt(k)
		}
		max = k[:pl] // the lists before this one
		if l.q.Project != "" && proj != l.q.Project {
			continue // a project whose name starts with Project's
		}
		last, err := decodeChunk(nil, pl, k, v)
		if err != nil {
			return err
		}
		dst := l.list(proj, i)
		ip := impactPrefix(k[:pl])
		full := Posting(0) // the first posting of the last full chunk the blocks list
		// The scan keeps nothing of k and v: it need not copy them.
		err = store.ScanShared(tx, Bucket, ip, func(k, v []byte) error {
			return eachImpact(len(ip), k, v, func(first Posting, impact uint16) {
				// The list's last chunk, when full, is read decoded below;
				// later chunks start later still than one past UpTo.
				if full = first; first < last[0] && (l.q.UpTo == 0 || first.Seq() <= l.q.UpTo) {
					*dst = append(*dst, chunk{first: first, impact: impact})
				}
			})
		})
		if err != nil {
			return err
		}
		// The blocks list every full chunk but the last one's, which is
		// full when they list it.
		if full > last[0] || (full == last[0]) != (len(last) == ChunkSize) {
			return corrupt(k)
		}
		if l.q.UpTo == 0 || last[0].Seq() <= l.q.UpTo {
			*dst = append(*dst, chunk{first: last[0], impact: bestLow(last)})
			l.setPostings(&(*dst)[len(*dst)-1], last)
		}
	}
}

// after is the smallest key after every key that starts with prefix (a
// word's or a list's: a word holds no byte 0xFF, and a project's name is
// not that long), and does not start with it.
func after(prefix []byte) []byte {
	b := bytes.Clone(prefix)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] != 0xFF {
			b[i]++
			return b[:i+1]
		}
	}
	return append(b, 0xFF) // unreachable: every prefix starts with a kind byte
}

// count decodes the last chunk of a list, cuts it at q.UpTo, and returns
// how many of the chunks hold a posting up to it. The chunks before the
// last stored one are full, and at most UpTo when the one after starts
// at most UpTo.
func (l *Lists) count(cs []chunk, project string, i int) (int, error) {
	n := len(cs)
	for n > 0 {
		c := &cs[n-1]
		if err := l.decode(c, project, i); err != nil {
			return 0, err
		}
		if l.q.UpTo != 0 {
			ps := l.postings(c)
			l.setPostings(c, ps[:sortSearch(ps, l.q.UpTo)])
		}
		if len(l.postings(c)) > 0 {
			return n, nil
		}
		n--
	}
	return 0, nil
}

// held is how many postings the chunks hold: ChunkSize for a stored
// one not decoded.
func (l *Lists) held(cs []chunk) int {
	n := 0
	for i := range cs {
		if cs[i].done() {
			n += len(l.postings(&cs[i]))
		} else {
			n += ChunkSize
		}
	}
	return n
}

// list returns the chunks of word i in project.
func (l *Lists) list(project string, i int) *[]chunk {
	lists := l.lists[project]
	if lists == nil {
		lists = make([][]chunk, len(l.q.Words))
		l.lists[project] = lists
		l.projects = append(l.projects, project)
	}
	return &lists[i]
}

// keep adds postings (each larger than those of the list's chunks) to
// the list of word i in project, in chunks of ChunkSize; count cuts them
// at q.UpTo. The stored chunk they follow is decoded: it may not be full.
func (l *Lists) keep(project string, i int, ps []Posting) error {
	if len(ps) == 0 {
		return nil
	}
	dst := l.list(project, i)
	if n := len(*dst); n > 0 {
		if err := l.decode(&(*dst)[n-1], project, i); err != nil {
			return err
		}
	}
	for j := 0; j < len(ps); j += ChunkSize {
		c := ps[j:min(j+ChunkSize, len(ps))]
		*dst = append(*dst, chunk{first: c[0], impact: bestLow(c)})
		l.setPostings(&(*dst)[len(*dst)-1], c)
	}
	return nil
}

// bestLow is the low 16 bits of the posting of ps of the highest Gain.
func bestLow(ps []Posting) uint16 {
	best := ps[0].low()
	for _, p := range ps[1:] {
		if gain(p.low()) > gain(best) {
			best = p.low()
		}
	}
	return best
}

// sortSearch is the number of postings of ps (ascending) of events at
// most seq.
func sortSearch(ps []Posting, seq uint64) int {
	n, _ := slices.BinarySearch(ps, Posting((seq+1)<<16))
	return n
}

// Candidates is how many postings hold a word of the query.
func (l *Lists) Candidates() int {
	n := 0
	for _, d := range l.df {
		n += d
	}
	return n
}

// projectOf reads the project of a key whose word prefix is n bytes
// long and which ends tail bytes after the project (8: a chunk's key, 0:
// a list's prefix), and the length of the list's prefix.
func projectOf(k []byte, n, tail int) (string, int, bool) {
	if len(k) < n+2 {
		return "", 0, false
	}
	l := int(binary.BigEndian.Uint16(k[n:]))
	if len(k) != n+2+l+tail {
		return "", 0, false
	}
	return string(k[n+2 : n+2+l]), n + 2 + l, true
}

// Scored is one field of one event and its score.
type Scored struct {
	Project string
	Seq     uint64
	Field   Field
	Score   float64
}

// The ranking's constants: BM25's k1 and b, the average length of each
// field's text (in words) and each field's boost.
const (
	k1 = 1.2
	b  = 0.75
)

var (
	avgLen = [...]float64{FieldTitle: 6, FieldDescription: 24, FieldContext: 12, FieldNote: 16, FieldMemory: 16, FieldCommand: 4}
	boost  = [...]float64{FieldTitle: 3, FieldDescription: 1, FieldContext: 1, FieldNote: 1, FieldMemory: 1.2, FieldCommand: 1.5}
)

// Score is BM25's weight of one posting: the word's idf (of df postings
// among n events) times its saturated, length-normalized frequency,
// times the field's boost.
func Score(p Posting, df int, n uint64) float64 { return weight(p, idf(df, n)) }

// idf is BM25's inverse document frequency of a word in df postings
// among n events.
func idf(df int, n uint64) float64 {
	N := math.Max(float64(n), float64(df))
	return math.Log(1 + (N-float64(df)+0.5)/(float64(df)+0.5))
}

// weight is Score with the word's idf given: idf times the posting's
// gain, so that of two postings the one of the higher gain weighs at
// least as much, whatever the idf (a product rounds monotonically).
func weight(p Posting, idf float64) float64 { return idf * gain(p.low()) }

// gain is the weight of a posting (its low 16 bits) but for the idf: its
// saturated, length-normalized frequency times its field's boost. A
// chunk's value starts with the posting of its highest gain (doc.go), so
// the ranking's constants are part of the format.
func gain(low uint16) float64 {
	p := Posting(low)
	f := p.Field()
	if int(f) >= len(avgLen) || avgLen[f] == 0 {
		return 0
	}
	tf := float64(p.TF())
	norm := tf * (k1 + 1) / (tf + k1*(1-b+b*float64(p.Len())/avgLen[f]))
	return boost[f] * norm
}

// Top returns the m best fields of events, best first: the highest
// score (the scores of a field summed over the words it holds), a tie to
// the newer event. It keeps only m of them at a time, and decodes only
// the chunks that may hold one better than the worst kept: a word in a
// million events costs a pass over its chunks' keys, and the decoding of
// a few.
func (l *Lists) Top(m int) ([]Scored, error) {
	if m <= 0 {
		return nil, nil
	}
	t := topK{l: l, h: make(minHeap, 0, m), m: m, idfs: make([]float64, len(l.q.Words))}
	for i := range t.idfs {
		t.idfs[i] = idf(l.df[i], l.q.Events)
	}
	for _, proj := range l.projects {
		if err := t.project(proj, l.lists[proj]); err != nil {
			return nil, err
		}
	}
	out := make([]Scored, len(t.h))
	for i := len(t.h) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&t.h).(Scored)
	}
	return out, nil
}

// topK is Top's state: the best m candidates yet, the worst on top.
type topK struct {
	l      *Lists
	h      minHeap
	m      int
	idfs   []float64
	at     []int       // per word: its chunk the segment is in
	parts  [][]Posting // per word: its postings in the segment
	decode int         // chunks decoded (for tests)
}

// project walks the lists of one project (one per word) newest first, in
// segments: the runs of postings between two chunk starts of any of the
// lists, where each list is within one chunk. The sum of those chunks'
// best weights bounds the score of every field of the segment; when the
// heap is full and the bound cannot beat its worst (a tie loses too when
// the segment is older), the segment is skipped without a decode. A
// segment kept is merged whole, so a field's score sums all its words.
func (t *topK) project(proj string, lists [][]chunk) error {
	t.at, t.parts = t.at[:0], t.parts[:0]
	for _, cs := range lists {
		t.at = append(t.at, len(cs)-1)
		t.parts = append(t.parts, nil)
	}
	hi := Posting(math.MaxUint64) // the segment's postings are below hi, in key order
	for {
		lo, ok := Posting(0), false // the segment starts at the latest chunk start
		bound := 0.0
		for i, cs := range lists {
			if t.at[i] >= 0 {
				c := &cs[t.at[i]]
				lo, ok = max(lo, c.first&^0xFFF), true
				bound += t.idfs[i] * gain(c.impact)
			}
		}
		if !ok {
			return nil
		}
		if t.mayBeat(bound, hi) {
			if err := t.segment(proj, lists, lo, hi); err != nil {
				return err
			}
		}
		for i, cs := range lists {
			if t.at[i] >= 0 && cs[t.at[i]].first&^0xFFF == lo {
				t.at[i]--
			}
		}
		hi = lo
	}
}

// mayBeat reports whether a candidate scoring at most bound, of a
// posting below hi, may rank before the worst kept.
func (t *topK) mayBeat(bound float64, hi Posting) bool {
	if len(t.h) < t.m {
		return true
	}
	w := t.h[0]
	return bound > w.Score || bound == w.Score && (hi-1).Seq() >= w.Seq
}

// segment merges the postings of the lists from lo up to hi (in key
// order, field and seq: lo's low 12 bits are zero) and offers each field.
func (t *topK) segment(proj string, lists [][]chunk, lo, hi Posting) error {
	for i, cs := range lists {
		t.parts[i] = nil
		if t.at[i] < 0 {
			continue
		}
		c := &cs[t.at[i]]
		if !c.done() {
			t.decode++
			if err := t.l.decode(c, proj, i); err != nil {
				return err
			}
		}
		ps := t.l.postings(c)
		from, _ := slices.BinarySearch(ps, lo)
		to, _ := slices.BinarySearch(ps, hi&^0xFFF)
		if hi == math.MaxUint64 {
			to = len(ps)
		}
		t.parts[i] = ps[from:to]
	}
	t.merge(proj)
	return nil
}

// merge walks t.parts (each ascending) together, newest first, and
// offers each field of an event with its summed score. Newest first, a
// candidate that only ties the worst one kept does not replace it: the
// heap is left alone for most of a long list.
func (t *topK) merge(proj string) {
	for {
		key, ok := uint64(0), false
		for _, ps := range t.parts {
			if len(ps) > 0 && uint64(ps[len(ps)-1])>>12 >= key {
				key, ok = uint64(ps[len(ps)-1])>>12, true
			}
		}
		if !ok {
			return
		}
		s := 0.0
		for i, ps := range t.parts {
			if n := len(ps) - 1; n >= 0 && uint64(ps[n])>>12 == key {
				s += weight(ps[n], t.idfs[i])
				t.parts[i] = ps[:n]
			}
		}
		t.offer(Scored{Project: proj, Seq: key >> 4, Field: Field(key & 0xF), Score: s})
	}
}

func (t *topK) offer(c Scored) {
	switch {
	case len(t.h) < t.m:
		heap.Push(&t.h, c)
	case better(c, t.h[0]):
		t.h[0] = c
		heap.Fix(&t.h, 0)
	}
}

// better reports whether a ranks before b.
func better(a, b Scored) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	if a.Seq != b.Seq {
		return a.Seq > b.Seq
	}
	if a.Field != b.Field {
		return a.Field < b.Field
	}
	return a.Project < b.Project
}

// minHeap holds the best candidates seen, the worst on top.
type minHeap []Scored

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(Scored)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
