package handlers_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

func TestLinkLifecycle(t *testing.T) {
	t.Parallel()
	e := startLinks(t, nil)
	e.write("users/alice/Storage/data/report.txt", "hello link")
	d := e.link("alice", map[string]any{"zone": "storage", "path": "report.txt"})
	url, _ := d["url"].(string)
	if !strings.HasPrefix(url, e.srv.URL+"/dl/") {
		t.Fatalf("url %q does not start with public_url", url)
	}
	if d["clickable_link"] != "[📥 report.txt]("+url+")" || d["link_id"] == "" || d["expires_at"] == "" {
		t.Fatalf("create data: %v", d)
	}
	got := e.get("GET", url, nil)
	if got.status != 200 || got.body != "hello link" {
		t.Fatalf("download: %d %q", got.status, got.body)
	}
	for k, want := range map[string]string{"Cache-Control": "private, no-store", "Referrer-Policy": "no-referrer",
		"X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox", "Content-Type": "text/plain; charset=utf-8",
		"Content-Disposition": `inline; filename="report.txt"; filename*=UTF-8''report.txt`} {
		if v := got.header.Get(k); v != want {
			t.Errorf("%s = %q, want %q", k, v, want)
		}
	}
	if got.header.Get("ETag") == "" || got.header.Get("Accept-Ranges") != "bytes" {
		t.Errorf("no ETag or Accept-Ranges: %v", got.header)
	}
	if o := e.get("GET", url, map[string]string{"Origin": "https://chat.example"}); o.status != 200 || o.header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("CORS (no origin trusted by default): %d %v", o.status, o.header)
	}
	if h := e.get("HEAD", url, nil); h.status != 200 || h.body != "" || h.header.Get("Content-Length") != "10" {
		t.Errorf("HEAD: %d %q %v", h.status, h.body, h.header)
	}
	cond := e.get("GET", url, map[string]string{"If-None-Match": got.header.Get("ETag")})
	if cond.status != http.StatusNotModified {
		t.Errorf("If-None-Match: %d", cond.status)
	}
	if ims := e.get("HEAD", url, map[string]string{"If-Modified-Since": got.header.Get("Last-Modified")}); ims.status != http.StatusNotModified {
		t.Errorf("If-Modified-Since: %d", ims.status)
	}
	list := e.post("shed_link_list", nil, as("alice"))
	wantOK(t, list)
	links, _ := list.Data["links"].([]any)
	if len(links) != 1 {
		t.Fatalf("list: %v", list.Data)
	}
	l0 := links[0].(map[string]any)
	if l0["state"] != "active" || l0["downloads"].(float64) < 1 || l0["url"] != url || l0["path"] != "report.txt" {
		t.Errorf("list entry: %v", l0)
	}
	m := e.get("GET", e.srv.URL+"/metrics", nil)
	if !strings.Contains(m.body, `fileshed_link_downloads_total{status="200"} 3`) || !strings.Contains(m.body, "fileshed_link_bytes_total 20\n") {
		t.Errorf("link metrics not recorded:\n%s", grepLines(m.body, "fileshed_link"))
	}
	wantOK(t, e.post("shed_link_delete", map[string]any{"file_id": d["link_id"]}, as("alice")))
	if g := e.get("GET", url, nil); g.status != http.StatusGone || !strings.Contains(g.header.Get("Content-Type"), "text/html") {
		t.Errorf("revoked link: %d %v", g.status, g.header)
	}
	list = e.post("shed_link_list", nil, as("alice"))
	if st := list.Data["links"].([]any)[0].(map[string]any)["state"]; st != "revoked" {
		t.Errorf("state after delete: %v", st)
	}
}

func TestLinkToolErrors(t *testing.T) {
	t.Parallel()
	e := startLinks(t, nil)
	e.write("users/alice/Storage/data/a.txt", "a")
	alice := as("alice")
	for _, c := range []struct {
		name, tool string
		args       map[string]any
		code       string
	}{
		{"no id", "shed_link_delete", map[string]any{}, "MISSING_FILE_ID"},
		{"unknown id", "shed_link_delete", map[string]any{"link_id": strings.Repeat("ab", 16)}, "LINK_NOT_FOUND"},
		{"Open WebUI file id", "shed_link_delete", map[string]any{"link_id": "3f2b1c9e-1111-2222-3333-444455556666"}, "LINK_NOT_FOUND"},
		{"foreign URL", "shed_link_delete", map[string]any{"link_id": "https://elsewhere/dl/AAAA"}, "NOT_A_FILESHED_LINK"},
		{"missing file", "shed_link_create", map[string]any{"zone": "storage", "path": "nope.txt"}, "FILE_NOT_FOUND"},
		{"escape", "shed_link_create", map[string]any{"zone": "storage", "path": "../bob/x"}, "PATH_ESCAPE"},
		{"ttl over max", "shed_link_create", map[string]any{"zone": "storage", "path": "a.txt", "expires_hours": 100000}, "INVALID_PARAMETER"},
		{"negative max", "shed_link_create", map[string]any{"zone": "storage", "path": "a.txt", "max_downloads": -1}, "INVALID_PARAMETER"},
		{"no path", "shed_link_create", map[string]any{"zone": "storage"}, "MISSING_PARAMETER"},
	} {
		t.Run(c.name, func(t *testing.T) { wantError(t, e.post(c.tool, c.args, alice), c.code) })
	}
	if err := syscallMkfifo(filepath.Join(e.base, "users/alice/Storage/data/pipe")); err == nil {
		wantError(t, e.post("shed_link_create", map[string]any{"zone": "storage", "path": "pipe"}, alice), "NOT_A_FILE")
	}
}

// TestLinkOtherUsersID: bob can neither see nor revoke alice's link; the answer is the
// same as for an id that does not exist.
func TestLinkOtherUsersID(t *testing.T) {
	t.Parallel()
	e := startLinks(t, nil)
	e.write("users/alice/Storage/data/a.txt", "alice's")
	d := e.link("alice", map[string]any{"zone": "storage", "path": "a.txt"})
	r := e.post("shed_link_delete", map[string]any{"link_id": d["link_id"]}, as("bob"))
	wantError(t, r, "LINK_NOT_FOUND")
	missing := e.post("shed_link_delete", map[string]any{"link_id": strings.Repeat("cd", 16)}, as("bob"))
	if strings.ReplaceAll(r.Message, d["link_id"].(string), "X") != strings.ReplaceAll(missing.Message, strings.Repeat("cd", 16), "X") {
		t.Errorf("another user's id answers differently from a missing one: %q vs %q", r.Message, missing.Message)
	}
	if l := e.post("shed_link_list", nil, as("bob")); l.Data["count"].(float64) != 0 {
		t.Errorf("bob sees links: %v", l.Data)
	}
	if g := e.get("GET", d["url"].(string), nil); g.status != 200 || g.body != "alice's" {
		t.Errorf("alice's link after bob's attempt: %d", g.status)
	}
}

func TestLinkTamperedTokens(t *testing.T) {
	t.Parallel()
	e := startLinks(t, nil)
	other := startLinks(t, nil)
	e.write("users/alice/Storage/data/a.txt", "a")
	other.write("users/alice/Storage/data/a.txt", "a")
	url := e.link("alice", map[string]any{"zone": "storage", "path": "a.txt"})["url"].(string)
	foreign := other.link("alice", map[string]any{"zone": "storage", "path": "a.txt"})["url"].(string)
	token := url[strings.LastIndex(url, "/")+1:]
	flipped := []byte(token)
	flipped[3] ^= 0x01
	if flipped[3] == '_' || flipped[3] == '-' {
		flipped[3] = 'A'
	}
	for name, u := range map[string]string{
		"one bit flipped":    e.srv.URL + "/dl/" + string(flipped),
		"other deployment":   e.srv.URL + "/dl/" + foreign[strings.LastIndex(foreign, "/")+1:],
		"truncated":          e.srv.URL + "/dl/" + token[:30],
		"garbage":            e.srv.URL + "/dl/hello",
		"no token":           e.srv.URL + "/dl/",
		"no token, no slash": e.srv.URL + "/dl",
		"file link sub-path": url + "/x",
	} {
		if g := e.get("GET", u, nil); g.status != http.StatusNotFound || !strings.Contains(g.body, "does not exist") {
			t.Errorf("%s: %d %q", name, g.status, g.body)
		}
	}
}

// setExpiry moves a link's expiry in the state database.
func setExpiry(t *testing.T, e *env, id string, at time.Time) {
	t.Helper()
	if _, err := stateDB(t, e).Exec(`UPDATE links SET expires_us = $1 WHERE id = $2`, at.UnixMicro(), id); err != nil {
		t.Fatal(err)
	}
}

func TestLinkExpired(t *testing.T) {
	e := startLinks(t, nil)
	e.write("users/alice/Storage/data/a.txt", "a")
	d := e.link("alice", map[string]any{"zone": "storage", "path": "a.txt", "expires_hours": 1})
	setExpiry(t, e, d["link_id"].(string), time.Now().Add(-time.Second))
	if g := e.get("GET", d["url"].(string), nil); g.status != http.StatusGone || strings.Contains(g.body, "a.txt") {
		t.Errorf("expired: %d %q", g.status, g.body)
	}
	l := e.post("shed_link_list", nil, as("alice")).Data["links"].([]any)[0].(map[string]any)
	if l["state"] != "expired" || l["url"] != nil {
		t.Errorf("expired entry: %v", l)
	}
}

// TestLinkMaxDownloadsParallel: 10 parallel downloads of a max-1 link, exactly one 200.
func TestLinkMaxDownloadsParallel(t *testing.T) {
	t.Parallel()
	e := startLinks(t, nil)
	e.write("users/alice/Storage/data/once.bin", strings.Repeat("x", 1<<20))
	url := e.link("alice", map[string]any{"zone": "storage", "path": "once.bin", "max_downloads": 1})["url"].(string)
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			resp, err := http.Get(url)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			mu.Lock()
			codes[resp.StatusCode]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if codes[200] != 1 || codes[410] != 9 {
		t.Fatalf("10 parallel downloads of a max-1 link: %v", codes)
	}
}

// TestLinkFileChanged: a link serves the file it was made for or nothing: deleted and
// recreated, edited, or swapped for a symlink to /etc/passwd answers 410.
func TestLinkFileChanged(t *testing.T) {
	t.Parallel()
	e := startLinks(t, nil)
	dir := filepath.Join(e.base, "users/alice/Storage/data")
	for name, change := range map[string]func(p string){
		"deleted":               func(p string) { os.Remove(p) },
		"deleted and recreated": func(p string) { os.Remove(p); os.WriteFile(p, []byte("original"), 0o600) },
		"edited in place":       func(p string) { os.WriteFile(p, []byte("modified"), 0o600) },
		"symlink to passwd":     func(p string) { os.Remove(p); os.Symlink("/etc/passwd", p) },
		"symlink inside zone": func(p string) {
			os.Remove(p)
			os.WriteFile(p+".other", []byte("other"), 0o600)
			os.Symlink(filepath.Base(p)+".other", p)
		},
	} {
		t.Run(name, func(t *testing.T) {
			file := strings.ReplaceAll(name, " ", "_") + ".txt"
			e.write("users/alice/Storage/data/"+file, "original")
			url := e.link("alice", map[string]any{"zone": "storage", "path": file})["url"].(string)
			change(filepath.Join(dir, file))
			g := e.get("GET", url, nil)
			if g.status != http.StatusGone || strings.Contains(g.body, "root:") || strings.Contains(g.body, "other") {
				t.Errorf("%d %q", g.status, g.body)
			}
		})
	}
}

func TestLinkHostileContent(t *testing.T) {
	t.Parallel()
	e := startLinks(t, nil)
	e.write("users/alice/Storage/data/page.html", "<!doctype html><html><body><script>alert(document.cookie)</script></body></html>")
	e.write("users/alice/Storage/data/pic.svg", `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`)
	for name, want := range map[string]string{"page.html": "text/html", "pic.svg": "image/svg+xml"} {
		url := e.link("alice", map[string]any{"zone": "storage", "path": name})["url"].(string)
		g := e.get("GET", url, nil)
		if !strings.HasPrefix(g.header.Get("Content-Type"), want) || g.header.Get("Content-Security-Policy") != "sandbox" ||
			!strings.HasPrefix(g.header.Get("Content-Disposition"), "attachment;") || g.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: %v", name, g.header)
		}
	}
}

// TestLinkHostHeader: links are built from public_url, never from the request's Host (here
// another name of the loopback server, "localhost"; a foreign name is refused outright there,
// TestCrossSiteDNSRebinding) nor from X-Forwarded-Host.
func TestLinkHostHeader(t *testing.T) {
	t.Parallel()
	e := startLinks(t, nil)
	e.write("users/alice/Storage/data/f/a.txt", "a")
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/shed_link_create", strings.NewReader(`{"zone":"storage","path":"f"}`))
	for k, v := range as("alice") {
		req.Header.Set(k, v)
	}
	req.Header.Set("X-Forwarded-Host", "evil.example")
	req.Host = "localhost"
	r := e.do(req)
	wantOK(t, r)
	url := r.Data["url"].(string)
	if !strings.HasPrefix(url, e.srv.URL+"/dl/") {
		t.Fatalf("url %q follows the Host header", url)
	}
	page := e.get("GET", url, map[string]string{"Host": "localhost", "X-Forwarded-Host": "evil.example"})
	if page.status != 200 || strings.Contains(page.body, "evil.example") || strings.Contains(page.body, "//localhost") || !strings.Contains(page.body, e.srv.URL+"/dl/") {
		t.Errorf("page follows the Host header: %d %s", page.status, page.body)
	}
}

func TestLinkRanges(t *testing.T) {
	t.Parallel()
	e := startLinks(t, nil)
	e.write("users/alice/Storage/data/r.bin", strings.Repeat("0123456789", 1000))
	url := e.link("alice", map[string]any{"zone": "storage", "path": "r.bin"})["url"].(string)
	many := make([]string, 1000)
	for i := range many {
		many[i] = fmt.Sprintf("%d-%d", i, i)
	}
	for _, c := range []struct {
		name, rng string
		status    int
	}{
		{"single", "bytes=0-9", 206},
		{"suffix", "bytes=-5", 206},
		{"two parts", "bytes=0-1,5-6", 206},
		{"1000 parts", "bytes=" + strings.Join(many, ","), 416},
		{"overlapping", "bytes=0-100,50-150", 416},
		{"same twice", "bytes=0-0,0-0", 416},
		{"past EOF", "bytes=20000-20001", 416},
		{"bad unit", "items=0-1", 416},
		{"reversed", "bytes=9-1", 416},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := e.get("GET", url, map[string]string{"Range": c.rng})
			if g.status != c.status {
				t.Fatalf("%s: %d", c.rng[:min(len(c.rng), 40)], g.status)
			}
			if c.status == 416 && (g.header.Get("Content-Range") != "bytes */10000" || len(g.body) > 2000) {
				t.Errorf("416 page: %v %d bytes", g.header, len(g.body))
			}
		})
	}
	if g := e.get("GET", url, map[string]string{"Range": "bytes=3-5"}); g.body != "345" || g.header.Get("Content-Range") != "bytes 3-5/10000" {
		t.Errorf("range body %q %v", g.body, g.header)
	}
}

// TestLinkGroupMember: a group link stops working when its creator leaves the group.
func TestLinkGroupMember(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	e := startLinks(t, map[string]string{"FILESHED_STORAGE_BASE_PATH": base, "FILESHED_GROUPS_STATIC": `{"team":["alice"]}`})
	e.write("groups/team/data/plan.txt", "plan")
	url := e.link("alice", map[string]any{"zone": "group", "group": "team", "path": "plan.txt"})["url"].(string)
	if g := e.get("GET", url, nil); g.status != 200 || g.body != "plan" {
		t.Fatalf("member's link: %d", g.status)
	}
	e.stop()
	// The administrator removes alice from the group and restarts: same storage, same key.
	e2 := startLinks(t, map[string]string{"FILESHED_STORAGE_BASE_PATH": base, "FILESHED_GROUPS_STATIC": `{"team":["bob"]}`})
	url2 := e2.srv.URL + url[strings.Index(url, "/dl/"):]
	if g := e2.get("GET", url2, nil); g.status != http.StatusGone {
		t.Errorf("link of a former member: %d %q", g.status, g.body)
	}
}

// grepLines keeps the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestLinkUploadsZone: a link to a chat upload serves the file of that conversation.
func TestLinkUploadsZone(t *testing.T) {
	t.Parallel()
	e := startLinks(t, nil)
	e.write("users/alice/Uploads/chat-7/in.txt", "uploaded")
	h := as("alice")
	h["X-OpenWebUI-Chat-Id"] = "chat-7"
	r := e.post("shed_link_create", map[string]any{"zone": "uploads", "path": "in.txt"}, h)
	wantOK(t, r)
	if g := e.get("GET", r.Data["url"].(string), nil); g.status != 200 || g.body != "uploaded" {
		t.Errorf("uploads link: %d %q", g.status, g.body)
	}
}

// TestLinkParallelDownloadsRSSFlat: 10 clients download a large file at once; memory stays
// flat (the bytes go from the page cache to the sockets, never through a buffer per client).
// The 1 GiB version is BenchmarkLinkParallelRSS.
func TestLinkParallelDownloadsRSSFlat(t *testing.T) {
	if !alone(t) { // measures the process's peak RSS
		return
	}
	if testing.Short() {
		t.Skip("downloads 1.25 GiB")
	}
	e := startLinks(t, nil)
	const size = 128 << 20
	_, url := bigFile(t, e, size)
	download(t, url, size)
	resetPeak()
	before := peakRSSOf(t, os.Getpid())
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() { download(t, url, size) })
	}
	wg.Wait()
	if grown := peakRSSOf(t, os.Getpid()) - before; grown > 50<<20 {
		t.Errorf("peak RSS grew by %d MB during 10 parallel downloads", grown>>20)
	}
}

// TestLinkToSymlinkInsideZone: a link made through a symlink that stays in the zone serves
// its target while the target is unchanged.
func TestLinkToSymlinkInsideZone(t *testing.T) {
	t.Parallel()
	e := startLinks(t, nil)
	e.write("users/alice/Storage/data/real.txt", "real")
	if err := os.Symlink("real.txt", filepath.Join(e.base, "users/alice/Storage/data/alias.txt")); err != nil {
		t.Fatal(err)
	}
	url := e.link("alice", map[string]any{"zone": "storage", "path": "alias.txt"})["url"].(string)
	if g := e.get("GET", url, nil); g.status != 200 || g.body != "real" {
		t.Errorf("%d %q", g.status, g.body)
	}
}

// TestLinkMergedTool: the model's shed_link(action) reaches the three link tools.
func TestLinkMergedTool(t *testing.T) {
	t.Parallel()
	e := startLinks(t, nil)
	e.write("users/alice/Storage/data/m.txt", "merged")
	alice := as("alice")
	r := e.post("shed_link", map[string]any{"action": "create", "zone": "storage", "path": "m.txt"}, alice)
	wantOK(t, r)
	if g := e.get("GET", r.Data["url"].(string), nil); g.body != "merged" {
		t.Errorf("download %q", g.body)
	}
	if l := e.post("shed_link", map[string]any{"action": "list"}, alice); l.Data["count"].(float64) != 1 {
		t.Errorf("list %v", l.Data)
	}
	wantOK(t, e.post("shed_link", map[string]any{"action": "delete", "link_id": r.Data["link_id"]}, alice))
	wantError(t, e.post("shed_link", map[string]any{"action": "share"}, alice), "INVALID_PARAMETER")
}

// A download outlives the server's write timeout (sized for tool answers): a large file read
// by a slow client arrives whole.
func TestLinkDownloadOutlivesWriteTimeout(t *testing.T) {
	t.Parallel() // owns its server; waits more than it computes (issue 34)
	e := startLinksOn(t, nil, func(s *http.Server) { s.WriteTimeout = 200 * time.Millisecond })
	e.write("users/alice/Storage/data/big.bin", strings.Repeat("x", 16<<20))
	url := e.link("alice", map[string]any{"zone": "storage", "path": "big.bin"})["url"].(string)
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var n int64
	buf := make([]byte, 256<<10)
	for {
		time.Sleep(15 * time.Millisecond) // a slow reader: the server blocks on a full socket
		k, err := resp.Body.Read(buf)
		n += int64(k)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("download cut after %d bytes: %v", n, err)
		}
	}
	if n != 16<<20 {
		t.Fatalf("downloaded %d bytes, want %d", n, 16<<20)
	}
}
