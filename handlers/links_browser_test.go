package handlers_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fileshed/fileshed/internal/browsertest"
)

// TestLinkFolderPageInChromium loads a folder link's page in a real headless Chromium:
// reads the DOM (table structure, entries, links), follows a folder link and a file link,
// and takes screenshots at a desktop and a phone width (FILESHED_SCREENSHOTS keeps them).
func TestLinkFolderPageInChromium(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t, 60*time.Second)
	e := startLinks(t, nil)
	e.write("users/alice/Storage/data/Project/README.txt", "read me first")
	e.write("users/alice/Storage/data/Project/data/results.csv", "a,b\n1,2\n")
	e.write("users/alice/Storage/data/Project/report-2026-final-version-with-a-very-long-name.pdf", "%PDF-1.4")
	e.write("users/alice/Storage/data/Project/<img src=x onerror=alert(1)>.txt", "x")
	url := e.link("alice", map[string]any{"zone": "storage", "path": "Project"})["url"].(string)

	b.Do(chromedp.Navigate(url))
	if h1 := browsertest.Eval[string](b, `document.querySelector("h1").textContent`); h1 != "Project" {
		t.Errorf("h1 = %q", h1)
	}
	heads := browsertest.Eval[[]string](b, `[...document.querySelectorAll("thead th[scope=col]")].map(th => th.textContent)`)
	if !slices.Equal(heads, []string{"Name", "Size", "Modified", "Type"}) {
		t.Errorf("column headers %v", heads)
	}
	names := browsertest.Eval[[]string](b, `[...document.querySelectorAll("tbody th[scope=row] a")].map(a => a.textContent)`)
	want := []string{"data", "<img src=x onerror=alert(1)>.txt", "README.txt", "report-2026-final-version-with-a-very-long-name.pdf"}
	if !slices.Equal(names, want) {
		t.Errorf("entries %q, want %q", names, want)
	}
	if n := browsertest.Eval[int](b, `document.scripts.length + document.images.length`); n != 0 {
		t.Errorf("the page has %d scripts (a file name became markup?)", n)
	}
	hrefs := browsertest.Eval[[]string](b, `[...document.querySelectorAll("a")].map(a => a.href)`)
	for _, h := range hrefs {
		if !strings.HasPrefix(h, url) {
			t.Errorf("link %q leaves the token's tree", h)
		}
	}
	if c := browsertest.Eval[string](b, `document.querySelector("nav[aria-label=Breadcrumb] [aria-current=page]").textContent`); c != "Project" {
		t.Errorf("breadcrumb current %q", c)
	}
	if z := browsertest.Eval[string](b, `document.querySelector("a.zip").getAttribute("href")`); z != url+"?zip" {
		t.Errorf("zip action %q", z)
	}
	// The page's only style sheet is inline, allowed by its hash in the CSP: it must apply.
	if style := browsertest.Eval[string](b, `getComputedStyle(document.querySelector("a.zip")).borderTopStyle`); style != "solid" {
		t.Errorf("the page's style did not apply (CSP hash?): border %q", style)
	}
	shot := b.Screenshot("links-folder-desktop.png", 1280, 800)
	b.Screenshot("links-folder-phone.png", 390, 844)
	if w := browsertest.Eval[int](b, `document.documentElement.scrollWidth - window.innerWidth`); w > 0 {
		t.Errorf("the phone layout scrolls sideways by %d px", w)
	}
	t.Logf("screenshots in %s", shot[:strings.LastIndex(shot, "/")])

	// Follow the folder entry, then the breadcrumb back, then a file.
	b.Do(chromedp.EmulateViewport(1280, 800), chromedp.Click(`tbody a[href$="/data"]`), chromedp.WaitVisible(`tbody a[href$="results.csv"]`))
	if loc := browsertest.Eval[string](b, `location.href`); loc != url+"/data" {
		t.Errorf("followed to %q", loc)
	}
	crumbs := browsertest.Eval[[]string](b, `[...document.querySelectorAll("nav li")].map(li => li.textContent)`)
	if !slices.Equal(crumbs, []string{"Project", "data"}) {
		t.Errorf("breadcrumb %q", crumbs)
	}
	b.Do(chromedp.Click(`nav a`), chromedp.WaitVisible(`tbody a[href$="README.txt"]`),
		chromedp.Click(`tbody a[href$="README.txt"]`), chromedp.WaitVisible("body pre"))
	if text := browsertest.Eval[string](b, `document.body.innerText`); strings.TrimSpace(text) != "read me first" {
		t.Errorf("file opened as %q", text)
	}
}
