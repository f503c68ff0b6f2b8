package handlers_test

import (
	"strings"
	"testing"
)

// TestViewOnPlainLinkIsADownload (issue 24, item 14): ?view appended to a plain
// shed_link_create link of an .html or .md file does not turn the download into a page on
// fileshed's origin: only a link made by shed_save_page renders. The plain link answers
// exactly what it answers without ?view (the file as it is, HTML as an attachment), and so
// do the files of a folder link.
func TestViewOnPlainLinkIsADownload(t *testing.T) {
	t.Parallel()
	e := startLinks(t, nil)
	const fake = "<!doctype html><title>Sign in</title><h1>Your session expired</h1><form>password</form>"
	const md = "# Official notice\n\nSend your password to **x**.\n"
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "pub/fake.html", "content": fake}, as("alice")))
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "pub/note.md", "content": md}, as("alice")))
	folder := e.link("alice", map[string]any{"zone": "storage", "path": "pub"})["url"].(string)
	for _, c := range []struct{ name, url, body string }{
		{"html link", e.link("alice", map[string]any{"zone": "storage", "path": "pub/fake.html"})["url"].(string), fake},
		{"markdown link", e.link("alice", map[string]any{"zone": "storage", "path": "pub/note.md"})["url"].(string), md},
		{"html in a folder link", folder + "/fake.html", fake},
		{"markdown in a folder link", folder + "/note.md", md},
	} {
		t.Run(c.name, func(t *testing.T) {
			plain := e.get("GET", c.url, nil)
			viewed := e.get("GET", c.url+"?view", nil)
			if viewed.status != 200 || viewed.body != c.body {
				t.Fatalf("?view: %d %.120q, want the file as it is", viewed.status, viewed.body)
			}
			for _, h := range []string{"Content-Type", "Content-Disposition", "Content-Security-Policy"} {
				if viewed.header.Get(h) != plain.header.Get(h) {
					t.Errorf("%s with ?view %q, without %q", h, viewed.header.Get(h), plain.header.Get(h))
				}
			}
			if csp := viewed.header.Get("Content-Security-Policy"); strings.Contains(csp, "style-src") {
				t.Errorf("served with a page's policy: %q", csp)
			}
			if strings.HasSuffix(c.url, ".html") && !strings.HasPrefix(viewed.header.Get("Content-Disposition"), "attachment") {
				t.Errorf("HTML shown inline: %v", viewed.header)
			}
		})
	}
	// A page made by shed_save_page still renders, and a plain link to that same file does not.
	r := e.post("shed_save_page", map[string]any{"title": "Report", "content": "Body", "path": "pub/report.md"}, as("alice"))
	wantOK(t, r)
	if g := e.get("GET", r.Data["url"].(string), nil); g.status != 200 || !strings.Contains(g.body, "<h1>Report</h1>") {
		t.Fatalf("page link: %d %.200q", g.status, g.body)
	}
	again := e.link("alice", map[string]any{"zone": "storage", "path": "pub/report.md"})["url"].(string)
	if g := e.get("GET", again+"?view", nil); g.status != 200 || g.body != "# Report\n\nBody" {
		t.Fatalf("plain link to a page's file with ?view: %d %.200q", g.status, g.body)
	}
}
