package searchidx

import (
	"bytes"
	"encoding/json"
	"fmt"
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
// were flushed in many transactions or written by one rebuild.
func TestWriter_Canonical(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		words := []string{"alpha", "beta", "gamma", "delta"}
		n := rapid.IntRange(1, 300).Draw(rt, "events")
		evs := make([]store.Event, n)
		for i := range evs {
			title := strings.Join(rapid.SliceOfN(rapid.SampledFrom(words), 1, 5).Draw(rt, "title"), " ")
			data, _ := msgpack.Marshal(projection.TaskCreated{ID: "T-1", Title: title})
			evs[i] = store.Event{Type: projection.TypeTaskCreated, Schema: projection.SchemaVersion, Data: data,
				Project: rapid.SampledFrom([]string{"p", "q"}).Draw(rt, "project")}
		}
		batch := rapid.IntRange(1, 50).Draw(rt, "batch")
		a, b := openStore(t), openStore(t)
		for from := 0; from < n; from += batch {
			err := a.Update(func(tx store.Tx) error {
				var w Writer
				for i := from; i < min(n, from+batch); i++ {
					w.Add(uint64(i+1), &evs[i])
				}
				return w.Flush(tx)
			})
			if err != nil {
				rt.Fatal(err)
			}
		}
		var all Writer
		for i := range evs {
			all.Add(uint64(i+1), &evs[i])
		}
		if err := b.Update(all.Rebuild); err != nil {
			rt.Fatal(err)
		}
		if da, db := dump(t, a), dump(t, b); !bytes.Equal(da, db) {
			rt.Fatalf("flushed:\n%s\nrebuilt:\n%s", da, db)
		}
		if err := a.View(all.Compare); err != nil {
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
		return tx.Scan(Bucket, nil, func(k, v []byte) error {
			out = fmt.Appendf(out, "%x=%x\n", k, v)
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
