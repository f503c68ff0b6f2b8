package admin_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAdminLinksListRevoke(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	l := serve(t, base)
	p := filepath.Join(base, "users/local/Storage/data/a.txt")
	_ = os.MkdirAll(filepath.Dir(p), 0o700)
	_ = os.WriteFile(p, []byte("a"), 0o600)
	r := l.call(t, "shed_link_create", map[string]any{"zone": "storage", "path": "a.txt", "max_downloads": 3}, "")
	data, _ := r["data"].(map[string]any)
	id, _ := data["link_id"].(string)
	url, _ := data["url"].(string)
	if id == "" {
		t.Fatalf("create: %v", r)
	}
	url = l.srv.URL + url[strings.Index(url, "/dl/"):] // public_url is the default listen address
	if resp, err := http.Get(url); err != nil || resp.StatusCode != 200 {
		t.Fatalf("download: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	code, out, _ := run(t, base, "links", "list")
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "active") || !strings.Contains(out, "1/3") {
		t.Fatalf("list (%d): %s", code, out)
	}
	if code, out, _ := run(t, base, "links", "revoke", id); code != 0 || !strings.Contains(out, "revoked "+id) {
		t.Fatalf("revoke (%d): %s", code, out)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusGone {
		t.Errorf("revoked by the admin, the link answers %d", resp.StatusCode)
	}
	l.close() // flushes the audit trail
	if code, out, _ := run(t, base, "audit", "export"); code != 0 || !strings.Contains(out, `"link_download"`) ||
		!strings.Contains(out, `"a.txt"`) || !strings.Contains(out, `"200"`) {
		t.Errorf("the download is not in the audit trail:\n%s", out)
	}
	if code, _, errOut := run(t, base, "links", "revoke", "nope"); code != 1 || !strings.Contains(errOut, "no link") {
		t.Errorf("revoke of a missing id: %d %s", code, errOut)
	}
	if code, out, _ := run(t, base, "links", "list", "--user", "someone"); code != 0 || strings.Contains(out, id) {
		t.Errorf("list --user someone: %s", out)
	}
}

// TestAdminBackupKeepsLinkKey: the key file travels with a backup, so a restored storage
// still recognises its links (410, not 404 as for a foreign token); they no longer serve,
// because restored files are new files (new inodes) and a link serves only the file it was
// made for (README "Download links").
func TestAdminBackupKeepsLinkKey(t *testing.T) {
	t.Parallel()
	base, backup, restored := t.TempDir(), filepath.Join(t.TempDir(), "b"), t.TempDir()
	l := serve(t, base)
	p := filepath.Join(base, "users/local/Storage/data/a.txt")
	_ = os.MkdirAll(filepath.Dir(p), 0o700)
	_ = os.WriteFile(p, []byte("kept"), 0o600)
	r := l.call(t, "shed_link_create", map[string]any{"zone": "storage", "path": "a.txt"}, "")
	url, _ := r["data"].(map[string]any)["url"].(string)
	if code, _, errOut := run(t, base, "backup", backup); code != 0 {
		t.Fatalf("backup: %s", errOut)
	}
	l.close()
	if code, _, errOut := run(t, restored, "restore", backup); code != 0 {
		t.Fatalf("restore: %s", errOut)
	}
	l2 := serve(t, restored)
	resp, err := http.Get(l2.srv.URL + url[strings.Index(url, "/dl/"):])
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusGone {
		t.Errorf("link after restore: %d, want 410 (404 = the key was lost)", resp.StatusCode)
	}
	// shed_link list says what the download does: the link is not active (issue 28).
	list := l2.call(t, "shed_link_list", nil, "")
	entry := list["data"].(map[string]any)["links"].([]any)[0].(map[string]any)
	if entry["state"] != "changed" || entry["url"] != nil {
		t.Errorf("list after restore: %v", entry)
	}
}
