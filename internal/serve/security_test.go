package serve

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/flowctl/flowctl/flow"
)

func TestSecure_Headers(t *testing.T) {
	h := mustServer(t, testConfig(mustFile(t))).handler()
	for _, target := range []string{"/", "/api/v1/projects", "/api/v1/nothing", "/api/v1/projects/web/tasks/T-9"} {
		w := do(h, "GET", target, "")
		want := map[string]string{"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
			"Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY"}
		for k, v := range want {
			if got := w.Header().Get(k); got != v {
				t.Errorf("GET %s: %s = %q, want %q", target, k, got, v)
			}
		}
	}
	if strings.Contains(CSP, "unsafe-inline") || !strings.Contains(CSP, "default-src 'self'") {
		t.Errorf("CSP %q is not strict", CSP)
	}
}

func TestSecure_Host(t *testing.T) {
	h := mustServer(t, testConfig(mustFile(t))).handler()
	for host, status := range map[string]int{
		"127.0.0.1:7070": 200, "localhost:7070": 200, "[::1]:7070": 200, "127.0.0.2:7070": 200,
		"evil.example:7070": http.StatusMisdirectedRequest, "evil.example": http.StatusMisdirectedRequest,
		"127.0.0.1:7071": http.StatusMisdirectedRequest, "localhost.evil.example:7070": http.StatusMisdirectedRequest,
	} {
		t.Run(host, func(t *testing.T) {
			req := httptestRequest("GET", "/api/v1/projects", host)
			w := serveRecorded(h, req)
			if w.Code != status {
				t.Fatalf("Host %s: status %d, want %d: %s", host, w.Code, status, w.Body)
			}
			if status != 200 && errCode(t, w) != "misdirected" {
				t.Fatalf("Host %s: %s", host, w.Body)
			}
		})
	}
}

func TestSecure_Origin(t *testing.T) {
	h := mustServer(t, testConfig(mustFile(t))).handler()
	t.Run("ReadFromOtherOrigin", func(t *testing.T) {
		wantStatus(t, do(h, "GET", "/api/v1/projects", "", "Origin: http://evil.example"), 403, "forbidden")
	})
	t.Run("WriteFromOtherOrigin", func(t *testing.T) {
		w := do(h, "POST", "/api/v1/projects/web/tasks/T-3/notes", `{"text":"x"}`, bearer, "Origin: http://evil.example")
		wantStatus(t, w, 403, "forbidden")
	})
	t.Run("NullOrigin", func(t *testing.T) {
		w := do(h, "POST", "/api/v1/projects/web/tasks/T-3/notes", `{"text":"x"}`, bearer, "Origin: null")
		wantStatus(t, w, 403, "forbidden")
	})
	t.Run("SameOrigin", func(t *testing.T) {
		w := do(h, "POST", "/api/v1/projects/web/tasks/T-3/notes", `{"text":"x"}`, bearer, "Origin: http://"+testAddr)
		wantStatus(t, w, 200, "")
	})
}

func TestWrite_Auth(t *testing.T) {
	h := mustServer(t, testConfig(mustFile(t))).handler()
	const url, body = "/api/v1/projects/web/tasks/T-3/notes", `{"text":"hello"}`
	cookie := "Cookie: " + CookieName + "=" + testToken
	origin := "Origin: http://" + testAddr
	cases := []struct {
		name    string
		headers []string
		status  int
		code    string
	}{
		{"NoToken", nil, 401, "unauthorized"},
		{"WrongBearer", []string{"Authorization: Bearer nope"}, 401, "unauthorized"},
		{"NotBearer", []string{"Authorization: Basic " + testToken}, 401, "unauthorized"},
		{"Bearer", []string{bearer}, 200, ""},
		{"WrongCookie", []string{"Cookie: " + CookieName + "=nope", CSRFHeader + ": 1", origin}, 401, "unauthorized"},
		{"CookieWithoutCSRF", []string{cookie, origin}, 403, "forbidden"},
		{"CookieWithoutOrigin", []string{cookie, CSRFHeader + ": 1"}, 403, "forbidden"},
		{"CookieCSRFOrigin", []string{cookie, CSRFHeader + ": 1", origin}, 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantStatus(t, do(h, "POST", url, body, c.headers...), c.status, c.code)
		})
	}
	t.Run("NoTokenConfigured", func(t *testing.T) {
		cfg := testConfig(mustFile(t))
		cfg.Token = ""
		h := mustServer(t, cfg).handler()
		wantStatus(t, do(h, "POST", url, body, bearer), 401, "unauthorized")
	})
}

func TestAuth_OneTime(t *testing.T) {
	h := mustServer(t, testConfig(mustFile(t))).handler()
	wantStatus(t, do(h, "GET", "/auth?t=wrong", ""), 403, "forbidden")
	w := do(h, "GET", "/auth?t=one-time-code", "")
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/" {
		t.Fatalf("first visit: %d %v", w.Code, w.Header())
	}
	c := w.Result().Cookies()
	if len(c) != 1 || c[0].Name != CookieName || c[0].Value != testToken || !c[0].HttpOnly ||
		c[0].SameSite != http.SameSiteStrictMode || c[0].Path != "/" {
		t.Fatalf("cookie %+v", c)
	}
	wantStatus(t, do(h, "GET", "/auth?t=one-time-code", ""), 403, "forbidden") // spent
}

func TestWrite_ReadOnly(t *testing.T) {
	cfg := testConfig(mustFile(t))
	cfg.ReadOnly = true
	h := mustServer(t, cfg).handler()
	wantStatus(t, do(h, "POST", "/api/v1/projects/web/tasks/T-3/move", `{"to":"doing"}`, bearer), 403, "forbidden")
	wantStatus(t, do(h, "POST", "/api/v1/projects/web/approvals/A-1/grant", `{}`, bearer), 403, "forbidden")
	// A dry run writes nothing: allowed, and without the token.
	wantStatus(t, do(h, "POST", "/api/v1/projects/web/rollback", `{"to":"C-1","dry_run":true}`), 200, "")
	wantStatus(t, do(h, "GET", "/api/v1/projects/web/status", ""), 200, "")
}

func TestNew_NotLoopback(t *testing.T) {
	path := mustFile(t)
	_, err := New(Config{Path: path, Addr: "0.0.0.0:7070"})
	if !errors.Is(err, flow.ErrInvalid) {
		t.Fatalf("no token on 0.0.0.0: %v, want ErrInvalid", err)
	}
	cfg := testConfig(path)
	cfg.Addr = "192.0.2.7:7070"
	h := mustServer(t, cfg).handler()
	req := httptestRequest("GET", "/api/v1/projects", "192.0.2.7:7070")
	wantStatus(t, serveRecorded(h, req), 401, "unauthorized")
	req = httptestRequest("GET", "/api/v1/projects", "192.0.2.7:7070")
	req.Header.Set("Authorization", "Bearer "+testToken)
	wantStatus(t, serveRecorded(h, req), 200, "")
	req = httptestRequest("GET", "/api/v1/projects", "127.0.0.1:7070")
	req.Header.Set("Authorization", "Bearer "+testToken)
	wantStatus(t, serveRecorded(h, req), http.StatusMisdirectedRequest, "misdirected")
	for addr, want := range map[string]bool{"127.0.0.1:1": true, "localhost:1": true, "[::1]:1": true,
		"0.0.0.0:1": false, ":1": false, "192.0.2.7:1": false, "example.com:1": false} {
		if IsLoopback(addr) != want {
			t.Errorf("IsLoopback(%s) = %v", addr, !want)
		}
	}
}

func TestIndex_Escapes(t *testing.T) {
	path := mustFile(t)
	eng := mustOpen(t, path, false)
	_, err := eng.CreateProject(flow.NewProject{Name: "evil", Description: `<script>alert("x")</script><img src=x onerror=y>`})
	eng.Close()
	if err != nil {
		t.Fatal(err)
	}
	h := mustServer(t, testConfig(path)).handler()
	w := do(h, "GET", "/", "")
	wantStatus(t, w, 200, "")
	body := w.Body.String()
	for _, bad := range []string{"<script>", "<img", "<b>site"} {
		if strings.Contains(body, bad) {
			t.Errorf("the index page holds %q unescaped:\n%s", bad, body)
		}
	}
	for _, good := range []string{"&lt;script&gt;", "&lt;b&gt;site", "/api/v1/openapi.json"} {
		if !strings.Contains(body, good) {
			t.Errorf("the index page lacks %q:\n%s", good, body)
		}
	}
	if ct := w.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	wantStatus(t, do(h, "GET", "/elsewhere", ""), 404, "not_found")
}

func TestUI_Handler(t *testing.T) {
	cfg := testConfig(mustFile(t))
	cfg.UI = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ui " + r.URL.Path)) })
	h := mustServer(t, cfg).handler()
	if w := do(h, "GET", "/p/web/board", ""); w.Body.String() != "ui /p/web/board" || w.Header().Get("Content-Security-Policy") != CSP {
		t.Fatalf("the UI did not get /p/web/board inside the checks: %q %v", w.Body, w.Header())
	}
	wantStatus(t, do(h, "GET", "/p/web/board", "", "Origin: http://evil.example"), 403, "forbidden")
	wantStatus(t, do(h, "GET", "/api/v1/projects", ""), 200, "")
}
