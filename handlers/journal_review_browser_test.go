package handlers_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fileshed/fileshed/internal/browsertest"
)

// TestReviewPageInChromium opens a review page (shed_version action=review) in a real
// headless Chromium: a file named with a <script> and a diff whose lines close the code
// fence and hold a script, an event handler and a javascript: link run nothing (the title
// stays), make no element or link, show as the literal text they are, and the page sends no
// request but its own, with no console error.
func TestReviewPageInChromium(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t, 90*time.Second)
	e := startLinks(t, nil)
	a := aliceIn("chat-a")
	evil := "<script>document.title='pwned'</script>`x.md"
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": evil, "content": reviewHostile}, a))
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": evil, "content": "changed" + reviewHostile[4:],
		"overwrite": true}, a))
	r := e.post("shed_version", map[string]any{"action": "review"}, a)
	wantOK(t, r)
	url := r.Data["url"].(string)
	w := b.Watch()
	b.Do(chromedp.Navigate(url))
	if title := browsertest.Eval[string](b, `document.title`); title != "Changes of this conversation" {
		t.Errorf("title %q (a script ran?)", title)
	}
	if n := browsertest.Eval[int](b, `document.querySelectorAll("script, img, a, iframe, form").length`); n != 0 {
		t.Errorf("%d elements made from the hostile names and lines", n)
	}
	heads := browsertest.Eval[[]string](b, `[...document.querySelectorAll("h2 code")].map(c => c.textContent)`)
	if !slices.Equal(heads, []string{evil, evil}) {
		t.Errorf("headings' names %q", heads)
	}
	diffs := browsertest.Eval[[]string](b, `[...document.querySelectorAll("pre code")].map(c => c.textContent)`)
	if len(diffs) != 2 || !strings.Contains(diffs[0], "\n ```\n <script>document.title='pwned'</script>\n [run](javascript:") {
		t.Errorf("diffs %q", diffs)
	}
	b.Screenshot("review-page-phone.png", 390, 844)
	if sw := browsertest.Eval[int](b, `document.documentElement.scrollWidth - window.innerWidth`); sw > 0 {
		t.Errorf("the phone layout scrolls sideways by %d px", sw)
	}
	if errs := w.Errors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
	if reqs := w.Requests(); !slices.Equal(reqs, []string{url}) {
		t.Errorf("requests %q, want the page only", reqs)
	}
}
