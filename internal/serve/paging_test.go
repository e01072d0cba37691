package serve

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
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
