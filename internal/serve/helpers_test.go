package serve

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow"
)

const (
	testAddr  = "127.0.0.1:7070"
	testToken = "test-token-0123456789"
)

// mustFile makes a flow file with project web: T-1 (done), T-2 depending
// on it, T-3, approval A-1 on T-2, checkpoint C-1 after T-1 was added.
func mustFile(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "flow.db")
	eng := mustOpen(t, path, true)
	defer eng.Close()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(eng.CreateProject(flow.NewProject{Name: "web", Description: "the <b>site</b>"}))
	must(eng.AddTask(flow.NewTask{Project: "web", Title: "one"}))
	must(eng.CreateCheckpoint(flow.NewCheckpoint{Project: "web", Label: "first"}))
	must(eng.AddTask(flow.NewTask{Project: "web", Title: "two", Deps: []string{"T-1"}}))
	must(eng.AddTask(flow.NewTask{Project: "web", Title: "three", Tags: []string{"x"}}))
	must(eng.MoveTask(flow.Move{Project: "web", ID: "T-1", To: "doing"}))
	must(eng.MoveTask(flow.Move{Project: "web", ID: "T-1", To: "done"}))
	must(eng.As("agent", "").RequestApproval(flow.NewApproval{Project: "web", Task: "T-2", Message: "ship it?"})) // the serve actor, tester, may decide it
	return path
}

// mustOpen opens the file at path (create: make it) as actor tester.
func mustOpen(t testing.TB, path string, create bool) *flow.Engine {
	t.Helper()
	eng, err := flow.Open(path, flow.Options{Create: create, Actor: "tester"})
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

// testConfig is a loopback server on the file with the test token.
func testConfig(path string) Config {
	return Config{Path: path, Addr: testAddr, Token: testToken, Actor: "tester", Project: "web", OneTime: "one-time-code"}
}

func mustServer(t testing.TB, cfg Config) *server {
	t.Helper()
	s, err := newServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// do sends a request to h, as a browser at testAddr would (Host set),
// with headers given as "Name: value".
func do(h http.Handler, method, target, body string, headers ...string) *httptest.ResponseRecorder {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, r)
	req.Host = testAddr
	for _, hv := range headers {
		k, v, _ := strings.Cut(hv, ": ")
		req.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

const bearer = "Authorization: Bearer " + testToken

// errCode is the code of a JSON error answer ("" if it is none).
func errCode(t testing.TB, w *httptest.ResponseRecorder) string {
	t.Helper()
	var b struct {
		Error errorBody `json:"error"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &b); err != nil {
		t.Fatalf("answer %d is not JSON: %v: %s", w.Code, err, w.Body)
	}
	return string(b.Error.Code)
}

// wantStatus fails unless w has the status (and, for an error, the code).
func wantStatus(t testing.TB, w *httptest.ResponseRecorder, status int, code string) {
	t.Helper()
	if w.Code != status {
		t.Fatalf("status %d, want %d: %s", w.Code, status, w.Body)
	}
	if code != "" {
		if got := errCode(t, w); got != code {
			t.Fatalf("code %q, want %q: %s", got, code, w.Body)
		}
	}
}

func httptestRequest(method, target, host string) *http.Request {
	req := httptest.NewRequest(method, target, nil)
	req.Host = host
	return req
}

func serveRecorded(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}
