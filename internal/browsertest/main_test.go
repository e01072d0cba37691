// Package browsertest drives the real dashboard (serve.New with the
// webui pages, on a loopback listener over a temporary flow file) in
// Debian's chromium through chromedp: live refresh when another process
// writes, writes through the pages, time travel, the graph, and no console
// error on any page. It holds only tests.
//
// One browser serves the whole package; each test opens its own tab in its
// own browser context (cookies apart). Without chromium the tests skip,
// unless CI is set, when they fail: CI proves that they ran. No test
// downloads a browser.
package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// chromiumPath is Debian's chromium, which .ci/run installs;
// FLOWCTL_CHROMIUM names another.
func chromiumPath() string {
	if p := os.Getenv("FLOWCTL_CHROMIUM"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

var (
	// flowctlBin is the flowctl binary, built once: the other process
	// that writes while a page is open.
	flowctlBin string

	browserOnce   sync.Once
	browserCtx    context.Context // the browser; a tab is a child context
	browserErr    error
	browserCancel = func() {}
)

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "browsertest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	flowctlBin = filepath.Join(dir, "flowctl")
	build := exec.Command("go", "build", "-o", flowctlBin, "github.com/flowctl/flowctl/cmd/flowctl")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building flowctl:", err)
		return 1
	}
	defer func() { browserCancel() }()
	return m.Run()
}

// needBrowser returns the browser's context, started on first use; it
// skips the test when chromium is missing, or fails it under CI.
func needBrowser(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath()
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("chromium is missing at %s (.ci/run installs Debian's): %v", path, err)
		}
		t.Skipf("no chromium at %s: the browser tests need Debian's chromium (apt-get install chromium)", path)
	}
	browserOnce.Do(func() {
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(path),
			chromedp.NoSandbox, // the tests run as root in CI
			chromedp.DisableGPU,
			chromedp.WindowSize(viewportWidth, viewportHeight),
		)
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancelCtx := chromedp.NewContext(alloc)
		browserCancel = func() { cancelCtx(); cancelAlloc() }
		// No timeout on the first run: it would stop the browser.
		browserCtx, browserErr = ctx, chromedp.Do(ctx)
	})
	if browserErr != nil {
		t.Fatalf("starting chromium: %v", browserErr)
	}
	return browserCtx
}

// The browser window: the screenshots' width.
const (
	viewportWidth  = 1280
	viewportHeight = 900
)
