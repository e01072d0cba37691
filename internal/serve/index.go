package serve

import (
	"bytes"
	"html/template"
	"net/http"

	"github.com/flowctl/flowctl/projection"
)

// indexPage is the page at / when no UI is given: the projects and the
// API's endpoints. html/template escapes every name and description.
var indexPage = template.Must(template.New("index").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>flowctl</title></head>
<body><main>
<h1>flowctl</h1>
{{if .Default}}<p>Default project: <a href="/api/v1/projects/{{.Default}}/status">{{.Default}}</a></p>{{end}}
<h2>Projects</h2>
<ul>{{range .Projects}}
<li><a href="/api/v1/projects/{{.Name}}/status">{{.Name}}</a>{{if .Description}}: {{.Description}}{{end}}</li>{{else}}
<li>none</li>{{end}}
</ul>
<h2>API</h2>
<p>The HTTP/JSON API is described in <a href="/api/v1/openapi.json">/api/v1/openapi.json</a>.</p>
<ul>{{range .Routes}}
<li><code>{{.}}</code></li>{{end}}
</ul>
</main></body></html>
`))

// index serves the index page at /, and 404 elsewhere.
func (s *server) index(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		s.fail(w, notFound("no page %s", r.URL.Path))
		return
	}
	var all []*projection.Project
	err := s.with(r, true, wholeFile, func(c *call) error {
		var err error
		all, err = c.eng.Projects()
		return err
	})
	if err != nil {
		s.fail(w, err)
		return
	}
	var routes []string
	for _, rt := range s.routes() {
		routes = append(routes, rt.method+" "+rt.path)
	}
	var buf bytes.Buffer
	data := struct {
		Default  string
		Projects []*projection.Project
		Routes   []string
	}{s.cfg.Project, all, routes}
	if err := indexPage.Execute(&buf, data); err != nil {
		s.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(buf.Bytes())
}
