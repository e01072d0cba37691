package serve

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/flowctl/flowctl/flow"
)

// Config is what the server needs from the program that runs it.
type Config struct {
	Path    string       // the flow file
	Options flow.Options // how to open it (lock timeout, session, warnings); ReadOnly and Actor are set per request
	// Addr is the address the server listens on (host:port, the port
	// resolved): the Host header of every request must name it.
	Addr string
	// Token authorises writes (every request, on an address that is not
	// loopback). Empty: no write is authorised.
	Token    string
	ReadOnly bool   // refuse every write (403)
	Project  string // the default project, for the index page
	Actor    string // who writes, and whose claims status and ready answer for
	// UI serves every path outside /api/v1 and /auth; nil is a minimal
	// index page listing the API.
	UI http.Handler
	// OneTime is the code /auth?t=ONETIME accepts once to set the token's
	// cookie ("" accepts none).
	OneTime string
	// Classify gives an error's code, its message as one line and its
	// hint, as the CLI prints them; nil is flow.ErrorCode and the error's
	// text.
	Classify func(err error) (code flow.Code, message, hint string)
}

// Timing of the event stream.
const (
	// KeepAlive is how often an idle stream sends a comment, so that
	// proxies and browsers keep it open.
	KeepAlive = 15 * time.Second
	// RetryMS is the reconnection delay the stream asks browsers for.
	RetryMS = 1000
	// StreamInterval is how often a stream polls the file (flow.Follow's
	// interval): an event reaches a page within about that, half of it
	// on average. Each poll opens the file read-only for a moment.
	StreamInterval = 100 * time.Millisecond
)

// server is one New: the config, the read cache, and what the address
// allows.
type server struct {
	cfg      Config
	cache    *flow.Cache
	host     hostRule
	loopback bool

	keepAlive time.Duration
	interval  time.Duration // flow.Follow's poll interval

	mu      sync.Mutex
	oneTime string // cleared when used
}

// New builds the whole site: the API under /api/v1, /auth, and cfg.UI (or
// the index page) for every other path, inside the security checks.
// Errors: ErrInvalid for an address that does not parse, or one that is not
// loopback without a token.
func New(cfg Config) (http.Handler, error) {
	s, err := newServer(cfg)
	if err != nil {
		return nil, err
	}
	return s.handler(), nil
}

func newServer(cfg Config) (*server, error) {
	rule, loopback, err := parseAddr(cfg.Addr)
	if err != nil {
		return nil, err
	}
	if !loopback && cfg.Token == "" {
		return nil, fmt.Errorf("%w: %s is not a loopback address: serving it needs a token", flow.ErrInvalid, cfg.Addr)
	}
	return &server{cfg: cfg, cache: flow.NewCache(flow.DefaultCacheSize), host: rule, loopback: loopback,
		keepAlive: KeepAlive, interval: StreamInterval, oneTime: cfg.OneTime}, nil
}

// IsLoopback reports whether addr (host:port) listens only on this
// machine: localhost, 127.0.0.0/8 or ::1.
func IsLoopback(addr string) bool {
	_, loopback, err := parseAddr(addr)
	return err == nil && loopback
}

// hostRule is which Host headers name the server: on loopback any
// loopback name with the port, on a named host that host with the port,
// and on an unspecified address (0.0.0.0, ::) any host, the token
// guarding every request there.
type hostRule struct {
	port     string
	names    []string // lower case; nil: any
	loopback bool
}

func parseAddr(addr string) (hostRule, bool, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return hostRule{}, false, fmt.Errorf("%w: address %q: %v", flow.ErrInvalid, addr, err)
	}
	host = strings.ToLower(host)
	ip := net.ParseIP(host)
	switch {
	case host == "localhost" || ip != nil && ip.IsLoopback():
		return hostRule{port: port, loopback: true}, true, nil
	case host == "" || ip != nil && ip.IsUnspecified():
		return hostRule{port: port}, false, nil
	}
	return hostRule{port: port, names: []string{host}}, false, nil
}

// allows reports whether a request's Host header names the server.
func (h hostRule) allows(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, "80"
	}
	if port != h.port {
		return false
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if h.loopback {
		ip := net.ParseIP(host)
		return host == "localhost" || ip != nil && ip.IsLoopback()
	}
	if h.names == nil {
		return true
	}
	for _, n := range h.names {
		if host == n {
			return true
		}
	}
	return false
}

// route is one API endpoint: the OpenAPI document lists exactly these.
type route struct {
	method, path string
	write        bool
	h            http.HandlerFunc
}

// routes are the API's endpoints, {p} a project and {id} an entity's id.
func (s *server) routes() []route {
	return []route{
		{"GET", "/api/v1/openapi.json", false, s.openAPI},
		{"GET", "/api/v1/events", false, s.events},
		{"GET", "/api/v1/projects", false, s.projects},
		{"GET", "/api/v1/projects/{p}/status", false, s.status},
		{"GET", "/api/v1/projects/{p}/tasks", false, s.tasks},
		{"GET", "/api/v1/projects/{p}/tasks/{id}", false, s.task},
		{"GET", "/api/v1/projects/{p}/ready", false, s.ready},
		{"GET", "/api/v1/projects/{p}/log", false, s.log},
		{"GET", "/api/v1/projects/{p}/diff", false, s.diff},
		{"GET", "/api/v1/projects/{p}/approvals", false, s.approvals},
		{"GET", "/api/v1/projects/{p}/checkpoints", false, s.checkpoints},
		{"GET", "/api/v1/projects/{p}/graph", false, s.graph},
		{"POST", "/api/v1/projects/{p}/approvals/{id}/grant", true, s.decide(true)},
		{"POST", "/api/v1/projects/{p}/approvals/{id}/deny", true, s.decide(false)},
		{"POST", "/api/v1/projects/{p}/tasks/{id}/move", true, s.move},
		{"POST", "/api/v1/projects/{p}/tasks/{id}/notes", true, s.note},
		{"POST", "/api/v1/projects/{p}/rollback", true, s.rollback},
	}
}

// handler is the site: the routes, /auth and the UI, inside the checks.
func (s *server) handler() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range s.routes() {
		mux.HandleFunc(rt.method+" "+rt.path, rt.h)
	}
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, notFound("no API endpoint %s %s (see /api/v1/openapi.json)", r.Method, r.URL.Path))
	})
	mux.HandleFunc("GET /auth", s.auth)
	ui := s.cfg.UI
	if ui == nil {
		ui = http.HandlerFunc(s.index)
	}
	mux.Handle("/", ui)
	return s.secure(mux)
}
