package searchidx

import (
	"bytes"
	"container/heap"
	"encoding/binary"
	"math"
	"slices"

	"github.com/flowctl/flowctl/flow/store"
)

// Query is what Top looks for.
type Query struct {
	Words   []string // lowered, as Words gives them, without repeats
	Project string   // "": every project
	UpTo    uint64   // only postings of events at most this seq; 0: all
	Events  uint64   // how many events there are (BM25's N)
}

// Lists are the postings a query reads: per project, per word.
type Lists struct {
	q        Query
	projects []string
	lists    map[string][][]Posting
	df       []int // per word: postings in all the lists read
}

// Read reads the postings of q's words: from the stored index in tx
// (nil: none), and from extra (postings not stored: events appended by a
// flowctl that keeps no index, or the whole log read when the index is
// of another format; nil: none).
func Read(tx store.Tx, extra *Writer, q Query) (*Lists, error) {
	l := &Lists{q: q, lists: map[string][][]Posting{}, df: make([]int, len(q.Words))}
	for i, word := range q.Words {
		if tx != nil {
			if err := l.readStored(tx, i, word); err != nil {
				return nil, err
			}
		}
		if extra != nil {
			wp := wordPrefix(word)
			for p, ps := range extra.lists {
				if !bytes.HasPrefix([]byte(p), wp) {
					continue
				}
				if proj, _, ok := projectOf([]byte(p), len(wp), 0); ok && (q.Project == "" || proj == q.Project) {
					l.keep(proj, i, *ps)
				}
			}
		}
	}
	slices.Sort(l.projects)
	return l, nil
}

func (l *Lists) readStored(tx store.Tx, i int, word string) error {
	prefix := wordPrefix(word)
	n := len(prefix)
	if l.q.Project != "" {
		prefix = listPrefix(word, l.q.Project)
	}
	var last string // the project of the chunk before
	var dst *[]Posting
	return tx.Scan(Bucket, prefix, func(k, v []byte) error {
		proj, pl, ok := projectOf(k, n, 8)
		if !ok || (l.q.Project != "" && proj != l.q.Project) {
			return nil // a project whose name starts with Project's
		}
		if dst == nil || proj != last {
			dst, last = l.list(proj, i), proj
		}
		// Decoded in place: a common word's lists are long.
		from := len(*dst)
		ps, err := decodeChunk(*dst, pl, k, v)
		if err != nil {
			return err
		}
		if l.q.UpTo != 0 {
			ps = ps[:from+sortSearch(ps[from:], l.q.UpTo)]
		}
		*dst, l.df[i] = ps, l.df[i]+len(ps)-from
		return nil
	})
}

// list returns the list of word i in project.
func (l *Lists) list(project string, i int) *[]Posting {
	lists := l.lists[project]
	if lists == nil {
		lists = make([][]Posting, len(l.q.Words))
		l.lists[project] = lists
		l.projects = append(l.projects, project)
	}
	return &lists[i]
}

// keep adds the postings of ps up to q.UpTo to the list of word i in
// project.
func (l *Lists) keep(project string, i int, ps []Posting) {
	if l.q.UpTo != 0 {
		ps = ps[:sortSearch(ps, l.q.UpTo)]
	}
	if len(ps) == 0 {
		return
	}
	dst := l.list(project, i)
	*dst = append(*dst, ps...)
	l.df[i] += len(ps)
}

// sortSearch is the number of postings of ps (ascending) of events at
// most seq.
func sortSearch(ps []Posting, seq uint64) int {
	n, _ := slices.BinarySearch(ps, Posting((seq+1)<<16))
	return n
}

// Candidates is how many postings were read.
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

// weight is Score with the word's idf given.
func weight(p Posting, idf float64) float64 {
	f := p.Field()
	if int(f) >= len(avgLen) || avgLen[f] == 0 {
		return 0
	}
	tf := float64(p.TF())
	norm := tf * (k1 + 1) / (tf + k1*(1-b+b*float64(p.Len())/avgLen[f]))
	return boost[f] * idf * norm
}

// Top returns the m best fields of events, best first: the highest
// score (the scores of a field summed over the words it holds), a tie to
// the newer event. It keeps only m of them at a time, so a word in a
// million events costs a pass over its postings, not a sort of them.
func (l *Lists) Top(m int) []Scored {
	h := make(minHeap, 0, m)
	for _, proj := range l.projects {
		l.merge(l.lists[proj], func(seq uint64, f Field, s float64) {
			c := Scored{Project: proj, Seq: seq, Field: f, Score: s}
			switch {
			case len(h) < m:
				heap.Push(&h, c)
			case better(c, h[0]):
				h[0] = c
				heap.Fix(&h, 0)
			}
		})
	}
	out := make([]Scored, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(Scored)
	}
	return out
}

// merge walks the lists of one project (each ascending) together,
// newest first, and calls fn once per field of an event with its summed
// score. Newest first, a candidate that only ties the worst one kept
// does not replace it: the heap is left alone for most of a long list.
func (l *Lists) merge(lists [][]Posting, fn func(seq uint64, f Field, s float64)) {
	idfs := make([]float64, len(lists))
	for i := range lists {
		idfs[i] = idf(l.df[i], l.q.Events)
	}
	if len(lists) == 1 { // one word: no merge
		ps := lists[0]
		for i := len(ps) - 1; i >= 0; i-- {
			fn(ps[i].Seq(), ps[i].Field(), weight(ps[i], idfs[0]))
		}
		return
	}
	at := make([]int, len(lists)) // the next posting of each list, from its end
	for i, ps := range lists {
		at[i] = len(ps) - 1
	}
	for {
		key, ok := uint64(0), false
		for i, ps := range lists {
			if at[i] >= 0 && (!ok || uint64(ps[at[i]])>>12 > key) {
				key, ok = uint64(ps[at[i]])>>12, true
			}
		}
		if !ok {
			return
		}
		s := 0.0
		for i, ps := range lists {
			if at[i] >= 0 && uint64(ps[at[i]])>>12 == key {
				s += weight(ps[at[i]], idfs[i])
				at[i]--
			}
		}
		fn(key>>4, Field(key&0xF), s)
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
