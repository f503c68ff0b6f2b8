package admin_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAdminLinksListRevoke(t *testing.T) {
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
	code, out, _ := run(t, base, "links", "list")
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "active") || !strings.Contains(out, "0/3") {
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
	if code, _, errOut := run(t, base, "links", "revoke", "nope"); code != 1 || !strings.Contains(errOut, "no link") {
		t.Errorf("revoke of a missing id: %d %s", code, errOut)
	}
	if code, out, _ := run(t, base, "links", "list", "--user", "someone"); code != 0 || strings.Contains(out, id) {
		t.Errorf("list --user someone: %s", out)
	}
}
