package handlers_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fileshed/fileshed/internal/browsertest"
)

// TestCrossSiteAttackInChromium runs the attack in a real headless Chromium: a page of
// another site sends the "simple request" that needs no preflight (no-cors, text/plain) to
// delete a file of the default server (auth.mode none), then tries to read a tool's answer;
// the file stays and the answer stays unreadable. Open WebUI's page (openwebui.url's origin)
// calls a tool with JSON, preflight included, and reads the answer: a direct tool server.
func TestCrossSiteAttackInChromium(t *testing.T) {
	t.Parallel()
	b := browsertest.New(t, 60*time.Second)
	page := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<!doctype html><title>a page</title><p>a page</p>"))
	})
	evil, owui := httptest.NewServer(page), httptest.NewServer(page)
	t.Cleanup(evil.Close)
	t.Cleanup(owui.Close)
	// "localhost" where fileshed is reached at 127.0.0.1: another site, not only another origin.
	origin := func(s *httptest.Server) string {
		return "http://localhost:" + strconv.Itoa(s.Listener.Addr().(*net.TCPAddr).Port)
	}
	e := start(t, map[string]string{"FILESHED_OPENWEBUI_URL": origin(owui)})
	file := e.write("users/local/Storage/data/keep.txt", "precious\n")

	b.Do(chromedp.Navigate(origin(evil) + "/"))
	sent := browsertest.Eval[string](b, `fetch("`+e.srv.URL+`/shed_delete", {method: "POST", mode: "no-cors",
		headers: {"Content-Type": "text/plain"}, body: JSON.stringify({zone: "storage", path: "keep.txt"})}).then(r => r.type, e => "failed: " + e)`,
		chromedp.EvalAwaitPromise)
	if sent != "opaque" {
		t.Fatalf("the page's request was not sent: %s", sent)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "precious\n" {
		t.Fatalf("a page of another site deleted the file: %q %v", b, err)
	}
	if logs := e.logs.String(); !strings.Contains(logs, `"sec_fetch_site":"cross-site"`) || !strings.Contains(logs, `"origin":"`+origin(evil)+`"`) {
		t.Errorf("no refusal logged with the browser's headers:\n%s", grepLines(logs, "cross-origin"))
	}
	read := browsertest.Eval[string](b, `fetch("`+e.srv.URL+`/shed_tree", {method: "POST", headers: {"Content-Type": "text/plain"},
		body: JSON.stringify({zone: "storage"})}).then(r => r.text(), e => "unreadable")`, chromedp.EvalAwaitPromise)
	if read != "unreadable" {
		t.Errorf("a page of another site read a tool's answer: %s", read)
	}

	b.Do(chromedp.Navigate(origin(owui) + "/"))
	tree := browsertest.Eval[string](b, `fetch("`+e.srv.URL+`/shed_tree", {method: "POST", headers: {"Content-Type": "application/json"},
		body: JSON.stringify({zone: "storage"})}).then(r => r.text(), e => "failed: " + e)`, chromedp.EvalAwaitPromise)
	if !strings.Contains(tree, `"success":true`) || !strings.Contains(tree, "keep.txt") {
		t.Fatalf("Open WebUI's page could not call its direct tool server: %s", tree)
	}
}
