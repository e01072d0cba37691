package serve

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow"
)

// TestTasks_Pages: a task list comes in pages of DefaultTaskLimit, each
// naming the next one's cursor in X-Flowctl-Next-After while more tasks
// match; the pages put together are limit=0's list, and a filter pages
// as well.
func TestTasks_Pages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "flow.db")
	eng := mustOpen(t, path, true)
	if _, err := eng.CreateProject(flow.NewProject{Name: "web"}); err != nil {
		t.Fatal(err)
	}
	n := DefaultTaskLimit + 5
	for i := 1; i <= n; i++ {
		tags := []string{}
		if i%4 == 0 {
			tags = append(tags, "four")
		}
		if _, err := eng.AddTask(flow.NewTask{Project: "web", Title: fmt.Sprint("task ", i), Tags: tags}); err != nil {
			t.Fatal(err)
		}
	}
	eng.Close()
	h := mustServer(t, testConfig(path)).handler()
	list := func(target string) (ids []string, next string) {
		t.Helper()
		w := do(h, "GET", target, "")
		wantStatus(t, w, 200, "")
		var tasks []struct{ ID string }
		if err := json.Unmarshal(w.Body.Bytes(), &tasks); err != nil {
			t.Fatal(err)
		}
		for _, tk := range tasks {
			ids = append(ids, tk.ID)
		}
		return ids, w.Header().Get(NextAfterHeader)
	}
	all, next := list("/api/v1/projects/web/tasks?limit=0")
	if len(all) != n || next != "" {
		t.Fatalf("limit=0: %d tasks, next %q; want %d, none", len(all), next, n)
	}
	first, next := list("/api/v1/projects/web/tasks")
	if !slices.Equal(first, all[:DefaultTaskLimit]) || next != all[DefaultTaskLimit-1] {
		t.Fatalf("first page: %v, next %q", first, next)
	}
	rest, next2 := list("/api/v1/projects/web/tasks?after=" + next)
	if !slices.Equal(rest, all[DefaultTaskLimit:]) || next2 != "" {
		t.Fatalf("second page: %v, next %q", rest, next2)
	}
	// A full last page names no cursor: nothing comes after it.
	if ids, next := list("/api/v1/projects/web/tasks?limit=5&after=T-100"); len(ids) != 5 || next != "" {
		t.Errorf("full last page: %v, next %q", ids, next)
	}
	var tagged, want []string
	for after := ""; ; {
		ids, next := list("/api/v1/projects/web/tasks?tag=four&limit=7&after=" + after)
		tagged = append(tagged, ids...)
		if next == "" {
			break
		}
		after = next
	}
	for i := 4; i <= n; i += 4 {
		want = append(want, fmt.Sprint("T-", i))
	}
	if !slices.Equal(tagged, want) {
		t.Errorf("tag pages: %v, want %v", tagged, want)
	}
	wantStatus(t, do(h, "GET", "/api/v1/projects/web/tasks?after=X-1", ""), 400, "invalid")
}

// TestDiff_Paging: a diff comes a page at a time: limit changes after
// offset, total and truncated, and X-Flowctl-Next-Offset while more
// follow; the pages put together are the whole diff (limit=0). A rollback
// preview lists the first limit changes likewise.
func TestDiff_Paging(t *testing.T) {
	h := mustServer(t, testConfig(mustFile(t))).handler()
	type diff struct {
		Changes []struct {
			Kind, ID, Op string
		}
		Total     int
		Truncated bool
	}
	get := func(target string) (diff, string) {
		t.Helper()
		w := do(h, "GET", target, "")
		wantStatus(t, w, 200, "")
		var d diff
		if err := json.Unmarshal(w.Body.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		return d, w.Header().Get(NextOffsetHeader)
	}
	all, next := get("/api/v1/projects/web/diff?a=1&limit=0")
	if all.Total < 3 || all.Total != len(all.Changes) || all.Truncated || next != "" {
		t.Fatalf("limit=0: %d changes of %d, truncated %v, next %q", len(all.Changes), all.Total, all.Truncated, next)
	}
	if d, _ := get("/api/v1/projects/web/diff?a=1"); len(d.Changes) != all.Total || d.Truncated {
		t.Errorf("the default page of %d changes: %d, truncated %v", all.Total, len(d.Changes), d.Truncated)
	}
	var paged []string
	offset := "0"
	for pages := 0; offset != ""; pages++ {
		if pages > all.Total {
			t.Fatal("the pages do not end")
		}
		d, n := get("/api/v1/projects/web/diff?a=1&limit=2&offset=" + offset)
		if d.Total != all.Total || d.Truncated != (n != "") || len(d.Changes) > 2 {
			t.Fatalf("offset %s: %d changes of %d, truncated %v, next %q", offset, len(d.Changes), d.Total, d.Truncated, n)
		}
		for _, c := range d.Changes {
			paged = append(paged, c.Kind+" "+c.ID+" "+c.Op)
		}
		offset = n
	}
	var want []string
	for _, c := range all.Changes {
		want = append(want, c.Kind+" "+c.ID+" "+c.Op)
	}
	if strings.Join(paged, ",") != strings.Join(want, ",") {
		t.Errorf("pages %v, want %v", paged, want)
	}
	wantStatus(t, do(h, "GET", "/api/v1/projects/web/diff?a=1&limit=-1", ""), 400, "invalid")
	wantStatus(t, do(h, "GET", "/api/v1/projects/web/diff?a=1&offset=x", ""), 400, "invalid")

	w := do(h, "POST", "/api/v1/projects/web/rollback", `{"to":"1","dry_run":true,"limit":1}`, bearer)
	wantStatus(t, w, 200, "")
	var rb diff
	json.Unmarshal(w.Body.Bytes(), &rb)
	if len(rb.Changes) != 1 || rb.Total < 2 || !rb.Truncated {
		t.Errorf("rollback dry run, limit 1: %s", w.Body)
	}
	wantStatus(t, do(h, "POST", "/api/v1/projects/web/rollback", `{"to":"1","dry_run":true,"limit":-1}`, bearer), 400, "invalid")
}
