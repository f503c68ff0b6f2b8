package handlers_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fileshed/fileshed/internal/browsertest"
)

// tracker is a local server standing for "the outside": a page that made any request to
// it (image, frame, refresh, script) would show as a hit.
func tracker(t *testing.T) (string, *atomic.Int64) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		t.Logf("tracker hit: %s %s", r.Method, r.URL)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &hits
}

// TestSavePageInChromium opens result pages in a real headless Chromium: the Markdown page
// shows its title, headings, table and code block in dark text on white, readable on a
// phone, with no console error and no request but its own; hostile Markdown and model
// HTML (script, iframe, javascript: link, meta refresh, external image) run nothing and
// send nothing to the outside (a tracker server counts).
func TestSavePageInChromium(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t, 90*time.Second)
	e := startLinks(t, nil)
	out, hits := tracker(t)

	r := e.post("shed_save_page", map[string]any{"title": "Sales report 2026", "content": pageMarkdown}, as("alice"))
	wantOK(t, r)
	url := r.Data["url"].(string)
	w := b.Watch()
	b.Do(chromedp.Navigate(url))
	if title := browsertest.Eval[string](b, `document.title`); title != "Sales report 2026" {
		t.Errorf("title %q", title)
	}
	heads := browsertest.Eval[[]string](b, `[...document.querySelectorAll("h1,h2")].map(h => h.tagName + ":" + h.textContent)`)
	if !slices.Equal(heads, []string{"H1:Sales report 2026", "H2:Summary"}) {
		t.Errorf("headings %q", heads)
	}
	cells := browsertest.Eval[[]string](b, `[...document.querySelectorAll("table th, table td")].map(c => c.textContent)`)
	if !slices.Equal(cells, []string{"Region", "Q1", "Q2", "North", "10", "12", "South", "7", "9"}) {
		t.Errorf("table cells %q", cells)
	}
	if code := browsertest.Eval[string](b, `document.querySelector("pre code").textContent`); code != "fmt.Println(\"total\", 38)\n" {
		t.Errorf("code block %q", code)
	}
	if a := browsertest.Eval[string](b, `getComputedStyle(document.querySelector("td[align=right]")).textAlign`); a != "right" {
		t.Errorf("a right-aligned column is %q", a)
	}
	colors := browsertest.Eval[[]string](b, `[getComputedStyle(document.body).color, getComputedStyle(document.body).backgroundColor]`)
	if !slices.Equal(colors, []string{"rgb(27, 27, 27)", "rgb(255, 255, 255)"}) {
		t.Errorf("text and background colours %q", colors)
	}
	b.Screenshot("result-page-desktop.png", 1280, 800)
	b.Screenshot("result-page-phone.png", 390, 844)
	if sw := browsertest.Eval[int](b, `document.documentElement.scrollWidth - window.innerWidth`); sw > 0 {
		t.Errorf("the phone layout scrolls sideways by %d px", sw)
	}
	if errs := w.Errors(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
	if reqs := w.Requests(); !slices.Equal(reqs, []string{url}) {
		t.Errorf("requests %q, want the page only", reqs)
	}

	hostile := "![pixel](" + out + "/img.png)\n\n<img src=\"" + out + "/raw.png\">\n\n<script>document.title='pwned'</script>\n\n" +
		"<iframe src=\"" + out + "/frame\"></iframe>\n\n<meta http-equiv=\"refresh\" content=\"0;url=" + out + "/refresh\">\n\n" +
		"[run](javascript:document.title='pwned')\n"
	html := "<h1 id=h>Model page</h1><script>document.title='pwned'</script><img src=\"" + out + "/img.png\">" +
		"<iframe src=\"" + out + "/frame\"></iframe><meta http-equiv=\"refresh\" content=\"0;url=" + out + "/refresh\">" +
		"<link rel=stylesheet href=\"" + out + "/style.css\"><a id=js href=\"javascript:document.title='pwned'\">run</a>" +
		"<img src=x onerror=\"document.title='pwned'\"><form action=\"" + out + "/form\"><button id=send>send</button></form>"
	for _, page := range []map[string]any{
		{"title": "Hostile markdown", "content": hostile},
		{"title": "Hostile html", "format": "html", "content": html},
	} {
		r := e.post("shed_save_page", page, as("alice"))
		wantOK(t, r)
		url := r.Data["url"].(string)
		b.Do(chromedp.Navigate(url))
		time.Sleep(1500 * time.Millisecond) // a refresh of 0 s, images and frames have had their chance
		if loc := browsertest.Eval[string](b, `location.href`); loc != url {
			t.Errorf("%s: navigated to %q", page["title"], loc)
		}
		if title := browsertest.Eval[string](b, `document.title`); title != page["title"] {
			t.Errorf("%s: title %q (a script ran?)", page["title"], title)
		}
		if page["format"] == "html" {
			b.Do(chromedp.Click("#js"), chromedp.Click("#send"))
			time.Sleep(500 * time.Millisecond)
			if title := browsertest.Eval[string](b, `document.title`); title != "Hostile html" {
				t.Errorf("javascript: link ran: title %q", title)
			}
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the pages sent %d requests outside", n)
	}
}
