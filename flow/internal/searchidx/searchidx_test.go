package searchidx

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow/store"
	"github.com/flowctl/flowctl/projection"
	"github.com/vmihailenco/msgpack/v5"
	"pgregory.net/rapid"
)

func TestWords(t *testing.T) {
	got := Words("Fix the Parser: 3 table-driven parsers, 데이터 처리 x " + strings.Repeat("a", 70))
	want := []string{"fix", "the", "parser", "table", "driven", "parsers", "데이터", "처리", strings.Repeat("a", MaxWord)}
	if !slices.Equal(got, want) {
		t.Errorf("Words = %q\nwant %q", got, want)
	}
}

func TestSnippet(t *testing.T) {
	long := strings.Repeat("lorem ipsum ", 20) + "the parser\nneeds a second pass " + strings.Repeat("dolor sit ", 20)
	got := Snippet(long, []string{"parser"})
	if !strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "…") || !strings.Contains(got, "the parser needs") || len(got) > snippetMax+2*len("…") {
		t.Errorf("Snippet = %q", got)
	}
	if got := Snippet("short Parser text", []string{"parser"}); got != "short Parser text" {
		t.Errorf("Snippet = %q", got)
	}
}

// TestTexts_Reflection: for any payload of the types with text, the
// scanner reads the texts a reflection decode finds.
func TestTexts_Reflection(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := func(l string) string { return rapid.String().Draw(t, l) }
		var payload any
		var typ string
		var want []Text
		switch rapid.IntRange(0, 4).Draw(t, "type") {
		case 0:
			p := projection.TaskCreated{ID: "T-1", Title: s("title"), Description: s("desc"), Deps: []string{"T-2"}, Tags: []string{s("tag")}, Priority: 3}
			typ, payload, want = projection.TypeTaskCreated, p, texts(Text{FieldTitle, p.Title}, Text{FieldDescription, p.Description})
		case 1:
			title, prio := s("title"), 2
			p := projection.TaskUpdated{Title: &title, Priority: &prio, Tags: &[]string{"x"}}
			typ, payload, want = projection.TypeTaskUpdated, p, texts(Text{FieldTitle, title})
		case 2:
			p := projection.NoteAdded{Task: "T-1", Text: s("text"), Kind: rapid.SampledFrom([]string{"note", "memory"}).Draw(t, "kind"), OccurredAt: 12345}
			f := FieldNote
			if p.Kind == "memory" {
				f = FieldMemory
			}
			typ, payload, want = projection.TypeNoteAdded, p, texts(Text{f, p.Text})
		case 3:
			p := projection.ExecRecorded{ID: "X-1", Command: s("cmd"), Code: s("code"), ExitCode: -3, ElapsedMS: 1.5,
				Stdout: projection.Output{Head: s("out"), Bytes: 1 << 40}, AddedVars: []string{"a"}}
			typ, payload, want = projection.TypeExecRecorded, p, texts(Text{FieldCommand, ExecText(p.Command, p.Code)})
		case 4:
			v := "v" + s("value")
			q := func(x string) string { b, _ := json.Marshal(x); return string(b) }
			patch := fmt.Sprintf(`{"a":{"b":[%s,1,true,null]},"c":%s}`, q(v), q(v+"!"))
			typ, payload, want = projection.TypeTaskContextMerged, projection.TaskContextMerged{Patch: patch}, texts(Text{FieldContext, v + "\n" + v + "!"})
		}
		data, err := msgpack.Marshal(payload)
		if err != nil {
			t.Fatal(err)
		}
		got := Texts(&store.Event{Type: typ, Schema: projection.SchemaVersion, Data: data})
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("Texts = %q, want %q", got, want)
		}
	})
}

// TestWriter_Canonical: the index is the same bytes whether its events
// were flushed in many transactions or written by one rebuild, its
// chunks and its pending entries; a query reads the same postings from
// both.
func TestWriter_Canonical(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		words := []string{"alpha", "beta", "gamma", "delta"}
		n := rapid.IntRange(1, 300).Draw(rt, "events")
		// Seqs up to 300 times the stride: many PendingSpans apart, or all
		// in one.
		stride := rapid.SampledFrom([]uint64{1, 7, 61, 997}).Draw(rt, "stride")
		evs := make([]store.Event, n)
		for i := range evs {
			title := strings.Join(rapid.SliceOfN(rapid.SampledFrom(words), 1, 5).Draw(rt, "title"), " ")
			data, _ := msgpack.Marshal(projection.TaskCreated{ID: "T-1", Title: title})
			evs[i] = store.Event{Type: projection.TypeTaskCreated, Schema: projection.SchemaVersion, Data: data,
				Project: rapid.SampledFrom([]string{"p", "pq", "q"}).Draw(rt, "project")}
		}
		seq := func(i int) uint64 { return uint64(i+1) * stride }
		batch := rapid.IntRange(1, 50).Draw(rt, "batch")
		a, b := openStore(t), openStore(t)
		for from := 0; from < n; from += batch {
			to := min(n, from+batch)
			err := a.Update(func(tx store.Tx) error {
				var w Writer
				for i := from; i < to; i++ {
					w.Add(seq(i), &evs[i])
				}
				return w.Flush(tx, seq(to-1))
			})
			if err != nil {
				rt.Fatal(err)
			}
		}
		var all Writer
		for i := range evs {
			all.Add(seq(i), &evs[i])
		}
		if err := b.Update(func(tx store.Tx) error { return all.Rebuild(tx, seq(n-1)) }); err != nil {
			rt.Fatal(err)
		}
		if da, db := dump(t, a), dump(t, b); !bytes.Equal(da, db) {
			rt.Fatalf("flushed:\n%s\nrebuilt:\n%s", da, db)
		}
		if err := a.View(func(tx store.Tx) error { return all.Compare(tx, seq(n-1)) }); err != nil {
			rt.Fatal(err)
		}
		// Every posting of the log is read back, wherever it is stored.
		q := Query{Words: words, Events: uint64(n)}
		err := a.View(func(tx store.Tx) error {
			l, err := Read(tx, nil, q)
			if err != nil {
				return err
			}
			for i, word := range words {
				for _, proj := range []string{"p", "pq", "q"} {
					var got []Posting
					var cs []chunk
					if l.lists[proj] != nil {
						cs = l.lists[proj][i]
					}
					for _, c := range cs {
						if err := l.decode(&c, proj, i); err != nil {
							return err
						}
						got = append(got, l.postings(&c)...)
					}
					var want []Posting
					if ps := all.lists[string(listPrefix(word, proj))]; ps != nil {
						want = *ps
					}
					if !slices.Equal(got, want) {
						rt.Fatalf("%s in %s: read %v, want %v", word, proj, got, want)
					}
				}
			}
			return nil
		})
		if err != nil {
			rt.Fatal(err)
		}
	})
}

func openStore(t testing.TB) store.Store {
	t.Helper()
	l, err := eventlog.Open(filepath.Join(t.TempDir(), "flow.db"), eventlog.Options{Create: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	st := l.Store()
	t.Cleanup(func() { st.Close() })
	return st
}

func dump(t testing.TB, st store.Store) []byte {
	var out []byte
	err := st.View(func(tx store.Tx) error {
		for _, bucket := range []string{PendingBucket, Bucket} {
			err := tx.Scan(bucket, nil, func(k, v []byte) error {
				out = fmt.Appendf(out, "%s %x=%x\n", bucket, k, v)
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWriter_Compare_Pending: Compare names a pending entry changed,
// dropped or stray, and a chunk changed.
func TestWriter_Compare_Pending(t *testing.T) {
	const through = PendingSpan + 10
	var all Writer
	for seq := uint64(PendingSpan - 50); seq <= through; seq++ {
		all.AddText(seq, "p", Text{FieldTitle, fmt.Sprintf("fix the parser %d", seq%3)})
	}
	pending := string(pendingKey(through))
	damages := []struct {
		name string
		fn   func(tx store.Tx) error
	}{
		{"PendingChanged", func(tx store.Tx) error {
			v, err := tx.Get(PendingBucket, []byte(pending))
			if err != nil {
				return err
			}
			v[len(v)-1]++
			return tx.Put(PendingBucket, []byte(pending), v)
		}},
		{"PendingDropped", func(tx store.Tx) error { return tx.Delete(PendingBucket, []byte(pending)) }},
		{"PendingStray", func(tx store.Tx) error {
			return tx.Put(PendingBucket, pendingKey(through+1), []byte("\x00\x01p\x03fix\x11\x03"))
		}},
		{"ChunkChanged", func(tx store.Tx) error {
			k, v, err := tx.Last(Bucket, listPrefix("parser", "p"), chunkKey(listPrefix("parser", "p"), math.MaxUint64))
			if err != nil || k == nil {
				return errors.Join(err, errors.New("no chunk of parser"))
			}
			return tx.Put(Bucket, k, append(v, 2))
		}},
	}
	for _, d := range damages {
		t.Run(d.name, func(t *testing.T) {
			st := openStore(t)
			if err := st.Update(func(tx store.Tx) error { return all.Rebuild(tx, through) }); err != nil {
				t.Fatal(err)
			}
			compare := func(tx store.Tx) error { return all.Compare(tx, through) }
			if err := st.View(compare); err != nil {
				t.Fatalf("clean: %v", err)
			}
			if err := st.Update(d.fn); err != nil {
				t.Fatal(err)
			}
			var ce *store.CorruptionError
			if err := st.View(compare); !errors.As(err, &ce) {
				t.Fatalf("Compare = %v, want a *store.CorruptionError", err)
			}
		})
	}
}

// TestAppendList_Blocks: a list appended to in runs of any length, across
// full chunks and full impact blocks, is stored as a rebuild writes it,
// and read back whole.
func TestAppendList_Blocks(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		// Runs short, or about a block's postings: a block full with its
		// last chunk full or not.
		full := BlockSize * ChunkSize
		runs := rapid.SliceOfN(rapid.OneOf(rapid.IntRange(1, 700), rapid.IntRange(full-2*ChunkSize, full+2)), 1, 8).Draw(rt, "runs")
		prefix := listPrefix("alpha", "p")
		var all []Posting
		a, b := openStore(t), openStore(t)
		for _, n := range runs {
			run := make([]Posting, n)
			for i := range run {
				seq := uint64(len(all) + i + 1)
				run[i] = NewPosting(seq, FieldTitle, int(seq%3)+1, int(seq%7)+1)
			}
			all = append(all, run...)
			if err := a.Update(func(tx store.Tx) error { return appendList(tx, prefix, run) }); err != nil {
				rt.Fatal(err)
			}
		}
		through := (uint64(len(all))/PendingSpan + 1) * PendingSpan
		w := Writer{lists: map[string]*[]Posting{string(prefix): &all}}
		if err := b.Update(func(tx store.Tx) error { return w.Rebuild(tx, through) }); err != nil {
			rt.Fatal(err)
		}
		if da, db := dump(t, a), dump(t, b); !bytes.Equal(da, db) {
			rt.Fatalf("appended:\n%s\nrebuilt:\n%s", da, db)
		}
		err := a.View(func(tx store.Tx) error {
			l, err := Read(tx, nil, Query{Words: []string{"alpha"}, Events: uint64(len(all))})
			if err != nil {
				return err
			}
			var got []Posting
			for _, c := range l.lists["p"][0] {
				if err := l.decode(&c, "p", 0); err != nil {
					return err
				}
				if want := bestLow(l.postings(&c)); c.impact != want {
					rt.Fatalf("chunk %d: impact %x, want %x", c.first.Seq(), c.impact, want)
				}
				got = append(got, l.postings(&c)...)
			}
			if !slices.Equal(got, all) {
				rt.Fatalf("read %d postings, want %d", len(got), len(all))
			}
			return nil
		})
		if err != nil {
			rt.Fatal(err)
		}
	})
}

// TestRead_BlocksDisagree: impact blocks that list a chunk past the
// list's last, or its last chunk when not full, or not when full, are
// corruption.
func TestRead_BlocksDisagree(t *testing.T) {
	prefix := listPrefix("alpha", "p")
	ip := impactPrefix(prefix)
	postings := func(n int) []Posting {
		ps := make([]Posting, n)
		for i := range ps {
			ps[i] = NewPosting(uint64(i+1), FieldTitle, 1, 3)
		}
		return ps
	}
	for _, c := range []struct {
		name  string
		n     int                       // postings appended
		block func(ps []Posting) []byte // the block written over the first
	}{
		{"past the last chunk", ChunkSize + 1, func(ps []Posting) []byte {
			return appendImpact(appendImpact(nil, ps[0], ps[0], 0), ps[0], ps[ChunkSize]+1, 0)
		}},
		{"the last chunk not full", ChunkSize + 1, func(ps []Posting) []byte {
			return appendImpact(appendImpact(nil, ps[0], ps[0], 0), ps[0], ps[ChunkSize], 0)
		}},
		{"not the last chunk full", 2 * ChunkSize, func(ps []Posting) []byte { return appendImpact(nil, ps[0], ps[0], 0) }},
	} {
		st := openStore(t)
		ps := postings(c.n)
		err := st.Update(func(tx store.Tx) error {
			if err := appendList(tx, prefix, ps); err != nil {
				return err
			}
			return tx.Put(Bucket, chunkKey(ip, ps[0]), c.block(ps))
		})
		if err != nil {
			t.Fatal(err)
		}
		err = st.View(func(tx store.Tx) error {
			_, err := Read(tx, nil, Query{Words: []string{"alpha"}, Events: uint64(c.n)})
			return err
		})
		if ce := (*store.CorruptionError)(nil); !errors.As(err, &ce) {
			t.Errorf("%s: Read: %v, want a corruption error", c.name, err)
		}
	}
}
