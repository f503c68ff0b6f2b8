package handlers_test

import (
	"archive/zip"
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// folderEnv makes alice's folder "pub" (a file, a subfolder, symlinks out of it) beside a
// secret file, and a link to the folder.
func folderEnv(t *testing.T, args map[string]any) (*env, string) {
	e := startLinks(t, nil)
	e.write("users/alice/Storage/data/secret.txt", "TOP SECRET")
	e.write("users/alice/Storage/data/pub/a.txt", "file a")
	e.write("users/alice/Storage/data/pub/sub/b.txt", "file b")
	dir := filepath.Join(e.base, "users/alice/Storage/data/pub")
	if err := os.Symlink("../secret.txt", filepath.Join(dir, "up")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("..", filepath.Join(dir, "updir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "passwd")); err != nil {
		t.Fatal(err)
	}
	all := map[string]any{"zone": "storage", "path": "pub"}
	for k, v := range args {
		all[k] = v
	}
	d := e.link("alice", all)
	if d["kind"] != "folder" {
		t.Fatalf("kind %v", d["kind"])
	}
	return e, d["url"].(string)
}

func TestLinkFolderSubPaths(t *testing.T) {
	t.Parallel()
	e, url := folderEnv(t, nil)
	if g := e.get("GET", url+"/a.txt", nil); g.status != 200 || g.body != "file a" {
		t.Fatalf("sub file: %d %q", g.status, g.body)
	}
	if g := e.get("GET", url+"/sub/b.txt", nil); g.status != 200 || g.body != "file b" {
		t.Fatalf("nested file: %d %q", g.status, g.body)
	}
	for _, sub := range []string{"/../secret.txt", "/%2e%2e/secret.txt", "/sub/%2E%2E/%2e%2e/secret.txt", "//../secret.txt",
		"/..%5Csecret.txt", "/sub%5C..%5C..%5Csecret.txt", "/a.txt%00", "/%00", "/up", "/updir/secret.txt", "/passwd",
		"/nope.txt", "/a.txt/x", "/sub/../../../../etc/passwd"} {
		g := e.get("GET", url+sub, nil)
		if strings.Contains(g.body, "TOP SECRET") || strings.Contains(g.body, "root:") || (g.status != 404 && g.status != 200) {
			t.Errorf("%s: %d %q", sub, g.status, g.body)
		}
		if g.status == 200 && !strings.Contains(g.body, "<table") && g.body != "file a" {
			t.Errorf("%s served %q", sub, g.body)
		}
	}
	if g := e.get("GET", url+"//a.txt", nil); g.status != 200 || g.body != "file a" {
		t.Errorf("double slash: %d %q", g.status, g.body)
	}
}

func TestLinkFolderPage(t *testing.T) {
	t.Parallel()
	e, url := folderEnv(t, nil)
	names := []string{`q"uote's.txt`, "cr\r\nlf.txt", "rtl\u202Etxt.exe", "emoji 😀.txt", "<img src=x onerror=alert(1)>.txt"}
	for _, n := range names {
		e.write("users/alice/Storage/data/pub/"+n, "x")
	}
	g := e.get("GET", url, nil)
	if g.status != 200 || !strings.HasPrefix(g.header.Get("Content-Type"), "text/html") {
		t.Fatalf("page: %d %v", g.status, g.header)
	}
	csp := g.header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "default-src 'none'") || strings.Contains(csp, "unsafe") || strings.Contains(g.body, "<script") {
		t.Errorf("page CSP %q", csp)
	}
	for _, bad := range []string{"<img src=x", "\u202E", "cr\r\nlf", "TOP SECRET", ">up<", ">passwd<", e.base} {
		if strings.Contains(g.body, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	for _, want := range []string{"<table", "<caption>", `<th scope="col">Name</th>`, `aria-label="Breadcrumb"`, `aria-current="page"`,
		"&lt;img src=x onerror=alert(1)&gt;.txt", "emoji 😀.txt", "q&#34;uote&#39;s.txt", url + "/sub", url + "?zip", "Download as zip"} {
		if !strings.Contains(g.body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	sub := e.get("GET", url+"/sub", nil)
	if !strings.Contains(sub.body, `<a href="`+url+`">pub</a>`) && !strings.Contains(sub.body, `href="`+url+`"><bdi>pub</bdi>`) {
		t.Errorf("sub page has no breadcrumb back to the root: %s", sub.body)
	}
	if d := e.get("GET", url+"/cr%0D%0Alf.txt", nil); d.status != 404 {
		t.Errorf("a name the confinement refuses was served: %d", d.status)
	}
	for _, n := range slices.Delete(names, 1, 2) {
		d := e.get("GET", url+"/"+urlEscape(n), nil)
		cd := d.header.Get("Content-Disposition")
		if d.status != 200 || strings.ContainsAny(cd, "\r\n\u202E") || !strings.Contains(cd, "filename*=UTF-8''") {
			t.Errorf("%q: %d %q", n, d.status, cd)
		}
	}
	if cd := e.get("GET", url+"/"+urlEscape("emoji 😀.txt"), nil).header.Get("Content-Disposition"); !strings.Contains(cd, `filename="emoji _.txt"`) ||
		!strings.Contains(cd, "filename*=UTF-8''emoji%20%F0%9F%98%80.txt") {
		t.Errorf("emoji disposition %q", cd)
	}
}

func urlEscape(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' {
			b.WriteByte(c)
		} else {
			b.WriteString("%" + strings.ToUpper(string("0123456789abcdef"[c>>4])+string("0123456789abcdef"[c&15])))
		}
	}
	return b.String()
}

// TestLinkFolderZip: the zip holds the folder's files and never a symlink's target; it
// counts as a download, the page does not.
func TestLinkFolderZip(t *testing.T) {
	t.Parallel()
	e, url := folderEnv(t, map[string]any{"max_downloads": 1})
	for range 2 {
		if g := e.get("GET", url, nil); g.status != 200 {
			t.Fatalf("page: %d", g.status)
		}
	}
	resp, err := http.Get(url + "?zip")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/zip" ||
		!strings.Contains(resp.Header.Get("Content-Disposition"), `attachment; filename="pub.zip"`) {
		t.Fatalf("zip: %d %v", resp.StatusCode, resp.Header)
	}
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		if !f.FileInfo().IsDir() {
			rc, _ := f.Open()
			b, _ := io.ReadAll(rc)
			rc.Close()
			if strings.Contains(string(b), "SECRET") || strings.Contains(string(b), "root:") {
				t.Errorf("%s holds %q", f.Name, b)
			}
		}
	}
	if want := []string{"a.txt", "sub/", "sub/b.txt"}; !slices.Equal(names, want) {
		t.Errorf("zip entries %v, want %v", names, want)
	}
	if g := e.get("GET", url+"?zip", nil); g.status != http.StatusGone {
		t.Errorf("second zip of a max-1 link: %d", g.status)
	}
}
