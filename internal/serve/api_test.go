package serve

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow"
)

// TestOpenAPI_Routes checks that the document lists every route the
// server registers, and nothing else.
func TestOpenAPI_Routes(t *testing.T) {
	s := mustServer(t, testConfig(mustFile(t)))
	w := do(s.handler(), "GET", "/api/v1/openapi.json", "")
	wantStatus(t, w, 200, "")
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q", doc.OpenAPI)
	}
	var documented, registered []string
	for path, ops := range doc.Paths {
		for method := range ops {
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	for _, rt := range s.routes() {
		registered = append(registered, rt.method+" "+rt.path)
	}
	slices.Sort(documented)
	slices.Sort(registered)
	if !slices.Equal(documented, registered) {
		t.Fatalf("documented:\n%s\nregistered:\n%s", strings.Join(documented, "\n"), strings.Join(registered, "\n"))
	}
	for _, rt := range s.routes() {
		var op struct {
			Security []any `json:"security"`
		}
		json.Unmarshal(doc.Paths[rt.path][strings.ToLower(rt.method)], &op)
		if rt.write != (len(op.Security) > 0) {
			t.Errorf("%s %s: write %v, documented security %v", rt.method, rt.path, rt.write, op.Security)
		}
	}
}

func TestRead_Errors(t *testing.T) {
	h := mustServer(t, testConfig(mustFile(t))).handler()
	cases := []struct {
		target string
		status int
		code   string
	}{
		{"/api/v1/projects/nope/status", 404, "not_found"},
		{"/api/v1/projects/web/tasks/T-99", 404, "not_found"},
		{"/api/v1/projects/web/tasks/X", 400, "invalid"},
		{"/api/v1/projects/web/tasks?status=later", 400, "invalid"},
		{"/api/v1/projects/web/tasks?limit=-1", 400, "invalid"},
		{"/api/v1/projects/web/status?at=yesterday", 400, "invalid"},
		{"/api/v1/projects/web/status?at=999", 400, "invalid"},
		{"/api/v1/projects/web/status?at=C-9", 404, "not_found"},
		{"/api/v1/projects?at=3", 400, "invalid"},
		{"/api/v1/projects/web/diff", 400, "invalid"},
		{"/api/v1/projects/web/log?type=nothing.*", 400, "invalid"},
		{"/api/v1/projects/web/log?before=x", 400, "invalid"},
		{"/api/v1/events?type=nothing", 400, "invalid"},
		{"/api/v1/events?project=nope", 404, "not_found"},
		{"/api/v1/projects/web/graph?task=T-9", 404, "not_found"},
		{"/api/v1/projects/web/graph?task=X", 400, "invalid"},
		{"/api/v1/projects/web/graph?all=maybe", 400, "invalid"},
		{"/api/v1/projects/web/graph?at=C-9", 404, "not_found"},
		{"/api/v1/projects/nope/graph", 404, "not_found"},
		{"/api/v1/nothing", 404, "not_found"},
	}
	for _, c := range cases {
		t.Run(c.target, func(t *testing.T) { wantStatus(t, do(h, "GET", c.target, ""), c.status, c.code) })
	}
}

func TestRead_Graph(t *testing.T) {
	h := mustServer(t, testConfig(mustFile(t))).handler()
	cases := []struct{ target, root, nodes, edges string }{
		{"/api/v1/projects/web/graph", "", "T-1 done,T-3 todo,T-2 todo", "T-1>T-2"},
		{"/api/v1/projects/web/graph?all=1", "", "T-1 done,T-3 todo,T-2 todo", "T-1>T-2"},
		{"/api/v1/projects/web/graph?task=T-2", "T-2", "T-1 done,T-2 todo", "T-1>T-2"},
		{"/api/v1/projects/web/graph?task=t-3", "T-3", "T-3 todo", ""},
		{"/api/v1/projects/web/graph?at=C-1", "", "T-1 todo", ""},
		{"/api/v1/projects/web/graph?at=5&task=T-2", "T-2", "T-1 todo,T-2 todo", "T-1>T-2"},
	}
	for _, c := range cases {
		t.Run(c.target, func(t *testing.T) {
			w := do(h, "GET", c.target, "")
			wantStatus(t, w, 200, "")
			var g struct {
				Project, Root string
				Open          bool
				Nodes         []struct{ ID, Status string }
				Edges         []struct{ From, To string }
			}
			if err := json.Unmarshal(w.Body.Bytes(), &g); err != nil {
				t.Fatal(err)
			}
			var nodes, edges []string
			for _, n := range g.Nodes {
				nodes = append(nodes, n.ID+" "+n.Status)
			}
			for _, e := range g.Edges {
				edges = append(edges, e.From+">"+e.To)
			}
			if open := c.root == "" && !strings.Contains(c.target, "all="); g.Open != open {
				t.Errorf("open %v, want %v", g.Open, open)
			}
			if g.Project != "web" || g.Root != c.root || strings.Join(nodes, ",") != c.nodes || strings.Join(edges, ",") != c.edges {
				t.Fatalf("project %q root %q nodes %v edges %v, want root %q nodes %s edges %s", g.Project, g.Root, nodes, edges, c.root, c.nodes, c.edges)
			}
		})
	}
}

func TestRead_At(t *testing.T) {
	h := mustServer(t, testConfig(mustFile(t))).handler()
	var tasks []struct{ ID, Status string }
	for at, want := range map[string]string{"": "T-1 done,T-2 todo,T-3 todo", "C-1": "T-1 todo", "HEAD": "T-1 done,T-2 todo,T-3 todo", "4": "T-1 todo,T-2 todo"} {
		target := "/api/v1/projects/web/tasks"
		if at != "" {
			target += "?at=" + at
		}
		w := do(h, "GET", target, "")
		wantStatus(t, w, 200, "")
		if err := json.Unmarshal(w.Body.Bytes(), &tasks); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, t := range tasks {
			got = append(got, t.ID+" "+t.Status)
		}
		if strings.Join(got, ",") != want {
			t.Errorf("at %q: %v, want %s", at, got, want)
		}
	}
}

func TestWrite_Answers(t *testing.T) {
	path := mustFile(t)
	h := mustServer(t, testConfig(path)).handler()
	w := do(h, "POST", "/api/v1/projects/web/tasks/T-3/move", `{"to":"doing","note":"go"}`, bearer)
	wantStatus(t, w, 200, "")
	var task struct{ Status string }
	json.Unmarshal(w.Body.Bytes(), &task)
	if task.Status != "doing" {
		t.Fatalf("moved: %s", w.Body)
	}
	t.Run("Conflicts", func(t *testing.T) {
		wantStatus(t, do(h, "POST", "/api/v1/projects/web/tasks/T-3/move", `{"to":"doing","if_version":1}`, bearer), 409, "conflict")
		wantStatus(t, do(h, "POST", "/api/v1/projects/web/tasks/T-2/move", `{"to":"done"}`, bearer), 409, "conflict")
	})
	t.Run("Invalid", func(t *testing.T) {
		wantStatus(t, do(h, "POST", "/api/v1/projects/web/tasks/T-3/move", `{"to":"later"}`, bearer), 400, "invalid")
		wantStatus(t, do(h, "POST", "/api/v1/projects/web/tasks/T-3/move", `{"to":"done","extra":1}`, bearer), 400, "invalid")
		wantStatus(t, do(h, "POST", "/api/v1/projects/web/tasks/T-3/move", `[1]`, bearer), 400, "invalid")
		wantStatus(t, do(h, "POST", "/api/v1/projects/web/tasks/T-3/notes", `{"text":""}`, bearer), 400, "invalid")
		wantStatus(t, do(h, "POST", "/api/v1/projects/web/rollback", `{"to":"C-1"}`, bearer), 400, "invalid")
		wantStatus(t, do(h, "POST", "/api/v1/projects/web/rollback", `{"to":"C-1","confirm":"wrong"}`, bearer), 400, "invalid")
	})
	t.Run("NotFound", func(t *testing.T) {
		wantStatus(t, do(h, "POST", "/api/v1/projects/web/approvals/A-9/grant", `{}`, bearer), 404, "not_found")
		wantStatus(t, do(h, "POST", "/api/v1/projects/web/tasks/T-9/notes", `{"text":"x"}`, bearer), 404, "not_found")
	})
	t.Run("Grant", func(t *testing.T) {
		w := do(h, "POST", "/api/v1/projects/web/approvals/A-1/grant", `{"comment":"ok"}`, bearer)
		wantStatus(t, w, 200, "")
		var ap struct {
			Status, Comment string
			DecidedBy       string `json:"decided_by"`
		}
		json.Unmarshal(w.Body.Bytes(), &ap)
		if ap.Status != "granted" || ap.Comment != "ok" || ap.DecidedBy != "tester" {
			t.Fatalf("granted: %s", w.Body)
		}
		wantStatus(t, do(h, "POST", "/api/v1/projects/web/approvals/A-1/deny", `{}`, bearer), 409, "conflict")
	})
	t.Run("Idempotent", func(t *testing.T) {
		a := do(h, "POST", "/api/v1/projects/web/tasks/T-3/notes", `{"text":"once"}`, bearer, IdempotencyHeader+": k1")
		b := do(h, "POST", "/api/v1/projects/web/tasks/T-3/notes", `{"text":"once"}`, bearer, IdempotencyHeader+": k1")
		wantStatus(t, b, 200, "")
		if a.Body.String() != b.Body.String() {
			t.Fatalf("a retry answered %s, then %s", a.Body, b.Body)
		}
	})
	t.Run("Rollback", func(t *testing.T) {
		w := do(h, "POST", "/api/v1/projects/web/rollback", `{"to":"C-1","confirm":"web","reason":"undo"}`, bearer)
		wantStatus(t, w, 200, "")
		var res struct{ Applied bool }
		json.Unmarshal(w.Body.Bytes(), &res)
		if !res.Applied {
			t.Fatalf("rollback: %s", w.Body)
		}
		wantStatus(t, do(h, "GET", "/api/v1/projects/web/tasks/T-3", ""), 404, "not_found")
	})
}

func TestLog_Paging(t *testing.T) {
	path := mustFile(t)
	h := mustServer(t, testConfig(path)).handler()
	all := logSeqs(t, do(h, "GET", "/api/v1/projects/web/log?limit=0", "").Body.Bytes())
	if len(all) < 8 {
		t.Fatalf("log: %v", all)
	}
	var pages []uint64
	target := "/api/v1/projects/web/log?limit=3"
	for n := 0; target != ""; n++ {
		w := do(h, "GET", target, "")
		wantStatus(t, w, 200, "")
		page := logSeqs(t, w.Body.Bytes())
		if len(page) > 3 || !slices.IsSorted(page) {
			t.Fatalf("page %d: %v", n, page)
		}
		pages = append(page, pages...)
		target = ""
		if before := w.Header().Get(NextBeforeHeader); before != "" {
			if want := strconv.FormatUint(page[0], 10); before != want {
				t.Fatalf("cursor %s, want %s", before, want)
			}
			target = "/api/v1/projects/web/log?limit=3&before=" + before
		}
	}
	if !slices.Equal(pages, all) {
		t.Fatalf("pages %v, want the whole log %v", pages, all)
	}
	if got := logSeqs(t, do(h, "GET", "/api/v1/projects/web/log?task=T-1&type=task.*", "").Body.Bytes()); len(got) != 3 {
		t.Errorf("T-1's task events: %v", got)
	}
	if got := logSeqs(t, do(h, "GET", "/api/v1/projects/web/log?at=C-1&limit=0", "").Body.Bytes()); slices.Max(got) > 3 {
		t.Errorf("log at C-1: %v", got)
	}
	if got := do(h, "GET", "/api/v1/projects/web/log?before=1", ""); got.Body.String() != "[]\n" {
		t.Errorf("before=1: %q", got.Body)
	}
}

func logSeqs(t testing.TB, b []byte) []uint64 {
	t.Helper()
	var evs []flow.Event
	if err := json.Unmarshal(b, &evs); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	seqs := make([]uint64, len(evs))
	for i, ev := range evs {
		seqs[i] = ev.Seq
	}
	return seqs
}

func ExampleParsePoint() {
	for _, s := range []string{"42", "C-1", "2026-11-22T10:00:00Z", "head"} {
		p, _ := ParsePoint(s)
		fmt.Println(p == Head, p)
	}
	// Output:
	// false 42
	// false C-1
	// false 2026-11-22T10:00:00Z
	// true 9999-12-31T23:59:59Z
}
