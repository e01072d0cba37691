package searchidx

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/flowctl/flowctl/flow/store"
	"pgregory.net/rapid"
)

// drawLists draws the lists of a few words in a few projects: postings
// of events seqs stride apart up to last (each event in one project)
// with a few fields, counts and lengths, many alike (as a busy list's
// are), so that scores tie often. A stride over 2 spans PendingSpan.
func drawLists(t *rapid.T, words int) (_ map[string][][]Posting, events, last uint64) {
	n := rapid.IntRange(1, 1500).Draw(t, "events")
	stride := rapid.Uint64Range(1, 12).Draw(t, "stride")
	projects := []string{"p", "q", "r"}[:rapid.IntRange(1, 3).Draw(t, "projects")]
	lows := rapid.SliceOfN(rapid.Uint16Range(0, 0xFFFF), 1, 4).Draw(t, "lows")
	density := rapid.IntRange(1, 10).Draw(t, "density")
	out := map[string][][]Posting{}
	for i := uint64(1); i <= uint64(n); i++ {
		seq := i * stride
		proj := projects[int(i)%len(projects)]
		if out[proj] == nil {
			out[proj] = make([][]Posting, words)
		}
		for w := range words {
			if rapid.IntRange(0, 9).Draw(t, "in") >= density {
				continue
			}
			f := Field(rapid.IntRange(1, 6).Draw(t, "field"))
			low := rapid.SampledFrom(lows).Draw(t, "low")
			p := NewPosting(seq, f, max(1, int(low>>8&0xF)), int(low&0xFF))
			if n := len(out[proj][w]); n > 0 && out[proj][w][n-1]>>12 >= p>>12 {
				continue
			}
			out[proj][w] = append(out[proj][w], p)
		}
	}
	return out, uint64(n), uint64(n) * stride
}

// bruteTop scores every field of every event and sorts.
func bruteTop(lists map[string][][]Posting, q Query, m int) []Scored {
	df := make([]int, len(q.Words))
	for _, ws := range lists {
		for i, ps := range ws {
			df[i] += len(ps[:sortSearch(ps, upTo(q))])
		}
	}
	var all []Scored
	for proj, ws := range lists {
		sum := map[uint64]float64{}
		var keys []uint64
		for i, ps := range ws {
			for _, p := range ps[:sortSearch(ps, upTo(q))] {
				k := uint64(p) >> 12
				if _, ok := sum[k]; !ok {
					keys = append(keys, k)
				}
				sum[k] += weight(p, idf(df[i], q.Events))
			}
		}
		for _, k := range keys {
			all = append(all, Scored{Project: proj, Seq: k >> 4, Field: Field(k & 0xF), Score: sum[k]})
		}
	}
	sort.Slice(all, func(i, j int) bool { return better(all[i], all[j]) })
	return all[:min(m, len(all))]
}

func upTo(q Query) uint64 {
	if q.UpTo == 0 {
		return 1 << 40
	}
	return q.UpTo
}

// TestLists_Top: for any lists, stored in chunks or held in a Writer
// (or both: a stored index and the events past it), and any point, Top
// keeps the m fields a scoring of every posting ranks first, with the
// same scores.
func TestLists_Top(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		nw := rapid.IntRange(1, 3).Draw(rt, "words")
		words := []string{"alpha", "beta", "gamma"}[:nw]
		lists, events, last := drawLists(rt, nw)
		q := Query{Words: words, Events: events}
		if rapid.Bool().Draw(rt, "at") {
			q.UpTo = rapid.Uint64Range(1, last).Draw(rt, "upTo")
		}
		// Seqs stored (in chunks up to the last multiple of PendingSpan,
		// the rest pending); the rest in extra.
		split := rapid.Uint64Range(0, last).Draw(rt, "stored")
		st := openStore(t)
		var stored, extra Writer
		for proj, ws := range lists {
			for i, ps := range ws {
				n := sortSearch(ps, split)
				stored.addList(words[i], proj, ps[:n])
				extra.addList(words[i], proj, ps[n:])
			}
		}
		err := st.Update(func(tx store.Tx) error { return stored.Rebuild(tx, split) })
		if err != nil {
			rt.Fatal(err)
		}
		m := rapid.IntRange(1, 200).Draw(rt, "m")
		want := bruteTop(lists, q, m)
		var got []Scored
		err = st.View(func(tx store.Tx) error {
			l, err := Read(tx, &extra, q)
			if err != nil {
				return err
			}
			got, err = l.Top(m)
			return err
		})
		if err != nil {
			rt.Fatal(err)
		}
		if !slices.Equal(got, want) {
			rt.Fatalf("Top(%d) =\n%v\nwant\n%v", m, got, want)
		}
	})
}

// addList adds postings to w's list of word in project.
func (w *Writer) addList(word, project string, ps []Posting) {
	if len(ps) == 0 {
		return
	}
	if w.lists == nil {
		w.lists = map[string]*[]Posting{}
	}
	w.lists[string(listPrefix(word, project))] = &ps
}

// TestLists_Top_Skips: when every posting of two long lists scores the
// same, Top decodes the newest chunks and a few more, not the lists.
func TestLists_Top_Skips(t *testing.T) {
	var w Writer
	for seq := uint64(1); seq <= 64*1000; seq++ {
		w.AddText(seq, fmt.Sprint("p", seq%10), Text{FieldCommand, "go test ./..."})
	}
	st := openStore(t)
	if err := st.Update(func(tx store.Tx) error { return w.Rebuild(tx, 64*1000) }); err != nil {
		t.Fatal(err)
	}
	err := st.View(func(tx store.Tx) error {
		l, err := Read(tx, nil, Query{Words: []string{"go", "test"}, Events: 64 * 1000})
		if err != nil {
			return err
		}
		tk := topK{l: l, h: make(minHeap, 0, 160), m: 160, idfs: []float64{1, 1}}
		for _, proj := range l.projects {
			if err := tk.project(proj, l.lists[proj]); err != nil {
				return err
			}
		}
		if got := l.Candidates(); got != 2*64*1000 {
			t.Errorf("Candidates = %d, want %d", got, 2*64*1000)
		}
		if tk.decode > 2*(160/64+2)*10 {
			t.Errorf("decoded %d chunks of %d", tk.decode, 2*1000)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestChunk_RoundTrip: a chunk decodes to the postings encoded, and its
// first two bytes name one of highest gain.
func TestChunk_RoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, ChunkSize).Draw(t, "n")
		ps := make([]Posting, 0, n)
		p := Posting(rapid.Uint64Range(1, 1<<40).Draw(t, "first"))
		for range n {
			ps = append(ps, p)
			p += Posting(rapid.Uint64Range(1, 1<<24).Draw(t, "delta"))
		}
		v := encodeChunk(ps)
		k := chunkKey([]byte("pre"), ps[0])
		got, err := decodeChunk(nil, 3, k, v)
		if err != nil || !slices.Equal(got, ps) {
			t.Fatalf("decode = %v, %v; want %v", got, err, ps)
		}
		best, _ := chunkImpact(v)
		for _, p := range ps {
			if gain(p.low()) > gain(best) {
				t.Fatalf("best %x, but %x gains more", best, p.low())
			}
		}
	})
}

// FuzzDecodeChunk: no value, however malformed, makes the decoder panic,
// and what it returns ascends.
func FuzzDecodeChunk(f *testing.F) {
	f.Add(uint64(1<<16), encodeChunk([]Posting{1 << 16, 2<<16 | 0x1203, 9<<16 | 0x1203}))
	f.Add(uint64(5), []byte{0, 0, 1})
	f.Fuzz(func(t *testing.T, first uint64, v []byte) {
		k := chunkKey([]byte("x"), Posting(first))
		ps, err := decodeChunk(nil, 1, k, v)
		if err == nil && (len(ps) > ChunkSize || !slices.IsSorted(ps)) {
			t.Fatalf("decoded %v", ps)
		}
	})
}

// TestWords_Fields: Words cuts and lowers as strings.FieldsFunc and
// strings.ToLower do, for any text.
func TestWords_Fields(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.OneOf(rapid.String(), rapid.StringMatching(`[A-Za-z0-9 ._İßΣ-]{0,80}`)).Draw(t, "s")
		var want []string
		for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if len(w) < 2 {
				continue
			}
			w = strings.ToLower(w)
			if len(w) > MaxWord {
				w = cutUTF8(w, MaxWord)
			}
			want = append(want, w)
		}
		if got := Words(s); !slices.Equal(got, want) {
			t.Fatalf("Words(%q) = %q, want %q", s, got, want)
		}
	})
}
