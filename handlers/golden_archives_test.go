package handlers_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/fileshed/fileshed/core/archive/ziptest"
)

// TestGoldenArchives pins one answer per shape the archives family builds: zip with and
// without skipped entries, empty folders and a commit; zipinfo with and without warnings;
// unzip with skipped and replaced entries, committed, and with every entry skipped.
func TestGoldenArchives(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	call := func(tool string, args map[string]any) reply { return e.post(tool, args, nil) }
	e.write("users/local/Storage/data/src/a.txt", "alpha\n")
	e.write("users/local/Storage/data/src/sub/b.txt", "beta\n")
	if err := os.MkdirAll(filepath.Join(e.base, "users/local/Storage/data/src/empty"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(e.base, "users/local/Storage/data/src/link")); err != nil {
		t.Fatal(err)
	}
	wantOK(t, call("shed_create_file", map[string]any{"zone": "documents", "path": "docs/c.txt", "content": "gamma\n"}))
	e.zipAt("users/local/Storage/data/mixed.zip", zipOf(ziptest.Entry{Name: "ok/one.txt", Body: "1"},
		ziptest.Entry{Name: "ok/dir/"}, ziptest.Entry{Name: "ok/ln", Body: "one.txt", Mode: fs.ModeSymlink | 0o777}))
	e.zipAt("users/local/Storage/data/links.zip", zipOf(ziptest.Entry{Name: "ln", Body: "x", Mode: fs.ModeSymlink | 0o777}))

	pinAnswer(t, "archives_zip_skipped_empty_dirs", call("shed_zip", map[string]any{"zone": "storage", "src": "src", "include_empty_dirs": true}))
	pinAnswer(t, "archives_zip_documents", call("shed_zip", map[string]any{"zone": "documents", "src": "docs", "dest": "docs.zip"}), "commit")
	pinAnswer(t, "archives_zipinfo", call("shed_zipinfo", map[string]any{"zone": "documents", "path": "docs.zip"}), "modified")
	pinAnswer(t, "archives_zipinfo_warnings", call("shed_zipinfo", map[string]any{"zone": "storage", "path": "mixed.zip"}))
	pinAnswer(t, "archives_unzip_skipped", call("shed_unzip", map[string]any{"zone": "storage", "src": "mixed.zip", "dest": "out"}))
	pinAnswer(t, "archives_unzip_replaced", call("shed_unzip", map[string]any{"zone": "storage", "src": "mixed.zip", "dest": "out", "overwrite": true}))
	pinAnswer(t, "archives_unzip_documents", call("shed_unzip", map[string]any{"zone": "documents", "src": "docs.zip", "dest": "unpacked"}), "commit")
	pinAnswer(t, "archives_unzip_all_skipped", call("shed_unzip", map[string]any{"zone": "storage", "src": "links.zip", "dest": "none"}))
}
