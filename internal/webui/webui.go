package webui

import (
	"bytes"
	"embed"
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"

	_ "github.com/flowctl/flowctl/eventlog" // the bbolt backend flow.Open finds by the path
	"github.com/flowctl/flowctl/flow"
	_ "github.com/flowctl/flowctl/pgstore" // the PostgreSQL backend, for a postgres:// URL
)

// Config is what the pages need: the flow file, how to open it, and
// whether to show write controls.
type Config struct {
	Path     string       // the flow file (or store URL), as flow.Open takes it
	Options  flow.Options // ReadOnly and Create are forced: pages only read
	ReadOnly bool         // hide every write control (serve --read-only)
}

//go:embed assets
var assetFS embed.FS

// ui is the handler's shared state: the config and the parsed templates.
type ui struct {
	cfg   Config
	pages *templates
}

// New returns the handler of the pages and of /assets/. It touches no
// file: each request opens the flow file and closes it before answering.
func New(cfg Config) http.Handler {
	cfg.Options.ReadOnly, cfg.Options.Create = true, false
	if cfg.Options.Cache == nil {
		cfg.Options.Cache = flow.NewCache(flow.DefaultCacheSize)
	}
	u := &ui{cfg: cfg, pages: mustParseTemplates()}
	mux := http.NewServeMux()
	assets, _ := fs.Sub(assetFS, "assets")
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", assetServer(http.FileServerFS(assets))))
	mux.HandleFunc("GET /assets/graph.css", graphCSS)
	mux.HandleFunc("GET /{$}", u.serve(false, u.projectsPage))
	project := map[string]builder{
		"":             u.overviewPage,
		"/board":       u.boardPage,
		"/tasks/{id}":  u.taskPage,
		"/log":         u.logPage,
		"/checkpoints": u.checkpointsPage,
		"/approvals":   u.approvalsPage,
		"/stats":       u.statsPage,
		"/diff":        u.diffPage,
		"/graph":       u.graphPage,
	}
	for path, b := range project {
		mux.HandleFunc("GET /p/{p}"+path, u.serve(true, b))
	}
	mux.HandleFunc("GET /p/{p}/{$}", u.serve(true, u.overviewPage))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		u.fail(w, r, &page{}, httpError{http.StatusNotFound, "no page at " + r.URL.Path})
	})
	return mux
}

// assetServer adds the assets' cache headers: short, since an upgraded
// binary serves new ones under the same names.
func assetServer(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}

// builder fills a page from one request's engine.
type builder func(rq *request) error

// request is one page request: the open engine (a view At the point on
// ?at=), the project and the page being built.
type request struct {
	r       *http.Request
	base    *flow.Engine // the engine at the head
	eng     *flow.Engine // base, or its view at the point
	project string
	page    *page
}

// httpError is an error the page shows with its status.
type httpError struct {
	status int
	msg    string
}

func (e httpError) Error() string { return e.msg }

// serve opens the engine for one request, checks the project and the
// point, runs b, closes the engine and renders the page.
func (u *ui) serve(projectPage bool, b builder) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		pg := &page{ReadOnly: u.cfg.ReadOnly, Path: r.URL.Path}
		if err := u.build(r, projectPage, b, pg); err != nil {
			u.fail(w, r, pg, err)
			return
		}
		u.render(w, http.StatusOK, pg)
	}
}

func (u *ui) build(r *http.Request, projectPage bool, b builder, pg *page) (err error) {
	eng, err := flow.Open(u.cfg.Path, u.cfg.Options)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := eng.Close(); err == nil {
			err = cerr
		}
	}()
	rq := &request{r: r, base: eng, eng: eng, page: pg}
	if projectPage {
		if err := rq.openProject(r.PathValue("p")); err != nil {
			return err
		}
	}
	return b(rq)
}

// openProject checks the project, reads what the header shows (head,
// checkpoints), and on ?at= moves the request's engine to the point.
func (rq *request) openProject(name string) error {
	if _, err := rq.base.Project(name); err != nil {
		return err
	}
	pg := rq.page
	rq.project, pg.Project = name, name
	err := rq.base.Read(func(r *flow.Reader) error {
		pg.Seq = r.Head()
		return nil
	})
	if err != nil {
		return err
	}
	if pg.Checkpoints, err = rq.base.Checkpoints(name); err != nil {
		return err
	}
	pg.Keep = keepQuery(rq.r.URL.Query())
	at := rq.r.URL.Query().Get("at")
	if at == "" {
		pg.Live = true
		pg.AtSeq = pg.Seq
		return nil
	}
	p, err := flow.ParsePoint(at)
	if err != nil {
		return err
	}
	if err := rq.base.Begun(name, p); err != nil {
		return err
	}
	rq.eng = rq.base.At(name, p)
	pg.At = at
	return rq.eng.Read(func(r *flow.Reader) error {
		pg.AtSeq = r.Head()
		return nil
	})
}

// keepQuery is the query without at: what the point picker carries over.
func keepQuery(q url.Values) []param {
	var out []param
	for k, vs := range q {
		if k == "at" {
			continue
		}
		for _, v := range vs {
			out = append(out, param{k, v})
		}
	}
	sortParams(out)
	return out
}

// fail renders the error page with the status err maps to.
func (u *ui) fail(w http.ResponseWriter, r *http.Request, pg *page, err error) {
	status, msg := statusOf(err)
	pg.Name, pg.Title, pg.Live = "error", http.StatusText(status), false
	pg.Data = errorData{Status: status, Message: msg, Path: r.URL.Path}
	u.render(w, status, pg)
}

// statusOf maps an error to an HTTP status, by the engine's one table.
func statusOf(err error) (int, string) {
	var he httpError
	if errors.As(err, &he) {
		return he.status, he.msg
	}
	switch flow.ErrorCode(err) {
	case flow.CodeNotFound:
		return http.StatusNotFound, err.Error()
	case flow.CodeInvalid:
		return http.StatusBadRequest, err.Error()
	case flow.CodeBusy:
		return http.StatusServiceUnavailable, err.Error()
	case flow.CodeConflict:
		return http.StatusConflict, err.Error()
	}
	return http.StatusInternalServerError, err.Error()
}

// render writes the page, or a plain 500 if its template fails (into a
// buffer first, so that a failure never leaves half a page).
func (u *ui) render(w http.ResponseWriter, status int, pg *page) {
	var buf bytes.Buffer
	if err := u.pages.execute(&buf, pg); err != nil {
		http.Error(w, "flowctl: page "+pg.Name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}
