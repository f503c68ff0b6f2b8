package handlers_test

import (
	"testing"

	"github.com/fileshed/fileshed/core/owui"
	"github.com/fileshed/fileshed/core/owui/owuitest"
)

// TestGoldenPages pins the answers of shed_save_page: a Markdown page (with its content), an
// HTML page (without), and a page in links.mode openwebui.
func TestGoldenPages(t *testing.T) {
	e := startLinks(t, nil)
	swap := map[string]string{e.srv.URL: "<server>"}
	md := e.post("shed_save_page", map[string]any{"title": "Sales [2026]", "content": "## Summary\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
		"path": "output/sales.md"}, as("alice"))
	linkSwap(t, swap, md, "1")
	html := e.post("shed_save_page", map[string]any{"title": "Chart", "content": "<h1>Chart</h1>", "format": "html",
		"path": "output/chart"}, as("alice"))
	linkSwap(t, swap, html, "2")
	pinGolden(t, "pages_markdown", md, swap, "expires_at")
	pinGolden(t, "pages_html", html, swap, "expires_at")

	fake := owuitest.New(t)
	fake.AddUser("tok-alice", owui.User{ID: "alice", Name: "Alice", Role: "user"})
	o := start(t, map[string]string{"FILESHED_AUTH_MODE": "session", "FILESHED_OPENWEBUI_URL": fake.URL,
		"FILESHED_LINKS_MODE": "openwebui"})
	r := o.post("shed_save_page", map[string]any{"title": "Sales", "content": "# Hello\n", "path": "output/sales.md"},
		map[string]string{"Authorization": "Bearer tok-alice"})
	wantOK(t, r)
	pinGolden(t, "pages_owui", r, map[string]string{fake.URL: "<openwebui>", r.Data["file_id"].(string): "<file_id>"})
}
