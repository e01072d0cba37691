package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// ctxFixture is a file with project demo and tasks T-1 and T-2.
func ctxFixture(t *testing.T) *flowFile {
	t.Helper()
	f := mustInit(t, "--project", "demo")
	f.mustRun("", "task", "add", "first")
	f.mustRun("", "task", "add", "second")
	return f
}

// ctxWantEmptyArray checks that stdout is an empty JSON array, not null.
func ctxWantEmptyArray(t *testing.T, stdout string) {
	t.Helper()
	var items []json.RawMessage
	if err := json.Unmarshal([]byte(stdout), &items); err != nil || items == nil || len(items) != 0 {
		t.Errorf("stdout = %q, want an empty JSON array", stdout)
	}
}

// ctxEventCount counts the file's events of one type.
func ctxEventCount(f *flowFile, typ string) int {
	f.t.Helper()
	return len(f.logEvents("--type", typ))
}

// badInput is one bad command line: its exit code and what stderr names.
type badInput struct {
	name  string
	env   map[string]string
	stdin string
	args  []string
	code  int
	facts []string
}

// runBadInputs runs each case against f and checks the exit code, one
// line on stderr naming the facts, nothing on stdout, and that the file is
// byte-identical afterwards.
func runBadInputs(t *testing.T, f *flowFile, tests []badInput) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := f.bytes()
			stdout, stderr, code := runCLIEnv(t, f.dir, tt.env, tt.stdin, tt.args...)
			wantError(t, stderr, code, tt.code, tt.facts...)
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			if !bytes.Equal(before, f.bytes()) {
				t.Errorf("flowctl %v changed the file", tt.args)
			}
		})
	}
}

func TestCtx_Merge(t *testing.T) {
	t.Parallel()
	t.Run("Text", func(t *testing.T) {
		t.Parallel()
		f := ctxFixture(t)
		f.mustRun("", "ctx", "merge", "T-1", `{"a":{"x":1,"y":2},"list":[1,2],"gone":true}`)
		got := f.mustRun("", "ctx", "merge", "T-1", `{"a":{"x":null},"list":[3],"gone":null}`)
		want := "{\n  \"a\": {\n    \"y\": 2\n  },\n  \"list\": [\n    3\n  ]\n}\n"
		if got != want {
			t.Errorf("stdout = %q, want %q", got, want)
		}
	})
	t.Run("JSON", func(t *testing.T) {
		t.Parallel()
		f := ctxFixture(t)
		got := f.mustRun("", "ctx", "merge", "T-2", `{"b": 1.50, "a": "é<>"}`, "-o", "json")
		if want := `{"a":"é<>","b":1.50}` + "\n"; got != want {
			t.Errorf("stdout = %q, want %q", got, want)
		}
		evs := f.logEvents("--type", "task.context_merged")
		if len(evs) != 1 || evs[0].Stream != "task/demo/T-2" {
			t.Fatalf("events = %+v, want one on T-2", evs)
		}
		var data struct{ Patch json.RawMessage }
		if err := json.Unmarshal(evs[0].Data, &data); err != nil || string(data.Patch) != `{"b":1.50,"a":"é<>"}` {
			t.Errorf("event data = %s (%v), want the patch as given, as a JSON object", evs[0].Data, err)
		}
	})
	t.Run("InputFromFileAndStdin", func(t *testing.T) {
		t.Parallel()
		f := ctxFixture(t)
		path := filepath.Join(t.TempDir(), "patch.json")
		if err := os.WriteFile(path, []byte(`{"from":"file"}`), 0o644); err != nil {
			t.Fatal(err)
		}
		f.mustRun("", "ctx", "merge", "T-1", "@"+path)
		got := f.mustRun(`{"from":"stdin","n":1}`, "ctx", "merge", "T-1", "-", "--json")
		if want := `{"from":"stdin","n":1}` + "\n"; got != want {
			t.Errorf("stdout = %q, want %q", got, want)
		}
	})
	t.Run("TaskFromEnv", func(t *testing.T) {
		t.Parallel()
		f := ctxFixture(t)
		env := map[string]string{"FLOW_TASK_ID": "T-2"}
		if _, stderr, code := runCLIEnv(t, f.dir, env, "", "ctx", "merge", `{"k":1}`); code != 0 {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		if got := f.mustRun("", "ctx", "get", "T-2", "--json"); got != `{"k":1}`+"\n" {
			t.Errorf("T-2 context = %q", got)
		}
		if got := f.mustRun("", "ctx", "get", "T-1", "--json"); got != "{}\n" {
			t.Errorf("T-1 context = %q, want {}", got)
		}
	})
	t.Run("NoOpAppendsNothing", func(t *testing.T) {
		t.Parallel()
		f := ctxFixture(t)
		f.mustRun("", "ctx", "merge", "T-1", `{"a":[1]}`)
		before := f.bytes()
		for _, args := range [][]string{
			{"ctx", "merge", "T-1", `{"a":[1],"b":null}`},
			{"ctx", "set", "T-1", "a", "[1]"},
			{"ctx", "unset", "T-1", "nothing"},
			{"ctx", "replace", "T-1", `{"a":[1]}`},
		} {
			if got := f.mustRun("", append(args, "-o", "json")...); got != `{"a":[1]}`+"\n" {
				t.Errorf("flowctl %v = %q", args, got)
			}
		}
		if !bytes.Equal(before, f.bytes()) {
			t.Errorf("no-op changes changed the file")
		}
	})
	t.Run("IfVersion", func(t *testing.T) {
		t.Parallel()
		f := ctxFixture(t)
		var task struct{ Version uint64 }
		if err := json.Unmarshal([]byte(f.mustRun("", "task", "show", "T-1", "-o", "json")), &task); err != nil {
			t.Fatal(err)
		}
		v := func(n uint64) string { return strconv.FormatUint(n, 10) }
		f.mustRun("", "ctx", "merge", "T-1", `{"a":1}`, "--if-version", v(task.Version))
		before := f.bytes()
		_, stderr, code := f.run("", "ctx", "merge", "T-1", `{"a":2}`, "--if-version", v(task.Version))
		wantError(t, stderr, code, 4, "version")
		if !bytes.Equal(before, f.bytes()) {
			t.Errorf("a stale --if-version changed the file")
		}
	})
	t.Run("IdempotencyKey", func(t *testing.T) {
		t.Parallel()
		f := ctxFixture(t)
		first := f.mustRun("", "ctx", "set", "T-1", "n", "1", "--idempotency-key", "k1", "-o", "json")
		before := f.bytes()
		again := f.mustRun("", "ctx", "set", "T-1", "n", "1", "--idempotency-key", "k1", "-o", "json")
		if again != first || !bytes.Equal(before, f.bytes()) {
			t.Errorf("retry printed %q (first %q) or changed the file", again, first)
		}
		_, stderr, code := f.run("", "ctx", "set", "T-1", "n", "2", "--idempotency-key", "k1")
		wantError(t, stderr, code, 4, "k1")
	})
}

func TestCtx_Replace(t *testing.T) {
	t.Parallel()
	f := ctxFixture(t)
	f.mustRun("", "ctx", "merge", "T-1", `{"a":1,"b":{"c":2}}`)
	got := f.mustRun("", "ctx", "replace", "T-1", `{"b":{"d":[]}}`, "-o", "json")
	if want := `{"b":{"d":[]}}` + "\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
}

func TestCtx_SetUnset(t *testing.T) {
	t.Parallel()
	f := ctxFixture(t)
	tests := []struct {
		value string
		want  string // the key's value stored
	}{
		{"main", `"main"`},
		{"42", `42`},
		{"true", `true`},
		{`"42"`, `"42"`},
		{`[1, "a"]`, `[1,"a"]`},
		{`{"x":1}`, `{"x":1}`},
		{"", `""`},
		{"two words", `"two words"`},
	}
	for _, tt := range tests {
		got := f.mustRun("", "ctx", "set", "T-1", "k", tt.value, "-o", "json")
		if want := `{"k":` + tt.want + "}\n"; got != want {
			t.Errorf("set k %q printed %q, want %q", tt.value, got, want)
		}
		f.mustRun("", "ctx", "unset", "T-1", "k")
	}
	if got := f.mustRun("", "ctx", "get", "T-1", "-o", "json"); got != "{}\n" {
		t.Errorf("context after unset = %q, want {}", got)
	}
	if n := ctxEventCount(f, "task.context_merged"); n != 2*len(tests) {
		t.Errorf("%d context events, want %d", n, 2*len(tests))
	}
}

func TestCtx_Get(t *testing.T) {
	t.Parallel()
	f := ctxFixture(t)
	f.mustRun("", "ctx", "merge", "T-1", `{"branch":"fix\tit","n":[1,2]}`)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"Text", []string{"T-1"}, "{\n  \"branch\": \"fix\\tit\",\n  \"n\": [\n    1,\n    2\n  ]\n}\n"},
		{"JSON", []string{"T-1", "-o", "json"}, `{"branch":"fix\tit","n":[1,2]}` + "\n"},
		{"KeyStringText", []string{"T-1", "--key", "branch"}, "fix\\tit\n"},
		{"KeyStringJSON", []string{"T-1", "--key", "branch", "-o", "json"}, `"fix\tit"` + "\n"},
		{"KeyArrayText", []string{"T-1", "--key", "n"}, "[\n  1,\n  2\n]\n"},
		{"KeyArrayJSON", []string{"T-1", "--key", "n", "--json"}, "[1,2]\n"},
		{"Empty", []string{"T-2", "--json"}, "{}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := f.mustRun("", append([]string{"ctx", "get"}, tt.args...)...); got != tt.want {
				t.Errorf("stdout = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCtx_History(t *testing.T) {
	t.Parallel()
	f := ctxFixture(t)
	f.mustRun("", "ctx", "merge", "T-1", `{"b":1,"a":"x"}`)
	f.mustRun("", "ctx", "set", "T-1", "a", "y")
	f.mustRun("", "ctx", "unset", "T-1", "b")
	f.mustRun("", "ctx", "replace", "T-1", `{"c":true}`)

	t.Run("JSON", func(t *testing.T) {
		var got []struct {
			Seq   uint64          `json:"seq"`
			Time  string          `json:"time"`
			Actor string          `json:"actor"`
			Key   string          `json:"key"`
			Op    string          `json:"op"`
			Value json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal([]byte(f.mustRun("", "ctx", "history", "T-1", "-o", "json")), &got); err != nil {
			t.Fatal(err)
		}
		want := []string{"a set \"x\"", "b set 1", "a set \"y\"", "b unset null", "a unset null", "c replace true"}
		if len(got) != len(want) {
			t.Fatalf("history = %+v, want %d entries", got, len(want))
		}
		for i, w := range want {
			e := got[i]
			if s := e.Key + " " + e.Op + " " + string(e.Value); s != w || e.Actor != "tester" || e.Time == "" || e.Seq == 0 {
				t.Errorf("entry %d = %+v, want %s by tester", i, e, w)
			}
		}
	})
	t.Run("Text", func(t *testing.T) {
		got := f.mustRun("", "ctx", "history", "T-1", "--key", "b")
		lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
		if len(lines) != 3 || !strings.HasPrefix(lines[0], "SEQ") || !strings.Contains(lines[1], " set ") || !strings.Contains(lines[2], " unset ") {
			t.Errorf("stdout = %q, want a header and two rows for b", got)
		}
	})
	t.Run("EmptyIsArray", func(t *testing.T) {
		ctxWantEmptyArray(t, f.mustRun("", "ctx", "history", "T-2", "-o", "json"))
	})
}

func TestCtx_BadInput(t *testing.T) {
	t.Parallel()
	f := ctxFixture(t)
	f.mustRun("", "ctx", "merge", "T-1", `{"a":1}`)
	deep := strings.Repeat("[", 65) + strings.Repeat("]", 65)
	runBadInputs(t, f, []badInput{
		{name: "MalformedJSON", args: []string{"ctx", "merge", "T-1", `{"a":`}, code: 2, facts: []string{"JSON"}},
		{name: "NotAnObject", args: []string{"ctx", "merge", "T-1", `[1,2]`}, code: 2, facts: []string{"object"}},
		{name: "ReplaceNotAnObject", args: []string{"ctx", "replace", "T-1", `"x"`}, code: 2, facts: []string{"object"}},
		{name: "InvalidUTF8", args: []string{"ctx", "merge", "T-1", "{\"a\":\"\xff\"}"}, code: 2, facts: []string{"UTF-8"}},
		{name: "DuplicateKey", args: []string{"ctx", "merge", "T-1", `{"a":1,"a":2}`}, code: 2, facts: []string{"duplicate", `"a"`}},
		{name: "TooDeep", args: []string{"ctx", "merge", "T-1", `{"a":` + deep + `}`}, code: 2, facts: []string{"64"}},
		{name: "TooLarge", stdin: `{"a":"` + strings.Repeat("x", 1<<20) + `"}`, args: []string{"ctx", "merge", "T-1", "-"}, code: 2, facts: []string{"over"}},
		{name: "EmptyStdin", args: []string{"ctx", "merge", "T-1", "-"}, code: 2, facts: []string{"JSON"}},
		{name: "MissingFile", args: []string{"ctx", "merge", "T-1", "@/nonexistent/patch.json"}, code: 3, facts: []string{"patch.json"}},
		{name: "UnknownTask", args: []string{"ctx", "merge", "T-9", `{"a":2}`}, code: 3, facts: []string{"T-9"}},
		{name: "BadTaskID", args: []string{"ctx", "merge", "X-1", `{"a":2}`}, code: 2, facts: []string{"X-1"}},
		{name: "NoTask", args: []string{"ctx", "merge", `{"a":2}`}, code: 2, facts: []string{"FLOW_TASK_ID"}},
		{name: "BadEnvTask", env: map[string]string{"FLOW_TASK_ID": "nope"}, args: []string{"ctx", "get"}, code: 2, facts: []string{"nope"}},
		{name: "StaleIfVersion", args: []string{"ctx", "merge", "T-1", `{"a":2}`, "--if-version", "1"}, code: 4, facts: []string{"version 2, not 1"}},
		{name: "StaleIfVersionNoOp", args: []string{"ctx", "merge", "T-1", `{"a":1}`, "--if-version", "1"}, code: 4, facts: []string{"version 2, not 1"}},
		{name: "SetBadObject", args: []string{"ctx", "set", "T-1", "k", `{"x":`}, code: 2, facts: []string{"VALUE"}},
		{name: "SetBadUTF8", args: []string{"ctx", "set", "T-1", "k", "a\xffb"}, code: 2, facts: []string{"UTF-8"}},
		{name: "SetEmptyKey", args: []string{"ctx", "set", "T-1", "", "1"}, code: 2, facts: []string{"key"}},
		{name: "SetMissingValue", args: []string{"ctx", "set", "T-1"}, code: 2, facts: []string{"arg"}},
		{name: "UnsetTooManyArgs", args: []string{"ctx", "unset", "T-1", "a", "b"}, code: 2, facts: []string{"arg"}},
		{name: "GetUnknownKey", args: []string{"ctx", "get", "T-1", "--key", "zzz"}, code: 3, facts: []string{"zzz"}},
		{name: "HistoryUnknownTask", args: []string{"ctx", "history", "T-4"}, code: 3, facts: []string{"T-4"}},
		{name: "BadFlag", args: []string{"ctx", "get", "T-1", "--frobnicate"}, code: 2, facts: []string{"--frobnicate"}},
		{name: "BadIfVersion", args: []string{"ctx", "merge", "T-1", `{"a":2}`, "--if-version", "soon"}, code: 2, facts: []string{"soon"}},
	})
	t.Run("JSONError", func(t *testing.T) {
		before := f.bytes()
		_, stderr, code := f.run("", "ctx", "merge", "T-1", `[1]`, "-o", "json")
		wantJSONError(t, stderr, code, 2, "invalid")
		if !bytes.Equal(before, f.bytes()) {
			t.Errorf("the file changed")
		}
	})
}
