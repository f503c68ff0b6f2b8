package browsertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// candidates are the names Chromium is installed under (Debian: chromium).
var candidates = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// Browser is one headless Chromium tab, closed when the test ends.
type Browser struct {
	t   testing.TB
	ctx context.Context
}

// New starts a headless Chromium for the test, or skips it naming the Debian package when
// none is installed. Every action is bounded by timeout.
func New(t testing.TB, timeout time.Duration) *Browser {
	t.Helper()
	path := ""
	for _, c := range candidates {
		if p, err := exec.LookPath(c); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		t.Skip("headless Chromium not found: install the Debian package chromium (apt-get install chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path),
		// Why no sandbox: CI and containers run tests as root, where Chromium refuses its
		// own sandbox; the pages loaded are the test's own.
		chromedp.NoSandbox, chromedp.Flag("disable-dev-shm-usage", true), chromedp.UserDataDir(t.TempDir()))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tab, cancelTab := chromedp.NewContext(alloc)
	ctx, cancel := context.WithTimeout(tab, timeout)
	t.Cleanup(func() { cancel(); cancelTab(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium (%s): %v", path, err)
	}
	return &Browser{t: t, ctx: ctx}
}

// Do runs actions in the tab and fails the test on error.
func (b *Browser) Do(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatal(err)
	}
}

// Eval evaluates a JavaScript expression through DevTools (the page's CSP does not apply:
// the page itself needs no script) and returns its JSON value decoded as T; opts such as
// chromedp.EvalAwaitPromise apply.
func Eval[T any](b *Browser, expr string, opts ...chromedp.EvaluateOption) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr, opts...))
	if err != nil {
		b.t.Fatalf("evaluate %q: %v", expr, err)
	}
	return v
}

// Screenshot sets the window to width x height CSS pixels and writes a full-page PNG
// named name into the directory $FILESHED_SCREENSHOTS (created if needed), or into the
// test's temporary directory. It returns the file's path.
func (b *Browser) Screenshot(name string, width, height int64) string {
	b.t.Helper()
	opts := []chromedp.EmulateViewportOption{}
	if width < 600 {
		opts = append(opts, chromedp.EmulateMobile)
	}
	b.Do(chromedp.EmulateViewport(width, height, opts...))
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatal(err)
	}
	dir := os.Getenv("FILESHED_SCREENSHOTS")
	if dir == "" {
		dir = b.t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	return p
}
