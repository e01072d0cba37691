package webui

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flowctl/flowctl/projection"
)

// page is what the layout and every page template render.
type page struct {
	Name     string // the template: "overview", "board", ...
	Title    string
	Project  string // "" outside a project
	Path     string // the request's path
	ReadOnly bool   // hide write controls
	Live     bool   // a page at the head: app.js refreshes it on events
	Seq      uint64 // the log's head when the page was read
	At       string // ?at= as given, "" at the head
	AtSeq    uint64 // the seq the page shows (Seq at the head)

	Checkpoints []*projection.Checkpoint // the picker's list
	Keep        []param                  // the query the picker carries over
	Data        any                      // the page's own data
}

// param is one query parameter.
type param struct{ Key, Value string }

func sortParams(ps []param) {
	slices.SortFunc(ps, func(a, b param) int { return strings.Compare(a.Key+"\x00"+a.Value, b.Key+"\x00"+b.Value) })
}

// URL is the address of a page of the project (rest starts with "/" or is
// empty), at the same point as this page.
func (p *page) URL(rest string) string {
	u := "/p/" + url.PathEscape(p.Project) + rest
	if p.At == "" {
		return u
	}
	sep := "?"
	if strings.Contains(rest, "?") {
		sep = "&"
	}
	return u + sep + "at=" + url.QueryEscape(p.At)
}

// SeqURL is the project's overview at seq.
func (p *page) SeqURL(seq uint64) string {
	return "/p/" + url.PathEscape(p.Project) + "?at=" + strconv.FormatUint(seq, 10)
}

// TaskURL is the address of a task's page.
func (p *page) TaskURL(id string) string { return p.URL("/tasks/" + url.PathEscape(id)) }

// NowURL is this page at the head: its path and query without at.
func (p *page) NowURL() string {
	q := url.Values{}
	for _, kv := range p.Keep {
		q.Add(kv.Key, kv.Value)
	}
	if len(q) == 0 {
		return p.Path
	}
	return p.Path + "?" + q.Encode()
}

// API is the address of an API call about the project.
func (p *page) API(rest string) string {
	return "/api/v1/projects/" + url.PathEscape(p.Project) + rest
}

// Tabs are the project pages in the header, in order.
func (p *page) Tabs() []tab {
	return []tab{{"overview", "Overview", ""}, {"board", "Board", "/board"}, {"graph", "Graph", "/graph"},
		{"log", "History", "/log"}, {"approvals", "Approvals", "/approvals"}, {"checkpoints", "Checkpoints", "/checkpoints"},
		{"diff", "Diff", "/diff"}, {"stats", "Stats", "/stats"}}
}

// tab is one link of the project header.
type tab struct{ Name, Label, Rest string }

//go:embed templates/*.html
var templateFS embed.FS

// templates are the parsed pages: each the layout and the partials plus
// its own file.
type templates struct{ byName map[string]*template.Template }

func mustParseTemplates() *templates {
	base := template.Must(template.New("").Funcs(funcs).ParseFS(templateFS, "templates/_*.html"))
	files, _ := fs.Glob(templateFS, "templates/[a-z]*.html")
	t := &templates{byName: map[string]*template.Template{}}
	for _, f := range files {
		name := strings.TrimSuffix(path.Base(f), ".html")
		t.byName[name] = template.Must(template.Must(base.Clone()).ParseFS(templateFS, f))
	}
	return t
}

func (t *templates) execute(w io.Writer, pg *page) error {
	tpl := t.byName[pg.Name]
	if tpl == nil {
		return fmt.Errorf("no template %q", pg.Name)
	}
	return tpl.ExecuteTemplate(w, "layout", pg)
}

var funcs = template.FuncMap{
	"when":      when,
	"iso":       iso,
	"ago":       ago,
	"pretty":    pretty,
	"percent":   percent,
	"ms":        millis,
	"add":       func(a, b int) int { return a + b },
	"join":      strings.Join,
	"esc":       url.PathEscape,
	"qesc":      url.QueryEscape,
	"head":      headLines,
	"short":     short,
	"rate":      func(r float64) string { return pct(r) },
	"prev":      func(seq uint64) uint64 { return max(seq, 1) - 1 },
	"typeclass": func(typ string) string { return strings.ReplaceAll(typ, ".", "-") },
	"pair":      func(p *page, v any) pagePair { return pagePair{p, v} },
	"triple":    func(a, b string, c any) triple { return triple{a, b, c} },
}

// pagePair passes the page and a value to a partial template.
type pagePair struct {
	Page *page
	V    any
}

// triple passes three values to a partial template.
type triple struct {
	A, B string
	C    any
}

// stdTime is v as a time.Time: a time.Time, a *time.Time or a
// projection.Time; the zero time for anything else or nil.
func stdTime(v any) time.Time {
	switch t := v.(type) {
	case time.Time:
		return t
	case *time.Time:
		if t != nil {
			return *t
		}
	case projection.Time:
		if t != 0 {
			return t.Std()
		}
	}
	return time.Time{}
}

// when writes a time for people, in UTC; "" for none.
func when(v any) string {
	t := stdTime(v)
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

// iso writes a time for a datetime attribute.
func iso(v any) string {
	t := stdTime(v)
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// ago writes how long before now a time was, roughly ("3m", "2h", "5d").
func ago(v any) string {
	t := stdTime(v)
	if t.IsZero() {
		return ""
	}
	d := time.Since(t)
	switch {
	case d < 0:
		return "now"
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + "m"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d.Hours())) + "h"
	}
	return strconv.Itoa(int(d.Hours()/24)) + "d"
}

// pretty indents JSON text; text that is not JSON comes back as it is.
// (The template escapes it: json.Indent keeps strings as stored.)
func pretty(v any) string {
	var b []byte
	switch s := v.(type) {
	case string:
		b = []byte(s)
	case projection.JSON:
		b = []byte(s)
	case []byte:
		b = s
	case json.RawMessage:
		b = s
	default:
		return fmt.Sprint(v)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return string(b)
	}
	return out.String()
}

// percent is part of whole as a whole percent, 0 for no whole.
func percent(part, whole int) int {
	if whole <= 0 {
		return 0
	}
	return part * 100 / whole
}

// millis writes milliseconds for people: "850 ms", "12.3 s".
func millis(ms float64) string {
	if ms < 1000 {
		return strconv.FormatFloat(ms, 'f', -1, 64) + " ms"
	}
	return strconv.FormatFloat(ms/1000, 'f', 1, 64) + " s"
}

// headLines is the first n lines of s.
func headLines(n int, s string) string {
	lines := strings.SplitAfterN(s, "\n", n+1)
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "") + "…"
}

// short is s cut to n runes with an ellipsis.
func short(n int, s string) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// errorData is the error page's.
type errorData struct {
	Status  int
	Message string
	Path    string
}
