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

	"github.com/fileshed/fileshed/core/confine"
)

// TestDownloadsNeverShipGit (issue 32 item 2): a .git in a versioned zone (one that
// pre-dates the rule, or came in by hand) in any of git's spellings, and fileshed's own
// temporary names, are never shipped: not by shed_zip, not by a folder link's zip, its
// listing or its sub-paths. shed_tree shows every entry a download ships (dotfiles too:
// nothing shipped is hidden) and shows a protected name that exists, marked, without
// listing what is inside it.
func TestDownloadsNeverShipGit(t *testing.T) {
	t.Parallel()
	e := startLinks(t, nil)
	data := filepath.Join(e.base, "users/alice/Documents/data")
	e.write("users/alice/Documents/data/proj/a.txt", "a")
	e.write("users/alice/Documents/data/proj/.env", "KEY=1")
	e.write("users/alice/Documents/data/proj/.git/config", "[core]\n\tfsmonitor = evil\n")
	e.write("users/alice/Documents/data/proj/.git:x", "gitdir: evil")
	e.write("users/alice/Documents/data/proj/sub/GIT~1/hooks/post-checkout", "#!/bin/sh\necho evil\n")
	e.write("users/alice/Documents/data/proj/sub/b.txt", "b")
	e.write("users/alice/Documents/data/proj/"+confine.TempName(), "half-written")
	shipped := []string{".env", "a.txt", "sub/", "sub/b.txt"}

	r := e.post("shed_zip", map[string]any{"zone": "documents", "src": "proj", "dest": "proj.zip"}, as("alice"))
	wantOK(t, r)
	b, err := os.ReadFile(filepath.Join(data, "proj.zip"))
	must(t, err)
	if got, want := zipNames(t, b, "proj/"), []string{".env", "a.txt", "sub/b.txt"}; !slices.Equal(got, want) {
		t.Errorf("shed_zip entries %v, want %v", got, want)
	}

	url := e.link("alice", map[string]any{"zone": "documents", "path": "proj"})["url"].(string)
	resp, err := http.Get(url + "?zip")
	must(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("zip: %d", resp.StatusCode)
	}
	if got := zipNames(t, body, ""); !slices.Equal(got, shipped) {
		t.Errorf("link zip entries %v, want %v", got, shipped)
	}
	page := e.get("GET", url, nil)
	if page.status != http.StatusOK || strings.Contains(page.body, ".git") || strings.Contains(page.body, "GIT~1") ||
		strings.Contains(page.body, ".fileshed-tmp-") || !strings.Contains(page.body, ".env") {
		t.Errorf("folder page (%d) lists a protected name or hides .env:\n%s", page.status, page.body)
	}
	for _, sub := range []string{"/.git/config", "/.git:x", "/sub/GIT~1/hooks/post-checkout", "/.git"} {
		if g := e.get("GET", url+sub, nil); g.status != http.StatusNotFound {
			t.Errorf("GET %s: %d %q", sub, g.status, g.body)
		}
	}

	r = e.post("shed_tree", map[string]any{"zone": "documents", "path": "proj", "depth": 4}, as("alice"))
	wantOK(t, r)
	tree := r.Data["tree"].(string)
	for _, want := range []string{".env", ".git/ (protected", ".git:x (protected", "GIT~1/ (protected", "b.txt"} {
		if !strings.Contains(tree, want) {
			t.Errorf("tree lacks %q:\n%s", want, tree)
		}
	}
	for _, not := range []string{"config", "hooks", ".fileshed-tmp-"} {
		if strings.Contains(tree, not) {
			t.Errorf("tree shows %q:\n%s", not, tree)
		}
	}
}

// zipNames lists the entries of the zip b, without the prefix.
func zipNames(t *testing.T, b []byte, prefix string) []string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	must(t, err)
	var names []string
	for _, f := range zr.File {
		names = append(names, strings.TrimPrefix(f.Name, prefix))
	}
	slices.Sort(names)
	return names
}
