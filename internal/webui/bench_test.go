package webui

import (
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/flowctl/flowctl/flow"
)

// BenchmarkPages serves every page of the fixture; with WEBUI_BENCH_DB
// and WEBUI_BENCH_PROJECT, of that file and project instead (a big one
// from `flowbench gen`), read-only.
func BenchmarkPages(b *testing.B) {
	var h http.Handler
	project, at := "web", "C-1"
	if db := os.Getenv("WEBUI_BENCH_DB"); db != "" {
		h = New(Config{Path: db, Options: flow.Options{}})
		project, at = os.Getenv("WEBUI_BENCH_PROJECT"), "1000"
	} else {
		h = newFixture(b).handler(false)
	}
	paths := map[string]string{"projects": "/", "overview": "/p/" + project, "board": "/p/" + project + "/board",
		"log": "/p/" + project + "/log", "approvals": "/p/" + project + "/approvals", "checkpoints": "/p/" + project + "/checkpoints",
		"stats": "/p/" + project + "/stats", "graph": "/p/" + project + "/graph", "overview-at": "/p/" + project + "?at=" + at,
		"task": "/p/" + project + "/tasks/T-1"}
	for name, path := range paths {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("GET %s: %d", path, rec.Code)
				}
			}
		})
	}
}
