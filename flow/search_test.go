package flow

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow/internal/logidx"
	"github.com/flowctl/flowctl/flow/internal/searchidx"
	"github.com/flowctl/flowctl/flow/store"
	"pgregory.net/rapid"
)

func hitKeys(res *SearchResult) []string {
	out := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		out[i] = h.Kind + ":" + h.ID + ":" + h.Field
	}
	return out
}

func mustSearch(t *testing.T, e *Engine, project, q string, limit int) *SearchResult {
	t.Helper()
	res, err := e.Search(SearchQuery{Text: q, Project: project, Limit: limit})
	if err != nil {
		t.Fatalf("Search(%q): %v", q, err)
	}
	return res
}

func TestEngine_Search(t *testing.T) {
	e := mustOpen(t)
	mustDo(t)(e.CreateProject(NewProject{Name: "web"}))
	mustDo(t)(e.AddTask(NewTask{Project: "web", Title: "Fix the parser", Description: "the lexer is fine"}))
	mustDo(t)(e.AddTask(NewTask{Project: "web", Title: "Write docs", Description: "explain the parser and its errors"}))
	mustDo(t)(e.MergeContext(ContextPatch{Project: "web", ID: "T-2", Patch: `{"decision":"use a table-driven parser","n":3}`}))
	mustDo(t)(e.AddNote(NewNote{Project: "web", Task: "T-1", Text: "the parser needs a second pass"}))
	mustDo(t)(e.AddNote(NewNote{Project: "web", Kind: "memory", Text: "deploys go through staging"}))
	mustDo(t)(e.RecordExec(NewExec{Project: "web", Task: "T-1", Command: "go test ./parser/...", Success: true}))
	before := searchHead(t, e)

	t.Run("OK", func(t *testing.T) {
		res := mustSearch(t, e, "web", "Parser", 0)
		got := hitKeys(res)
		want := []string{"task:T-1:title", "exec:X-1:command", "task:T-2:description", "note:5:note", "task:T-2:context"}
		if !slices.Equal(got, want) {
			t.Errorf("hits = %v, want %v", got, want)
		}
		if !res.Index || res.Hits[0].Snippet != "Fix the parser" || res.Hits[0].Title != "Fix the parser" {
			t.Errorf("first hit = %+v (index %v)", res.Hits[0], res.Index)
		}
		if got := mustSearch(t, e, "web", "staging", 0); len(got.Hits) != 1 || got.Hits[0].Field != "memory" {
			t.Errorf("staging: %v", hitKeys(got))
		}
	})
	t.Run("Limit", func(t *testing.T) {
		if got := hitKeys(mustSearch(t, e, "web", "parser", 2)); len(got) != 2 || got[0] != "task:T-1:title" {
			t.Errorf("hits = %v", got)
		}
	})
	t.Run("Retitled", func(t *testing.T) {
		title := "Fix the lexer"
		mustDo3(t)(e.UpdateTask(TaskUpdate{Project: "web", ID: "T-1", Title: &title}))
		got := hitKeys(mustSearch(t, e, "web", "parser", 0))
		if slices.Contains(got, "task:T-1:title") {
			t.Errorf("an old title still matches: %v", got)
		}
		if got := hitKeys(mustSearch(t, e.At("web", Point{Seq: before}), "", "parser", 0)); !slices.Contains(got, "task:T-1:title") {
			t.Errorf("at %d: %v", before, got)
		}
		if got := hitKeys(mustSearch(t, e, "web", "lexer", 0)); len(got) != 2 || got[0] != "task:T-1:title" {
			t.Errorf("lexer: %v", got)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		if _, err := e.Search(SearchQuery{Text: " - ! "}); !errors.Is(err, ErrInvalid) {
			t.Errorf("err = %v, want ErrInvalid", err)
		}
	})
}

func mustDo3(t *testing.T) func(any, any, error) {
	return func(_ any, _ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestEngine_Search_Oracle: for any history of titles, descriptions,
// contexts, notes and commands drawn from a small vocabulary, and any
// point, the search finds exactly the fields whose text at that point
// holds a word of the query, with the index and without it (the log
// read, as for a file whose index is of another format).
func TestEngine_Search_Oracle(t *testing.T) {
	vocab := []string{"alpha", "beta", "gamma", "delta", "Alpha-beta", "epsilon"}
	rapid.Check(t, func(rt *rapid.T) {
		e := mustOpen(t)
		mustDo(t)(e.CreateProject(NewProject{Name: "p"}))
		text := func(label string) string {
			ws := rapid.SliceOfN(rapid.SampledFrom(vocab), 1, 4).Draw(rt, label)
			return strings.Join(ws, " ")
		}
		tasks := 0
		steps := rapid.IntRange(1, 25).Draw(rt, "steps")
		for i := range steps {
			op := rapid.IntRange(0, 4).Draw(rt, fmt.Sprint("op", i))
			if tasks == 0 {
				op = 0
			}
			id := fmt.Sprintf("T-%d", rapid.IntRange(1, max(tasks, 1)).Draw(rt, fmt.Sprint("task", i)))
			var err error
			switch op {
			case 0:
				_, err = e.AddTask(NewTask{Project: "p", Title: text("title"), Description: text("desc")})
				tasks++
			case 1:
				s := text("retitle")
				_, _, err = e.UpdateTask(TaskUpdate{Project: "p", ID: id, Title: &s})
			case 2:
				_, err = e.MergeContext(ContextPatch{Project: "p", ID: id, Patch: fmt.Sprintf(`{"k%d":%q}`, i%3, text("ctx"))})
			case 3:
				_, err = e.AddNote(NewNote{Project: "p", Task: id, Text: text("note")})
			case 4:
				_, err = e.RecordExec(NewExec{Project: "p", Task: id, Command: text("cmd"), Success: true})
			}
			if err != nil {
				rt.Fatal(err)
			}
		}
		head := searchHead(t, e)
		at := rapid.Uint64Range(1, head).Draw(rt, "at")
		query := text("query")
		view := e.At("p", Point{Seq: at})
		got := mustSearch(t, view, "", query, 1000)
		want := searchOracle(rt, view, at, searchidx.Words(query))
		if keys := hitKeys(got); !slices.Equal(sortedCopy(keys), want) {
			rt.Fatalf("search %q at %d = %v, want %v", query, at, sortedCopy(keys), want)
		}
		// Without the index: the same hits in the same order.
		noIndex(rt, e)
		scan := mustSearch(t, e.At("p", Point{Seq: at}), "", query, 1000)
		if scan.Index || !slices.Equal(hitKeys(scan), hitKeys(got)) {
			rt.Fatalf("without the index %v, with it %v", hitKeys(scan), hitKeys(got))
		}
		if err := e.log.Update(logidx.Rebuild); err != nil {
			rt.Fatal(err)
		}
	})
}

func sortedCopy(s []string) []string { return slices.Sorted(slices.Values(s)) }

// noIndex stamps the log index with another format.
func noIndex(t *rapid.T, e *Engine) {
	err := e.log.Update(func(tx store.Tx) error {
		return tx.Put(logidx.Bucket, append([]byte{0}, "version"...), []byte{0, 0, 0, 9})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// searchOracle lists the fields that hold one of words at seq at, read
// from the state and the log without the index.
func searchOracle(t *rapid.T, view *Engine, at uint64, words []string) []string {
	var out []string
	holds := func(s string) bool { return searchidx.Contains(s, words) }
	err := view.Read(func(r *Reader) error {
		tasks, err := r.Tasks("p")
		if err != nil {
			return err
		}
		for _, task := range tasks {
			for _, f := range []struct {
				name, text string
			}{{"title", task.Title}, {"description", task.Description}, {"context", searchidx.ContextText(string(task.Context))}} {
				if holds(f.text) {
					out = append(out, "task:"+task.ID+":"+f.name)
				}
			}
		}
		execs, err := r.Execs("p")
		if err != nil {
			return err
		}
		for _, x := range execs {
			if holds(x.Command) {
				out = append(out, "exec:"+x.ID+":command")
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range collectRaw(t, view, at) {
		if n, ok, err := ev.Note(); err != nil {
			t.Fatal(err)
		} else if ok && holds(n.Text) {
			out = append(out, fmt.Sprintf("note:%d:note", ev.Seq))
		}
	}
	return sortedCopy(out)
}

func collectRaw(t *rapid.T, e *Engine, until uint64) []Event {
	var out []Event
	err := e.Events(Filter{UntilSeq: until, Raw: true, Type: "note.added"}, func(ev Event) error {
		out = append(out, ev)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func searchHead(t testing.TB, e *Engine) uint64 {
	var head uint64
	err := e.view(func(tx store.Tx) error {
		head, _ = tx.Head()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return head
}

// TestEngine_Search_OldFormat: a file whose full-text index is of log
// index format 2 (chunks without their best posting), 3 (no pending
// postings) or 5 (no impact blocks) is searched by reading its log, never its chunks, until a
// writable open rebuilds it.
func TestEngine_Search_OldFormat(t *testing.T) {
	for _, format := range []byte{2, 3, 5} {
		t.Run(fmt.Sprint("Format", format), func(t *testing.T) { testSearchOldFormat(t, format) })
	}
}

func testSearchOldFormat(t *testing.T, format byte) {
	path := filepath.Join(t.TempDir(), "flow.db")
	e, err := Open(path, Options{Create: true, NoSync: true, Actor: "tester"})
	if err != nil {
		t.Fatal(err)
	}
	mustDo(t)(e.CreateProject(NewProject{Name: "web"}))
	mustDo(t)(e.AddTask(NewTask{Project: "web", Title: "Fix the parser", Description: "the lexer is fine"}))
	mustDo(t)(e.RecordExec(NewExec{Project: "web", Command: "go test ./parser/...", Success: true}))
	want := hitKeys(mustSearch(t, e, "web", "parser", 0))
	err = e.log.Update(func(tx store.Tx) error {
		// The old format's stamp, and chunks no format can decode.
		err := tx.Scan(searchidx.Bucket, nil, func(k, v []byte) error { return tx.Put(searchidx.Bucket, k, []byte{0x80}) })
		if err != nil {
			return err
		}
		return tx.Put(logidx.Bucket, append([]byte{0}, "version"...), []byte{0, 0, 0, format})
	})
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	res := mustSearch(t, ro, "web", "parser", 0)
	ro.Close()
	if res.Index || !slices.Equal(hitKeys(res), want) {
		t.Errorf("format %d, read-only: index %v, hits %v; want the log read, %v", format, res.Index, hitKeys(res), want)
	}
	rw, err := Open(path, Options{NoSync: true, Actor: "tester"})
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	if res := mustSearch(t, rw, "web", "parser", 0); !res.Index || !slices.Equal(hitKeys(res), want) {
		t.Errorf("rebuilt: index %v, hits %v; want %v", res.Index, hitKeys(res), want)
	}
	if _, err := rw.Verify(); err != nil {
		t.Errorf("Verify: %v", err)
	}
}
