package webui

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/internal/flowtest"
)

// TestStatsPage_Tasks: the stats page lists the first statsTaskLimit
// tasks and links to all of them; ?tasks=all lists every one.
func TestStatsPage_Tasks(t *testing.T) {
	path := filepath.Join(t.TempDir(), flow.DefaultDir, flow.DefaultFile)
	e, err := flow.Open(path, flow.Options{Create: true, NoSync: true, Actor: "ann", Now: flowtest.Clock()})
	if err != nil {
		t.Fatal(err)
	}
	must(e.CreateProject(flow.NewProject{Name: "p"}))
	n := statsTaskLimit + 3
	for i := 1; i <= n; i++ {
		task := must(e.AddTask(flow.NewTask{Project: "p", Title: fmt.Sprint("task ", i)}))
		must(e.RecordExec(flow.NewExec{Project: "p", Task: task.ID, Command: "make", Success: true, ElapsedMS: 5}))
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	h := New(Config{Path: path})
	rows := func(body string) int { return strings.Count(body, `<tr data-task="`) }
	body := mustGet(t, h, "/p/p/stats")
	wantIn(t, "first", body, `id="task-stats-more"`, fmt.Sprintf("The first %d of %d tasks", statsTaskLimit, n), `href="/p/p/stats?tasks=all"`)
	if got := rows(body); got != statsTaskLimit {
		t.Errorf("%d task rows, want %d", got, statsTaskLimit)
	}
	body = mustGet(t, h, "/p/p/stats?tasks=all")
	if got := rows(body); got != n || strings.Contains(body, `id="task-stats-more"`) {
		t.Errorf("tasks=all: %d task rows, want %d and no link to more", got, n)
	}
	if code, _ := get(t, h, "/p/p/stats?tasks=some"); code != 400 {
		t.Errorf("tasks=some: %d, want 400", code)
	}
}

// TestDiffPage_Pages: the diff page lists pageChanges changes at a time;
// past the first page it says which changes it shows and links to all.
func TestDiffPage_Pages(t *testing.T) {
	h := newFixture(t).handler(false)
	body := mustGet(t, h, "/p/web/diff?a=1")
	if strings.Contains(body, `id="diff-page"`) {
		t.Errorf("one page of changes: no paging wanted")
	}
	body = mustGet(t, h, "/p/web/diff?a=1&offset=1")
	wantIn(t, "offset 1", body, `id="diff-page"`, "Changes 2–", `id="diff-all"`, "all=1")
	all := mustGet(t, h, "/p/web/diff?a=1&all=1")
	if n, m := strings.Count(all, `data-kind=`), strings.Count(body, `data-kind=`); n != m+1 {
		t.Errorf("all: %d changes, offset 1: %d", n, m)
	}
	for _, bad := range []string{"/p/web/diff?a=1&offset=-1", "/p/web/diff?a=1&all=maybe", "/p/web/checkpoints?preview=C-1&all=maybe"} {
		if code, _ := get(t, h, bad); code != 400 {
			t.Errorf("%s: %d, want 400", bad, code)
		}
	}
}
