package serve

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// The names of the auth protocol.
const (
	// CookieName is the cookie that /auth?t=ONETIME sets to the token.
	CookieName = "flowctl_token"
	// CSRFHeader must be "1" on a write authorised by the cookie: a
	// cross-site form cannot set a header.
	CSRFHeader = "X-Flowctl-CSRF"
	// AuthPath is the one-time login URL's path.
	AuthPath = "/auth"
)

// CSP is the Content-Security-Policy of every response: everything from
// the server itself, no inline script or style, no framing.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// NewToken returns a random token (32 bytes, URL-safe base64), for a
// token or a one-time code.
func NewToken() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// secure wraps the site: the headers of every response, then the Host
// check, the Origin check, and on an address that is not loopback the
// token for every request.
func (s *server) secure(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		if err := s.checkRequest(r); err != nil {
			s.fail(w, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkRequest checks what every request must pass.
func (s *server) checkRequest(r *http.Request) error {
	if !s.host.allows(r.Host) {
		return &httpError{status: http.StatusMisdirectedRequest, code: codeMisdirected,
			err:  fmt.Errorf("the Host %q does not name this server (%s)", r.Host, s.cfg.Addr),
			hint: "open the URL flowctl serve printed"}
	}
	if err := checkOrigin(r); err != nil {
		return err
	}
	if !s.loopback && r.URL.Path != AuthPath {
		return s.authorised(r)
	}
	return nil
}

// checkOrigin refuses a request a browser sent from another origin: its
// Origin, when there is one, must be this very host.
func checkOrigin(r *http.Request) error {
	o := r.Header.Get("Origin")
	if o == "" {
		return nil
	}
	u, err := url.Parse(o)
	if err != nil || u.Host != r.Host || (u.Scheme != "http" && u.Scheme != "https") {
		return forbidden("the API answers pages of its own origin only", "the Origin %q is not this server's", o)
	}
	return nil
}

// writeAllowed checks a write: the server is not read-only, and the
// request carries the token (by header, or by cookie with the CSRF header
// and an Origin). A dry run needs neither.
func (s *server) writeAllowed(r *http.Request, in any) error {
	if isDryRun(in) {
		return nil
	}
	if s.cfg.ReadOnly {
		return forbidden("restart flowctl serve without --read-only to change anything", "the server is read-only")
	}
	return s.authorised(r)
}

// authorised checks the token: the Authorization header, or the cookie,
// which also needs the CSRF header and an Origin on a write.
func (s *server) authorised(r *http.Request) error {
	if s.cfg.Token == "" {
		return unauthorized("this server has no token: it accepts no write")
	}
	if auth := r.Header.Get("Authorization"); auth != "" {
		tok, ok := strings.CutPrefix(auth, "Bearer ")
		if !ok || !s.tokenIs(tok) {
			return unauthorized("the Authorization header does not hold the token")
		}
		return nil
	}
	c, err := r.Cookie(CookieName)
	if errors.Is(err, http.ErrNoCookie) {
		return unauthorized("no token: this needs the token")
	}
	if err != nil || !s.tokenIs(c.Value) {
		return unauthorized("the %s cookie does not hold the token", CookieName)
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return nil
	}
	if r.Header.Get(CSRFHeader) != "1" {
		return forbidden("a page sends the header "+CSRFHeader+": 1 with its writes", "a write by cookie needs the header %s: 1", CSRFHeader)
	}
	if r.Header.Get("Origin") == "" {
		return forbidden("a browser sends Origin with a write; other clients use Authorization: Bearer", "a write by cookie needs an Origin")
	}
	return nil
}

func (s *server) tokenIs(tok string) bool {
	return subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.Token)) == 1
}

// GET /auth?t=ONETIME: the one-time URL flowctl serve prints. The first
// visit with the code sets the token's cookie and redirects to /; the
// code is then spent.
func (s *server) auth(w http.ResponseWriter, r *http.Request) {
	code := r.URL.Query().Get("t")
	s.mu.Lock()
	ok := s.oneTime != "" && s.cfg.Token != "" && subtle.ConstantTimeCompare([]byte(code), []byte(s.oneTime)) == 1
	if ok {
		s.oneTime = ""
	}
	s.mu.Unlock()
	if !ok {
		s.fail(w, forbidden("restart flowctl serve for a new one-time URL, or send Authorization: Bearer TOKEN",
			"the one-time code is wrong or was used already"))
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: s.cfg.Token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
