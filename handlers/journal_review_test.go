package handlers_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// reviewHostile is content whose diff lines try to leave the diff's code block (a fence of
// their own, as a context line, then raw HTML and a Markdown link) and run a script: its
// first line changed, the next ones are the diff's context (" ```" closes a ``` fence).
const reviewHostile = "safe\n```\n<script>document.title='pwned'</script>\n" +
	"[run](javascript:document.title='pwned')\n<img src=x onerror=\"document.title='pwned'\">\n"

// alice in conversation id.
func aliceIn(conv string) map[string]string {
	h := as("alice")
	h["X-OpenWebUI-Chat-Id"] = conv
	return h
}

// TestReviewPage: shed_version action=review writes a page of this conversation's changes
// (not another's) in Storage output/, answers clickable_link like shed_save_page, and the
// link serves it rendered under the result pages' policy: names and diff lines hostile
// (a path with <script>, a diff line closing the code fence) stay literal text.
func TestReviewPage(t *testing.T) {
	t.Parallel()
	e := startLinks(t, nil)
	a := aliceIn("chat-a")
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "notes.md", "content": "one\ntwo\n"}, a))
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "notes.md", "content": "one\n2\n", "overwrite": true}, a))
	evil := "<script>document.title='pwned'</script>`x.md"
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": evil, "content": reviewHostile}, a))
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": evil, "content": "changed" + reviewHostile[4:], "overwrite": true}, a))
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "documents", "path": "elsewhere.md", "content": "b\n"}, aliceIn("chat-b")))

	r := e.post("shed_version", map[string]any{"action": "review"}, a)
	wantOK(t, r)
	p, _ := r.Data["path"].(string)
	url, _ := r.Data["url"].(string)
	if !regexp.MustCompile(`^output/review-[a-z0-9]{6}\.md$`).MatchString(p) || !strings.HasSuffix(url, "?view") ||
		!strings.Contains(r.Data["clickable_link"].(string), "("+url+")") || r.Data["format"] != "markdown" ||
		r.Data["title"] != "Changes of this conversation" || r.Data["content"] != nil {
		t.Fatalf("answer %s", r.raw)
	}
	if !strings.Contains(r.Message, "4 change(s)") || !strings.Contains(r.Message, "clickable_link") {
		t.Errorf("message %q", r.Message)
	}
	disk, err := os.ReadFile(filepath.Join(e.base, "users/alice/Storage/data", p))
	if err != nil || !strings.Contains(string(disk), "-two\n+2\n") || strings.Contains(string(disk), "elsewhere.md") {
		t.Fatalf("page on disk %q, %v", disk, err)
	}
	f := e.get("GET", url, nil)
	csp := f.header.Get("Content-Security-Policy")
	if f.status != 200 || !strings.HasPrefix(f.header.Get("Content-Type"), "text/html") ||
		!strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "sandbox") {
		t.Fatalf("view: %d %v", f.status, f.header)
	}
	for _, want := range []string{"<title>Changes of this conversation</title>", `<code class="language-diff">`,
		"\n &lt;script&gt;document.title=", "\n [run](javascript:", "<code>&lt;script&gt;document.title='pwned'&lt;/script&gt;`x.md</code>", "-two\n+2\n"} {
		if !strings.Contains(f.body, want) {
			t.Errorf("page lacks %q:\n%s", want, f.body)
		}
	}
	for _, bad := range []string{"<script", "<img", "<a ", "elsewhere.md"} {
		if strings.Contains(f.body, bad) {
			t.Errorf("page holds %q:\n%s", bad, f.body)
		}
	}
	// Another user's link, another conversation: nothing of alice's chat-a.
	other := e.post("shed_version", map[string]any{"action": "review"}, aliceIn("chat-b"))
	wantOK(t, other)
	if g := e.get("GET", other.Data["url"].(string), nil); !strings.Contains(g.body, "elsewhere.md") || strings.Contains(g.body, "notes.md") {
		t.Errorf("chat-b's review:\n%s", g.body)
	}
	wantError(t, e.post("shed_version", map[string]any{"action": "review", "conversation": "../x"}, a), "INVALID_PARAMETER")
}
