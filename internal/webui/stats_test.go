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
