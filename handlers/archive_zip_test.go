package handlers_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fileshed/fileshed/core/archive/ziptest"
)

// TestZipFolderRoundTrip: a folder is zipped with its name as the top-level entry, and
// shed_unzip brings back the same files.
func TestZipFolderRoundTrip(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(storageDir+"/proj/a.txt", "alpha")
	e.write(storageDir+"/proj/sub/b.txt", "beta")
	if err := os.MkdirAll(filepath.Join(e.base, storageDir, "proj/empty"), 0o700); err != nil {
		t.Fatal(err)
	}
	used := e.used(t)
	r := e.post("shed_zip", map[string]any{"zone": "storage", "src": "proj", "include_empty_dirs": true}, nil)
	wantOK(t, r)
	if r.Data["zip_path"] != "proj.zip" || r.Data["files_count"] != float64(2) || r.Data["empty_dirs_count"] != float64(1) {
		t.Fatalf("data: %s", r.raw)
	}
	size := int64(r.Data["size_bytes"].(float64))
	if got := e.used(t) - used; got != size {
		t.Fatalf("usage grew by %d, the archive is %d bytes", got, size)
	}
	if got := strings.Join(zipEntries(t, filepath.Join(e.base, storageDir, "proj.zip")), ","); got != "proj/a.txt,proj/empty/,proj/sub/b.txt" {
		t.Fatalf("entries: %s", got)
	}
	wantOK(t, e.post("shed_unzip", map[string]any{"zone": "storage", "src": "proj.zip", "dest": "back"}, nil))
	if e.disk("back/proj/a.txt") != "alpha" || e.disk("back/proj/sub/b.txt") != "beta" {
		t.Fatal("round trip lost content")
	}
	// A file is stored under its name; dest gains ".zip"; an existing dest is refused.
	r = e.post("shed_zip", map[string]any{"zone": "storage", "src": "proj/a.txt", "dest": "out/one"}, nil)
	wantOK(t, r)
	if got := strings.Join(zipEntries(t, filepath.Join(e.base, storageDir, "out/one.zip")), ","); got != "a.txt" {
		t.Fatalf("entries: %s", got)
	}
	wantError(t, e.post("shed_zip", map[string]any{"zone": "storage", "src": "proj", "dest": "out/one.zip"}, nil), "FILE_EXISTS")
	noTemp(t, e.base)
}

// TestZipSkipsSymlinkToEtc: a folder holding symlinks to /etc and /etc/passwd is zipped
// without a byte from outside the zone; the links are listed as skipped, as is a FIFO.
func TestZipSkipsSymlinkToEtc(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(storageDir+"/f/ok.txt", "ok")
	dir := filepath.Join(e.base, storageDir, "f")
	for target, name := range map[string]string{"/etc": "etc", "/etc/passwd": "passwd", "ok.txt": "inside"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := e.post("shed_zip", map[string]any{"zone": "storage", "src": "f"}, nil)
	wantOK(t, r)
	if got := strings.Join(zipEntries(t, filepath.Join(e.base, storageDir, "f.zip")), ","); got != "f/ok.txt" {
		t.Fatalf("entries: %s", got)
	}
	if r.Data["skipped_count"] != float64(4) || !strings.Contains(r.Message, "4 skipped") {
		t.Fatalf("skipped: %s", r.raw)
	}
	// The source itself a symlink: refused, never followed.
	wantError(t, e.post("shed_zip", map[string]any{"zone": "storage", "src": "f/etc"}, nil), "INVALID_PATH")
}

// TestZipNeverIncludesItself: zipping the zone root into a file of the zone leaves the
// archive (and write temporaries) out of itself.
func TestZipNeverIncludesItself(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(storageDir+"/a.txt", "a")
	e.write(storageDir+"/d/b.txt", "b")
	r := e.post("shed_zip", map[string]any{"zone": "storage", "src": "."}, nil)
	wantOK(t, r)
	if r.Data["zip_path"] != "storage.zip" {
		t.Fatalf("data: %s", r.raw)
	}
	if got := strings.Join(zipEntries(t, filepath.Join(e.base, storageDir, "storage.zip")), ","); got != "a.txt,d/b.txt" {
		t.Fatalf("entries: %s", got)
	}
	r = e.post("shed_zip", map[string]any{"zone": "storage", "src": "d", "dest": "d/inner.zip"}, nil)
	wantOK(t, r)
	if got := strings.Join(zipEntries(t, filepath.Join(e.base, storageDir, "d/inner.zip")), ","); got != "d/b.txt" {
		t.Fatalf("entries: %s", got)
	}
}

// TestZipErrors: refused zones, parameters, quota; nothing is left behind.
func TestZipErrors(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_QUOTA_PER_USER_MB": "1"})
	e.write(storageDir+"/big.txt", ziptest.Noise(700<<10))
	e.write(uploadsDir+"/u.txt", "u")
	for _, tc := range []struct {
		name string
		args map[string]any
		code string
	}{
		{"uploads", map[string]any{"zone": "uploads", "src": "u.txt"}, "ZONE_FORBIDDEN"},
		{"no src", map[string]any{"zone": "storage"}, "MISSING_PARAMETER"},
		{"missing src", map[string]any{"zone": "storage", "src": "nope"}, "FILE_NOT_FOUND"},
		{"escape", map[string]any{"zone": "storage", "src": "../../x"}, "PATH_ESCAPE"},
		{"dest is the root", map[string]any{"zone": "storage", "src": "big.txt", "dest": "."}, "NOT_A_FILE"},
		{"over the quota", map[string]any{"zone": "storage", "src": "big.txt"}, "QUOTA_EXCEEDED"},
	} {
		t.Run(tc.name, func(t *testing.T) { wantError(t, e.post("shed_zip", tc.args, nil), tc.code) })
	}
	if _, err := os.Stat(filepath.Join(e.base, storageDir, "big.txt.zip")); err == nil {
		t.Fatal("archive left after QUOTA_EXCEEDED")
	}
	noTemp(t, e.base)
}

// TestZipInDocumentsCommits: the archive is committed like any write.
func TestZipInDocumentsCommits(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "documents", "path": "n/a.txt", "content": "a"}, nil))
	r := e.post("shed_zip", map[string]any{"zone": "documents", "src": "n"}, nil)
	wantOK(t, r)
	h := history(t, e, "n.zip")
	if r.Data["commit"] == nil || len(h) != 1 || !strings.Contains(h[0]["message"].(string), "Created ZIP: n.zip") {
		t.Fatalf("commit: %s %v", r.raw, h)
	}
}
