package webui

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flowctl/flowctl/flow"
)

func TestBoard_Filters(t *testing.T) {
	h := newFixture(t).handler(false)
	cases := []struct {
		query     string
		want, not []string
	}{
		{"plan=P-1", []string{`data-task="T-1"`, `data-task="T-5"`}, nil},
		{"owner=ann&tag=ui", []string{`data-task="T-2"`}, nil},
		{"owner=bob", nil, []string{`data-task="T-`}},
		{"tag=nope", nil, []string{`data-task="T-`}},
		{"q=LEGAL", []string{`data-task="T-4"`, `id="f-clear"`}, []string{`data-task="T-1"`, `data-task="T-2"`}},
		{"q=t-3", []string{`data-task="T-3"`}, []string{`data-task="T-4"`}},
	}
	for _, c := range cases {
		body := mustGet(t, h, "/p/web/board?"+c.query)
		wantIn(t, c.query, body, c.want...)
		wantNotIn(t, c.query, body, c.not...)
	}
}

func TestLog_FiltersAndPaging(t *testing.T) {
	f := newFixture(t)
	h := f.handler(false)
	typ := mustGet(t, h, "/p/web/log?type=task.status_*")
	wantIn(t, "type", typ, `data-type="task.status_changed"`)
	wantNotIn(t, "type", typ, `data-type="task.created"`, `id="log-older"`)
	task := mustGet(t, h, "/p/web/log?task=T-4")
	wantIn(t, "task", task, `data-type="task.created"`, `data-type="task.status_changed"`)
	if n := strings.Count(task, `class="ev-row`); n != 2 {
		t.Errorf("task=T-4: %d events, want 2", n)
	}
	wantIn(t, "actor", mustGet(t, h, "/p/web/log?actor=nobody"), "No events match.")
	wantIn(t, "session", mustGet(t, h, "/p/web/log?session=s1"), `id="ev-1"`)
	wantIn(t, "bad type", mustGet(t, h, "/p/web/log?type=nonsense"), `id="log-error"`)
	open := mustGet(t, h, "/p/web/log?task=T-4&open=1")
	if n := strings.Count(open, `data-type="task.created" open>`); n != 1 {
		t.Errorf("open=1: %d open events of type task.created, want 1", n)
	}
	wantIn(t, "log", mustGet(t, h, "/p/web/log?task=T-4"), `href="/p/web/log?open=1&amp;task=T-4" id="log-open"`)
	before := mustGet(t, h, "/p/web/log?before=10")
	wantIn(t, "before", before, `id="ev-8"`, `id="ev-1"`, `id="log-page"`)
	wantNotIn(t, "before", before, `id="ev-10"`, `id="ev-11"`)
}

func TestLog_PagesBackFromTheNewest(t *testing.T) {
	f := newFixture(t)
	e, err := flow.Open(f.path, flow.Options{NoSync: true, Actor: "bot", Now: f.now})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < logPageSize+10; i++ {
		if _, err := e.AddNote(flow.NewNote{Project: "web", Text: "tick"}); err != nil {
			t.Fatal(err)
		}
	}
	head := mustRead(t, e)
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	h := f.handler(false)
	first := mustGet(t, h, "/p/web/log?actor=bot")
	if n := strings.Count(first, `class="ev-row`); n != logPageSize {
		t.Fatalf("first page: %d events, want %d", n, logPageSize)
	}
	wantIn(t, "first", first, `id="ev-`+itoa(head)+`"`, `id="log-older"`, `href="/p/web/log?actor=bot&amp;before=`)
	next := mustGet(t, h, "/p/web/log?actor=bot&before="+itoa(head-logPageSize+1))
	if n := strings.Count(next, `class="ev-row`); n != 10 {
		t.Errorf("second page: %d events, want 10", n)
	}
	wantNotIn(t, "second", next, `id="log-older"`, `id="ev-`+itoa(head-logPageSize+1)+`"`)
}

func TestDiffAndPreview(t *testing.T) {
	h := newFixture(t).handler(false)
	diff := mustGet(t, h, "/p/web/diff?a=C-1&b=C-2")
	wantIn(t, "diff", diff, `id="diff"`, `data-kind="task" data-id="T-2" data-op="changed"`, `data-kind="approval" data-id="A-1" data-op="added"`)
	wantIn(t, "diff to now", mustGet(t, h, "/p/web/diff?a=C-1"), `id="diff"`)
	wantIn(t, "bad point", mustGet(t, h, "/p/web/diff?a=zz"), `id="diff-error"`)
	wantIn(t, "unknown checkpoint", mustGet(t, h, "/p/web/diff?a=C-9"), `id="diff-error"`)
	prev := mustGet(t, h, "/p/web/checkpoints?preview=C-1")
	wantIn(t, "preview", prev, `id="preview"`, `data-id="X-1" data-op="removed"`, "world:", `id="rollback-form"`,
		`data-expect="web"`, `name="dry_run" value="false" data-bool`)
}

// TestPages_ReleaseTheFile checks that a page closes the file before it
// answers: a writer opens it at once after.
func TestPages_ReleaseTheFile(t *testing.T) {
	f := newFixture(t)
	h := f.handler(false)
	for _, p := range pages {
		mustGet(t, h, p.path)
		e, err := flow.Open(f.path, flow.Options{NoSync: true, LockTimeout: 100 * time.Millisecond})
		if err != nil {
			t.Fatalf("after GET %s: a writer cannot open the file: %v", p.path, err)
		}
		e.Close()
	}
}

func mustRead(tb testing.TB, e *flow.Engine) uint64 {
	tb.Helper()
	var head uint64
	if err := e.Read(func(r *flow.Reader) error { head = r.Head(); return nil }); err != nil {
		tb.Fatal(err)
	}
	return head
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

func TestBoard_ColumnCap(t *testing.T) {
	f := newFixture(t)
	e, err := flow.Open(f.path, flow.Options{NoSync: true, Actor: "bot", Now: f.now})
	if err != nil {
		t.Fatal(err)
	}
	items := make([]flow.BatchTask, boardCards+5)
	for i := range items {
		items[i].Title = "many " + strconv.Itoa(i)
	}
	if _, err := e.AddTasks("web", items); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	h := f.handler(false)
	for _, path := range []string{"/p/web/board", "/p/web/board?q=many"} {
		body := mustGet(t, h, path)
		todo := body[strings.Index(body, `id="col-todo"`):strings.Index(body, `id="col-doing"`)]
		if n := strings.Count(todo, `class="card `); n != boardCards {
			t.Errorf("%s: %d todo cards, want %d", path, n, boardCards)
		}
		more := 5
		if path == "/p/web/board" {
			more = 6 // T-3 too
		}
		wantIn(t, path, todo, `data-more="`+strconv.Itoa(more)+`"`)
	}
}
