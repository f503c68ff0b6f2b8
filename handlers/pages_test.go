package handlers_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// pageMarkdown is a report with every block the rendered page must show.
const pageMarkdown = "## Summary\n\nSales **grew** in every region.\n\n" +
	"| Region | Q1 | Q2 |\n|---|---:|---:|\n| North | 10 | 12 |\n| South | 7 | 9 |\n\n" +
	"```go\nfmt.Println(\"total\", 38)\n```\n\n- [x] checked\n- a [link](https://example.org/doc)\n"

// TestSavePageMarkdown: the file lands in output/ through the write path, the answer
// carries a link (clickable_link) and the content, and the link serves a standalone HTML
// page with the title, a heading, a table and a code block, under a strict policy.
func TestSavePageMarkdown(t *testing.T) {
	t.Parallel()
	e := startLinks(t, nil)
	r := e.post("shed_save_page", map[string]any{"title": "Sales report 2026", "content": pageMarkdown}, as("alice"))
	wantOK(t, r)
	p, _ := r.Data["path"].(string)
	if !regexp.MustCompile(`^output/sales-report-2026-[a-z0-9]{6}\.md$`).MatchString(p) {
		t.Fatalf("path %q", p)
	}
	disk, err := os.ReadFile(filepath.Join(e.base, "users/alice/Storage/data", p))
	if err != nil || string(disk) != "# Sales report 2026\n\n"+pageMarkdown {
		t.Fatalf("file on disk %q, %v", disk, err)
	}
	url, _ := r.Data["url"].(string)
	if !strings.HasSuffix(url, "?view") || !strings.Contains(r.Data["clickable_link"].(string), "("+url+")") ||
		r.Data["content"] != pageMarkdown || r.Data["content_truncated"] != false || r.Data["format"] != "markdown" {
		t.Fatalf("answer %v", r.Data)
	}
	f := e.get("GET", url, nil)
	if f.status != 200 || !strings.HasPrefix(f.header.Get("Content-Type"), "text/html") ||
		!strings.Contains(f.header.Get("Content-Security-Policy"), "default-src 'none'") ||
		!strings.Contains(f.header.Get("Content-Security-Policy"), "sandbox") {
		t.Fatalf("view: %d %v", f.status, f.header)
	}
	for _, want := range []string{"<title>Sales report 2026</title>", "<h1>Sales report 2026</h1>", "<h2>Summary</h2>",
		"<th>Region</th>", `<td align="right">12</td>`, `<code class="language-go">`, `name="viewport"`} {
		if !strings.Contains(f.body, want) {
			t.Errorf("page lacks %q:\n%s", want, f.body)
		}
	}
	if g := e.get("GET", url, map[string]string{"Range": "bytes=0-0,2-2,4-4,6-6,8-8,10-10,12-12,14-14,16-16,18-18,20-20,22-22,24-24,26-26,28-28,30-30,32-32"}); g.status != 416 {
		t.Errorf("17 ranges on a page: %d", g.status)
	}
	if g := e.get("GET", url, map[string]string{"Range": "bytes=0-14"}); g.status != 206 || g.body != "<!doctype html>" {
		t.Errorf("range of a page: %d %q", g.status, g.body)
	}
	// ?view on another kind of file changes nothing: it downloads.
	e.write("users/alice/Storage/data/plain.txt", "plain")
	txt := e.link("alice", map[string]any{"zone": "storage", "path": "plain.txt"})["url"].(string)
	if g := e.get("GET", txt+"?view", nil); g.status != 200 || g.body != "plain" || !strings.HasPrefix(g.header.Get("Content-Type"), "text/plain") {
		t.Errorf("?view on a .txt: %d %v %q", g.status, g.header, g.body)
	}
	// Without ?view the link downloads the Markdown file itself.
	raw := e.get("GET", strings.TrimSuffix(url, "?view"), nil)
	if raw.status != 200 || raw.body != string(disk) {
		t.Fatalf("download: %d %q", raw.status, raw.body)
	}
}

// TestSavePageHostile: hostile titles and content of issue 15 (path traversal, 10,000
// characters, markup, scripts, frames, javascript: links, meta refresh, external images,
// raw HTML in Markdown), formats, zones and the size valve.
func TestSavePageHostile(t *testing.T) {
	t.Parallel()
	e := startLinks(t, map[string]string{"FILESHED_PAGE_MAX_KB": "4", "FILESHED_MAX_OUTPUT_DEFAULT": "100"})
	save := func(args map[string]any) reply { return e.post("shed_save_page", args, as("alice")) }

	r := save(map[string]any{"title": "../../x", "content": "hi"})
	wantOK(t, r)
	if p := r.Data["path"].(string); !strings.HasPrefix(p, "output/x-") || strings.Contains(p, "..") {
		t.Fatalf("title ../../x gave path %q", p)
	}
	r = save(map[string]any{"title": strings.Repeat("t", 10_000), "content": "hi"})
	wantError(t, r, "INVALID_PARAMETER")
	if r.Hint == "" {
		t.Fatal("no hint for a long title")
	}
	wantError(t, save(map[string]any{"title": "  ", "content": "hi"}), "INVALID_PARAMETER")
	wantError(t, save(map[string]any{"title": "t", "content": "hi", "format": "pdf"}), "INVALID_PARAMETER")
	wantError(t, save(map[string]any{"title": "t", "content": strings.Repeat("x", 5000)}), "FILE_TOO_LARGE")
	wantError(t, save(map[string]any{"title": "t", "content": "hi", "path": "../../etc/x"}), "PATH_ESCAPE")
	wantError(t, save(map[string]any{"title": "t", "content": "hi", "zone": "uploads"}), "ZONE_READONLY")

	r = save(map[string]any{"title": "t", "content": strings.Repeat("long ", 100), "zone": "documents", "path": "reports/q1"})
	wantOK(t, r)
	if r.Data["path"] != "reports/q1.md" || r.Data["zone"] != "documents" || r.Data["content_truncated"] != true ||
		len(r.Data["content"].(string)) != 100 {
		t.Fatalf("documents page: %v", r.Data)
	}

	r = save(map[string]any{"title": `<script>alert(1)</script> [x](javascript:alert(2))`,
		"content": "<script>alert(3)</script>\n\n<iframe src=\"https://example.org\"></iframe>\n\n" +
			"[click](javascript:alert(4))\n\n![tracker](https://example.org/pixel.png)\n\n<meta http-equiv=\"refresh\" content=\"0;url=https://example.org\">\n"})
	wantOK(t, r)
	f := e.get("GET", r.Data["url"].(string), nil)
	for _, bad := range []string{"<script", "<iframe", `href="javascript`, "<meta http-equiv", "alert(1)</script>"} {
		if strings.Contains(f.body, bad) {
			t.Errorf("rendered page contains %q:\n%s", bad, f.body)
		}
	}
	if !strings.Contains(f.body, "<title>&lt;script&gt;alert(1)&lt;/script&gt; [x](javascript:alert(2))</title>") ||
		!strings.Contains(f.body, "<h1>&lt;script&gt;alert(1)&lt;/script&gt; [x](javascript:alert(2))</h1>") {
		t.Errorf("title not kept literally:\n%s", f.body)
	}

	r = save(map[string]any{"title": "Raw", "format": "html", "content": "<h1>Raw</h1><script>alert(1)</script>"})
	wantOK(t, r)
	if p := r.Data["path"].(string); !strings.HasSuffix(p, ".html") || r.Data["content"] != nil {
		t.Fatalf("html page: %v", r.Data)
	}
	f = e.get("GET", r.Data["url"].(string), nil)
	if csp := f.header.Get("Content-Security-Policy"); !strings.Contains(csp, "sandbox") || !strings.Contains(csp, "default-src 'none'") ||
		!strings.Contains(f.body, "<title>Raw</title>") || !strings.Contains(f.body, "<script>alert(1)</script>") {
		t.Fatalf("html served: %v\n%s", f.header, f.body)
	}
}
