package webui

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// pages are every page of the fixture, with what each must show.
var pages = []struct {
	name, path string
	want       []string
}{
	{"projects", "/", []string{`id="project-web"`, `id="project-other"`, "the web site"}},
	{"overview", "/p/web", []string{`id="counts"`, `data-count="doing"`, `id="ready"`, `id="blocked"`, "waiting for",
		`id="claims"`, `id="pending"`, `id="steps"`, `value="40"`, `id="activity"`, "task.created"}},
	{"overview slash", "/p/web/", []string{`id="counts"`}},
	{"board", "/p/web/board", []string{`id="col-todo"`, `id="col-doing"`, `id="col-blocked"`, `id="col-done"`,
		`id="col-cancelled"`, `data-task="T-2"`, `data-status="doing"`, "1/2 steps", `value="50"`}},
	{"task", "/p/web/tasks/T-2", []string{`id="fields"`, `id="steps"`, `id="step-T-2.2"`, `id="context"`, `data-key="branch"`,
		"feat/page-2", `id="ctx-build"`, `data-path="build.files.1"`, `id="ctx-history-branch"`, `id="execs"`,
		`data-exit="1"`, "go vet ./...", "exit 1", `id="notes"`, `id="memories"`, "remember the cache", `id="approvals"`,
		`id="timeline"`, `id="move-form"`, `id="note-form"`}},
	{"log", "/p/web/log", []string{`id="log"`, `id="ev-1"`, "&#34;type&#34;: &#34;project.created&#34;", `id="log-filters"`}},
	{"checkpoints", "/p/web/checkpoints", []string{`id="checkpoint-C-1"`, `id="checkpoint-C-2"`, `id="preview-C-1"`}},
	{"approvals", "/p/web/approvals", []string{`id="approval-A-1"`, `id="approve-A-1"`, `id="deny-A-1"`, `id="comment-A-1"`,
		`id="hash-A-1"`, "&#34;cmd&#34;: &#34;deploy&#34;", `id="approval-A-2"`, "granted"}},
	{"stats", "/p/web/stats", []string{`<svg class="chart"`, `id="tools-chart"`, `data-label="go"`, `data-label="go vet"`, `class="bar ewma"`, `class="bar rate"`, "go vet"}},
	{"diff", "/p/web/diff", []string{`id="diff-form"`}},
	{"graph", "/p/web/graph?all=1", []string{`<div class="graph" id="graph"`, `class="flow-graph"`, `data-id="T-5"`}},
}

func TestPages_Render(t *testing.T) {
	f := newFixture(t)
	h := f.handler(false)
	dump := os.Getenv("WEBUI_DUMP") // a directory: write every page there to look at
	for _, p := range pages {
		t.Run(p.name, func(t *testing.T) {
			body := mustGet(t, h, p.path)
			wantIn(t, p.path, body, p.want...)
			wantIn(t, p.path, body, `<link rel="stylesheet" href="/assets/app.css">`, `<script src="/assets/app.js" defer></script>`)
			if dump != "" {
				name := strings.NewReplacer("/", "_", " ", "_").Replace(p.name) + ".html"
				os.WriteFile(filepath.Join(dump, name), []byte(body), 0o644)
			}
		})
	}
}

// inlineScript finds a <script> with content, an inline event handler or a
// style attribute: what the CSP refuses.
var inlineScript = regexp.MustCompile(`<script[^>]*>[^<]|\son[a-z]+\s*=|\sstyle\s*=|<style`)

func TestPages_EscapeUserText(t *testing.T) {
	f := newFixture(t)
	h := f.handler(false)
	for _, p := range append(pages, struct {
		name, path string
		want       []string
	}{"preview", "/p/web/checkpoints?preview=C-1", nil},
		struct {
			name, path string
			want       []string
		}{"diff", "/p/web/diff?a=C-1&b=C-2", nil}) {
		body := mustGet(t, h, p.path)
		wantNotIn(t, p.path, body, evil, "<script>alert")
		if m := inlineScript.FindString(body); m != "" {
			t.Errorf("%s: inline script or style: %q", p.path, m)
		}
	}
	for _, path := range []string{"/p/web/tasks/T-1", "/p/web/tasks/T-2", "/p/web/board", "/p/web/approvals"} {
		wantIn(t, path, mustGet(t, h, path), "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;")
	}
}

func TestPages_NotFound(t *testing.T) {
	f := newFixture(t)
	h := f.handler(false)
	for _, path := range []string{"/p/nope", "/p/nope/board", "/p/web/tasks/T-99", "/nowhere", "/p/web/nowhere",
		"/p/web?at=C-9"} {
		code, body := get(t, h, path)
		if code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, code)
		}
		wantIn(t, path, body, `id="error"`, `data-status="404"`)
	}
	for _, path := range []string{"/p/web?at=nonsense", "/p/web?at=999999", "/p/web/log?before=x", "/p/web/board?plan=zz"} {
		if code, _ := get(t, h, path); code != http.StatusBadRequest {
			t.Errorf("GET %s: %d, want 400", path, code)
		}
	}
}

func TestPages_At(t *testing.T) {
	f := newFixture(t)
	h := f.handler(false)
	mid := strconv.FormatUint(f.mid, 10)
	now := mustGet(t, h, "/p/web/tasks/T-2")
	wantIn(t, "now", now, `data-live="true"`, "feat/page-2", `id="step-T-2.1"`)
	wantNotIn(t, "now", now, `id="at-banner"`)
	for _, at := range []string{"C-1", mid} {
		old := mustGet(t, h, "/p/web/tasks/T-2?at="+at)
		wantIn(t, "at "+at, old, `id="at-banner"`, `data-at="`+at+`"`, `data-at-seq="`+mid+`"`, `data-live="false"`, "feat/page")
		wantNotIn(t, "at "+at, old, "feat/page-2", `id="step-T-2.1"`, `id="move-form"`)
		// links keep the point
		wantIn(t, "at "+at, old, `href="/p/web/board?at=`+at+`"`)
	}
	board := mustGet(t, h, "/p/web/board?at=C-1")
	wantIn(t, "board at C-1", board, `data-task="T-2" data-status="todo"`, `data-task="T-1" data-status="done"`)
	wantNotIn(t, "board at C-1", board, `data-task="T-5" data-status="cancelled"`, `data-task="T-2" data-status="doing"`)
	// the history at a point ends there
	log := mustGet(t, h, "/p/web/log?at=C-1")
	wantIn(t, "log at C-1", log, `id="ev-`+mid+`"`)
	wantNotIn(t, "log at C-1", log, `id="ev-`+strconv.FormatUint(f.mid+1, 10)+`"`)
}

func TestPages_ReadOnly(t *testing.T) {
	f := newFixture(t)
	writes := []string{`data-api=`, `id="approve-A-1"`, `id="move-form"`, `id="rollback-form"`}
	for _, path := range []string{"/p/web/approvals", "/p/web/tasks/T-2", "/p/web/checkpoints?preview=C-1"} {
		wantIn(t, path+" writable", mustGet(t, f.handler(false), path), `data-api=`)
		ro := mustGet(t, f.handler(true), path)
		wantNotIn(t, path+" read-only", ro, writes...)
		wantIn(t, path+" read-only", ro, `id="read-only"`)
	}
}

func TestPages_Live(t *testing.T) {
	f := newFixture(t)
	h := f.handler(false)
	body := mustGet(t, h, "/p/web/board")
	m := regexp.MustCompile(`<main id="main" data-page="board" data-project="web" data-seq="(\d+)" data-live="true">`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("board: no live <main> with its seq")
	}
	if m[1] == "0" {
		t.Errorf("data-seq = 0")
	}
}

func TestAssets(t *testing.T) {
	h := newFixture(t).handler(false)
	for path, ct := range map[string]string{"/assets/app.js": "javascript", "/assets/app.css": "text/css", "/assets/favicon.svg": "image/svg"} {
		rec := serve(h, path)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Header().Get("Content-Type"), ct) {
			t.Errorf("GET %s: %d %q", path, rec.Code, rec.Header().Get("Content-Type"))
		}
	}
	js := serve(h, "/assets/app.js").Body.String()
	wantIn(t, "app.js", js, "EventSource('/api/v1/events?project='", "'X-Flowctl-CSRF': '1'", "credentials: 'same-origin'")
}
