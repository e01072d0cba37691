package flow

import (
	"errors"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/projection"
	"github.com/vmihailenco/msgpack/v5"
)

// ctxFixture opens an engine with project "p" and tasks T-1 and T-2.
func ctxFixture(t *testing.T) *Engine {
	t.Helper()
	e := mustOpen(t)
	if _, err := e.CreateProject(NewProject{Name: "p"}); err != nil {
		t.Fatal(err)
	}
	for _, title := range []string{"first", "second"} {
		if _, err := e.AddTask(NewTask{Project: "p", Title: title}); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// ctxMerge merges patch into T-1's context and fails the test on error.
func ctxMerge(t *testing.T, e *Engine, patch string) *TaskContext {
	t.Helper()
	c, err := e.MergeContext(ContextPatch{Project: "p", ID: "T-1", Patch: patch})
	if err != nil {
		t.Fatalf("MergeContext(%s): %v", patch, err)
	}
	return c
}

func ctxEventCount(t *testing.T, e *Engine) int {
	t.Helper()
	return len(collect(t, e, Filter{Type: projection.TypeTaskContextMerged}))
}

func TestEngine_MergeContext(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		e := ctxFixture(t)
		ctxMerge(t, e, `{"a":{"x":1,"y":[1,2]},"b":"keep","c":true}`)
		c := ctxMerge(t, e, `{"a":{"x":null,"y":[3],"z":{"deep":1.50}},"c":null,"d":[]}`)
		want := `{"a":{"y":[3],"z":{"deep":1.50}},"b":"keep","d":[]}`
		if string(c.Context) != want {
			t.Errorf("context = %s, want %s", c.Context, want)
		}
		task, err := e.Task("p", "T-1")
		if err != nil {
			t.Fatal(err)
		}
		if c.Version != task.Version || c.Version != 3 || c.ContextVersion != 2 || c.Task != "T-1" {
			t.Errorf("result = %+v, want version %d (task), context version 2", c, task.Version)
		}
		if string(task.Context) != want {
			t.Errorf("task context = %s, want %s", task.Context, want)
		}
	})
	t.Run("StoresExactPatch", func(t *testing.T) {
		e := ctxFixture(t)
		patch := "{ \"b\" : 2,\n \"a\":1.0 }"
		ctxMerge(t, e, patch)
		evs := collect(t, e, Filter{Type: projection.TypeTaskContextMerged, Raw: true})
		if len(evs) != 1 || evs[0].Stream != "task/p/T-1" {
			t.Fatalf("events = %+v, want one on task/p/T-1", evs)
		}
		var stored projection.TaskContextMerged
		if err := msgpack.Unmarshal(evs[0].Raw, &stored); err != nil || stored.Patch != patch {
			t.Errorf("stored patch = %q (%v), want the patch as given", stored.Patch, err)
		}
		if got := string(evs[0].Data); !strings.Contains(got, `"patch":{"b":2,"a":1.0}`) {
			t.Errorf("payload = %s, want the patch as a JSON object, as given", got)
		}
	})
	t.Run("Replace", func(t *testing.T) {
		e := ctxFixture(t)
		ctxMerge(t, e, `{"a":1,"b":{"c":2}}`)
		c, err := e.MergeContext(ContextPatch{Project: "p", ID: "T-1", Patch: `{"z":null,"b":{"d":3}}`, Replace: true})
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"b":{"d":3},"z":null}`; string(c.Context) != want {
			t.Errorf("context = %s, want %s", c.Context, want)
		}
	})
	t.Run("NoOpAppendsNothing", func(t *testing.T) {
		e := ctxFixture(t)
		first := ctxMerge(t, e, `{"a":{"b":[1]}}`)
		for _, in := range []ContextPatch{
			{Patch: `{"a":{"b":[1]}}`},
			{Patch: `{"gone":null}`},
			{Patch: `{}`},
			{Patch: `{ "a" : { "b" : [ 1 ] } }`, Replace: true},
		} {
			in.Project, in.ID = "p", "T-1"
			c, err := e.MergeContext(in)
			if err != nil {
				t.Fatalf("MergeContext(%+v): %v", in, err)
			}
			if *c != *first {
				t.Errorf("MergeContext(%s) = %+v, want unchanged %+v", in.Patch, c, first)
			}
		}
		if n := ctxEventCount(t, e); n != 1 {
			t.Errorf("%d context events, want 1", n)
		}
	})
	t.Run("ErrConflict", func(t *testing.T) {
		e := ctxFixture(t)
		c := ctxMerge(t, e, `{"a":1}`)
		for _, patch := range []string{`{"a":2}`, `{"a":1}`} { // a change and a no-op
			_, err := e.MergeContext(ContextPatch{Project: "p", ID: "T-1", Patch: patch, Write: Write{IfVersion: c.Version - 1}})
			if !errors.Is(err, eventlog.ErrConflict) || ErrorCode(err) != CodeConflict {
				t.Errorf("stale IfVersion with %s: %v, want a conflict", patch, err)
			}
		}
		got, err := e.MergeContext(ContextPatch{Project: "p", ID: "T-1", Patch: `{"a":2}`, Write: Write{IfVersion: c.Version}})
		if err != nil || got.Version != c.Version+1 {
			t.Errorf("current IfVersion: %+v, %v", got, err)
		}
		if n := ctxEventCount(t, e); n != 2 {
			t.Errorf("%d context events, want 2", n)
		}
	})
	t.Run("Idempotent", func(t *testing.T) {
		e := ctxFixture(t)
		in := ContextPatch{Project: "p", ID: "T-1", Patch: `{"n":[1]}`, Write: Write{Key: "k1"}}
		first, err := e.MergeContext(in)
		if err != nil {
			t.Fatal(err)
		}
		again, err := e.MergeContext(in)
		if err != nil || *again != *first {
			t.Fatalf("retry = %+v, %v; want %+v", again, err, first)
		}
		if n := ctxEventCount(t, e); n != 1 {
			t.Errorf("%d context events after a retry, want 1", n)
		}
		in.Patch = `{"n":[2]}`
		if _, err := e.MergeContext(in); !errors.Is(err, eventlog.ErrConflict) {
			t.Errorf("same key, other patch: %v, want a conflict", err)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		e := ctxFixture(t)
		for name, patch := range map[string]string{
			"Array":        `[1]`,
			"String":       `"x"`,
			"Null":         `null`,
			"Malformed":    `{"a":`,
			"DuplicateKey": `{"a":1,"a":2}`,
			"BadUTF8":      "{\"a\":\"\xff\"}",
			"TwoValues":    `{} {}`,
			"TooDeep":      strings.Repeat(`{"a":`, 65) + "1" + strings.Repeat("}", 65),
			"TooLarge":     `{"a":"` + strings.Repeat("x", MaxInput) + `"}`,
		} {
			_, err := e.MergeContext(ContextPatch{Project: "p", ID: "T-1", Patch: patch})
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("%s: %v, want ErrInvalid", name, err)
			}
		}
		if n := ctxEventCount(t, e); n != 0 {
			t.Errorf("invalid patches appended %d events", n)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		e := ctxFixture(t)
		if _, err := e.MergeContext(ContextPatch{Project: "p", ID: "T-9", Patch: `{"a":1}`}); !errors.Is(err, ErrNotFound) {
			t.Errorf("unknown task: %v, want ErrNotFound", err)
		}
		if _, err := e.MergeContext(ContextPatch{Project: "q", ID: "T-1", Patch: `{"a":1}`}); !errors.Is(err, ErrNotFound) {
			t.Errorf("unknown project: %v, want ErrNotFound", err)
		}
	})
	t.Run("ContextTooLarge", func(t *testing.T) {
		e := ctxFixture(t)
		half := strings.Repeat("x", MaxInput/2)
		ctxMerge(t, e, `{"a":"`+half+`"}`)
		_, err := e.MergeContext(ContextPatch{Project: "p", ID: "T-1", Patch: `{"b":"` + half + `"}`})
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("context over the limit: %v, want ErrInvalid", err)
		}
	})
}

func TestEngine_SetContextKey(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		e := ctxFixture(t)
		set := func(key, value string) *TaskContext {
			t.Helper()
			c, err := e.SetContextKey(ContextKey{Project: "p", ID: "T-1", Key: key, Value: value})
			if err != nil {
				t.Fatalf("SetContextKey(%s, %s): %v", key, value, err)
			}
			return c
		}
		set("branch", `"main"`)
		set("cfg", `{"a":1}`)
		set("cfg", `{"b":2}`) // merges, as the patch {"cfg":{"b":2}} does
		c := set("we\"ird key", `[1, 2]`)
		if want := `{"branch":"main","cfg":{"a":1,"b":2},"we\"ird key":[1,2]}`; string(c.Context) != want {
			t.Errorf("context = %s, want %s", c.Context, want)
		}
		v, err := e.ContextValue("p", "T-1", "cfg")
		if err != nil || v != `{"a":1,"b":2}` {
			t.Errorf("ContextValue(cfg) = %s, %v", v, err)
		}
	})
	t.Run("Unset", func(t *testing.T) {
		e := ctxFixture(t)
		ctxMerge(t, e, `{"a":1,"b":2}`)
		c, err := e.UnsetContextKey(ContextKey{Project: "p", ID: "T-1", Key: "a"})
		if err != nil || c.Context != `{"b":2}` {
			t.Fatalf("UnsetContextKey(a) = %+v, %v", c, err)
		}
		again, err := e.UnsetContextKey(ContextKey{Project: "p", ID: "T-1", Key: "a"})
		if err != nil || *again != *c {
			t.Errorf("second UnsetContextKey(a) = %+v, %v; want unchanged", again, err)
		}
		if n := ctxEventCount(t, e); n != 2 {
			t.Errorf("%d context events, want 2", n)
		}
		if _, err := e.ContextValue("p", "T-1", "a"); !errors.Is(err, ErrNotFound) {
			t.Errorf("ContextValue of an unset key: %v, want ErrNotFound", err)
		}
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		e := ctxFixture(t)
		for _, in := range []ContextKey{
			{Key: "", Value: "1"},
			{Key: "  ", Value: "1"},
			{Key: "k\xff", Value: "1"},
			{Key: "k", Value: "main"},
			{Key: "k", Value: `{"a":1,"a":1}`},
			{Key: "k", Value: ""},
		} {
			in.Project, in.ID = "p", "T-1"
			if _, err := e.SetContextKey(in); !errors.Is(err, ErrInvalid) {
				t.Errorf("SetContextKey(%q, %q): %v, want ErrInvalid", in.Key, in.Value, err)
			}
		}
		if _, err := e.UnsetContextKey(ContextKey{Project: "p", ID: "T-1"}); !errors.Is(err, ErrInvalid) {
			t.Errorf("UnsetContextKey without a key: %v, want ErrInvalid", err)
		}
		if n := ctxEventCount(t, e); n != 0 {
			t.Errorf("invalid input appended %d events", n)
		}
	})
}

func TestEngine_ContextHistory(t *testing.T) {
	e := ctxFixture(t)
	ctxMerge(t, e, `{"b":1,"a":{"x":1}}`)
	if _, err := e.MergeContext(ContextPatch{Project: "p", ID: "T-2", Patch: `{"a":"other task"}`}); err != nil {
		t.Fatal(err)
	}
	ctxMerge(t, e, `{"a":{"y":2},"b":1}`) // b unchanged: not listed
	if _, err := e.UnsetContextKey(ContextKey{Project: "p", ID: "T-1", Key: "b"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.MergeContext(ContextPatch{Project: "p", ID: "T-1", Patch: `{"c":3,"a":{"x":1,"y":2}}`, Replace: true}); err != nil {
		t.Fatal(err)
	}
	type row struct {
		key, op, value string
	}
	want := []row{
		{"a", "set", `{"x":1}`}, {"b", "set", "1"},
		{"a", "set", `{"x":1,"y":2}`},
		{"b", "unset", "null"},
		{"c", "replace", "3"},
	}
	all, err := e.ContextHistory("p", "T-1", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(want) {
		t.Fatalf("history = %+v, want %d entries", all, len(want))
	}
	for i, w := range want {
		got := all[i]
		if got.Key != w.key || got.Op != w.op || string(got.Value) != w.value || got.Actor != "tester" {
			t.Errorf("entry %d = %+v, want %+v", i, got, w)
		}
		if i > 0 && (got.Seq < all[i-1].Seq || got.Time.Before(all[i-1].Time)) {
			t.Errorf("entry %d (seq %d) is before entry %d (seq %d)", i, got.Seq, i-1, all[i-1].Seq)
		}
	}
	if all[0].Seq != all[1].Seq || all[1].Seq == all[2].Seq {
		t.Errorf("seqs %d %d %d: want the first two from one change", all[0].Seq, all[1].Seq, all[2].Seq)
	}

	t.Run("Key", func(t *testing.T) {
		got, err := e.ContextHistory("p", "T-1", "b")
		if err != nil || len(got) != 2 || got[0].Op != "set" || got[1].Op != "unset" {
			t.Errorf("history of b = %+v, %v", got, err)
		}
	})
	t.Run("Empty", func(t *testing.T) {
		got, err := e.ContextHistory("p", "T-1", "never")
		if err != nil || len(got) != 0 {
			t.Errorf("history of an unknown key = %+v, %v", got, err)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		if _, err := e.ContextHistory("p", "T-7", ""); !errors.Is(err, ErrNotFound) {
			t.Errorf("unknown task: %v, want ErrNotFound", err)
		}
	})
}
