package browsertest

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	_ "github.com/flowctl/flowctl/eventlog"
	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/internal/serve"
	"github.com/flowctl/flowctl/internal/webui"
)

// waitTimeout bounds every wait for a condition in the page: long enough
// for a loaded 2-core machine running the race detector.
const waitTimeout = 20 * time.Second

const (
	testToken   = "browser-test-token-0123456789"
	testOneTime = "browser-one-time-code"
)

// site is the whole dashboard, as flowctl serve builds it, on a loopback
// listener over a flow file of the test's own.
type site struct {
	t    *testing.T
	path string // the flow file
	url  string // http://127.0.0.1:PORT
}

// newSite serves the flow file at path until the test ends.
func newSite(t *testing.T, path string) *site {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	opts := flow.Options{LockTimeout: 5 * time.Second}
	h, err := serve.New(serve.Config{Path: path, Options: opts, Addr: srv.Listener.Addr().String(), Token: testToken,
		Actor: "reviewer", Project: "web", OneTime: testOneTime,
		UI: webui.New(webui.Config{Path: path, Options: opts})})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = h
	srv.Start()
	t.Cleanup(func() {
		srv.CloseClientConnections() // the pages' event streams
		srv.Close()
	})
	return &site{t: t, path: path, url: srv.URL}
}

// flowctl runs the flowctl binary on the site's file, as another process
// (an agent, a terminal) would, and returns its stdout.
func (s *site) flowctl(args ...string) string {
	s.t.Helper()
	cmd := exec.Command(flowctlBin, append([]string{"--db", s.path, "--project", "web"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "FLOW_ACTOR=agent"}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		s.t.Fatalf("flowctl %s: %v: %s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

// engine opens the site's file read-only, as a check of what a page did.
func (s *site) engine() *flow.Engine {
	s.t.Helper()
	e, err := flow.Open(s.path, flow.Options{ReadOnly: true, LockTimeout: 5 * time.Second})
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { e.Close() })
	return e
}

// tab is one browser tab of a test, in a browser context of its own, and
// what its pages wrote to the console.
type tab struct {
	t   *testing.T
	ctx context.Context

	mu       sync.Mutex
	messages []chromedp.ConsoleMessage
}

// newTab opens a tab. When the test ends it fails the test on any console
// error or exception the tab's pages had, and on failure saves a
// screenshot of the page.
func newTab(t *testing.T) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(needBrowser(t), chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	tb := &tab{t: t, ctx: ctx}
	messages := chromedp.Console(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			tb.mu.Lock()
			tb.messages = append(tb.messages, m)
			tb.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		if t.Failed() {
			tb.screenshot()
		}
		tb.checkConsole()
		cancel()
		<-done
	})
	return tb
}

// consoleErrors are the messages that fail a test: errors (the console
// API's and the browser's: a failed load, a CSP violation) and uncaught
// exceptions.
func (tb *tab) consoleErrors() []string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	var out []string
	for _, m := range tb.messages {
		if m.Type == chromedp.ConsoleError || m.IsException() {
			out = append(out, m.String()+" ("+m.URL+")")
		}
	}
	return out
}

// forgetConsole drops the messages so far: those a test expects.
func (tb *tab) forgetConsole() {
	tb.mu.Lock()
	tb.messages = nil
	tb.mu.Unlock()
}

func (tb *tab) checkConsole() {
	tb.t.Helper()
	for _, m := range tb.consoleErrors() {
		tb.t.Errorf("console: %s", m)
	}
}

// screenshot saves the page as PNG in $FLOWCTL_ARTIFACTS, or in a
// directory of its own under the system's temporary one (kept: the test's
// own is removed), and logs where.
func (tb *tab) screenshot() {
	ctx, cancel := context.WithTimeout(tb.ctx, waitTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		tb.t.Logf("no screenshot: %v", err)
		return
	}
	dir := os.Getenv("FLOWCTL_ARTIFACTS")
	if dir == "" {
		if dir, err = os.MkdirTemp("", "flowctl-browsertest-"); err != nil {
			tb.t.Logf("no screenshot: %v", err)
			return
		}
	}
	name := filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(tb.t.Name())+".png")
	if err = os.MkdirAll(dir, 0o755); err == nil {
		err = os.WriteFile(name, png, 0o644)
	}
	if err != nil {
		tb.t.Logf("no screenshot: %v", err)
		return
	}
	tb.t.Logf("screenshot of the page: %s", name)
}

// do runs actions in the tab, within waitTimeout.
func (tb *tab) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, waitTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		tb.t.Fatalf("%s: %v", what, err)
	}
}

// open loads a page and waits for its <main>.
func (tb *tab) open(url string) {
	tb.t.Helper()
	tb.do("open "+url, chromedp.Navigate(url), chromedp.WaitReady(chromedp.ID("main")))
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](tb *tab, expr string) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, waitTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		tb.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// waitFor waits until a JavaScript expression is truthy in the page, and
// fails the test after waitTimeout saying what it waited for and what the
// page then showed. A navigation while it waits (a form, a link) destroys
// the page's JavaScript context: the wait goes on in the next page.
func (tb *tab) waitFor(what, expr string) {
	tb.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	var err error
	for left := waitTimeout; left > 0; left = time.Until(deadline) {
		ctx, cancel := context.WithTimeout(tb.ctx, left+5*time.Second)
		_, err = chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr,
			chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(left)))
		cancel()
		if err == nil {
			return
		}
		if tb.ctx.Err() != nil {
			break
		}
		time.Sleep(50 * time.Millisecond) // the next page's context
	}
	ctx, cancel := context.WithTimeout(tb.ctx, 5*time.Second)
	defer cancel()
	main, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector('main')||document.body).innerText.slice(0, 2000)`))
	tb.t.Fatalf("waiting for %s (%s): %v\nthe page shows:\n%s", what, expr, err, main)
}
