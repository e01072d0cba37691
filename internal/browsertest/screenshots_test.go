package browsertest

import (
	"bytes"
	"context"
	"flag"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

var update = flag.Bool("update", false, "rewrite the README's screenshots under docs/")

// screenshotMax is the most a screenshot of the README may weigh.
const screenshotMax = 300 << 10

// TestScreenshots takes the README's screenshots of the overview and the
// board of the fixture's project, 1280 px wide, and checks them (PNG, the
// width, the weight); with -update it writes them under docs/:
//
//	go test ./internal/browsertest -run TestScreenshots -update
func TestScreenshots(t *testing.T) {
	s := newSite(t, newProject(t))
	tb := newTab(t)
	shots := []struct{ file, path, ready string }{
		{"dashboard-overview.png", "/p/web", `document.getElementById('pending')`},
		{"dashboard-board.png", "/p/web/board", `document.querySelectorAll('#board .card').length > 0`},
	}
	for _, sh := range shots {
		tb.open(s.url + sh.path)
		tb.waitFor(sh.path, sh.ready)
		tb.waitLive()
		b := shot(tb)
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: not a PNG: %v", sh.file, err)
		}
		if w := img.Bounds().Dx(); w != viewportWidth {
			t.Errorf("%s: %d px wide, want %d", sh.file, w, viewportWidth)
		}
		if len(b) > screenshotMax {
			t.Errorf("%s: %d KB, more than %d", sh.file, len(b)>>10, screenshotMax>>10)
		}
		t.Logf("%s: %dx%d, %d KB", sh.file, img.Bounds().Dx(), img.Bounds().Dy(), len(b)>>10)
		if *update {
			if err := os.WriteFile(filepath.Join("..", "..", "docs", sh.file), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// shot is a PNG of the whole page.
func shot(tb *tab) []byte {
	tb.t.Helper()
	var b []byte
	tb.do("screenshot", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		var err error
		b, err = chromedp.FullScreenshot(100)(ctx, t)
		return err
	}))
	return b
}
