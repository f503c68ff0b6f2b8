package handlers_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/core/confine"
)

const storageDir = "users/local/Storage/data"

// disk reads a file of the storage zone from disk ("" if missing).
func (e *env) disk(rel string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.base, storageDir, rel))
	if err != nil {
		return ""
	}
	return string(b)
}

// used is the accounted quota usage shown by shed_stats.
func (e *env) used(t *testing.T) int64 {
	t.Helper()
	r := e.post("shed_stats", nil, nil)
	wantOK(t, r)
	return int64(r.Data["total"].(map[string]any)["used_bytes"].(float64))
}

// noTemp fails if a temporary file of an atomic write is left anywhere under the storage.
func noTemp(t *testing.T, base string) {
	t.Helper()
	_ = filepath.Walk(base, func(p string, _ os.FileInfo, err error) error {
		if err == nil && confine.IsTempName(p) {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

func TestCreateFile(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	r := e.post("shed_create_file", map[string]any{"zone": "storage", "path": "notes/new/a.txt", "content": "hello\nworld"}, nil)
	wantOK(t, r)
	if r.Data["created"] != true || r.Data["position"] != "overwrite" || r.Data["file_size"] != float64(11) ||
		r.Message != "File created: 2 line(s) affected" {
		t.Fatalf("data: %s", r.raw)
	}
	if got := e.disk("notes/new/a.txt"); got != "hello\nworld" {
		t.Fatalf("content %q", got)
	}
	fi, _ := os.Stat(filepath.Join(e.base, storageDir, "notes/new/a.txt"))
	di, _ := os.Stat(filepath.Join(e.base, storageDir, "notes/new"))
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Fatalf("modes: file %v dir %v", fi.Mode(), di.Mode())
	}
	r = e.post("shed_create_file", map[string]any{"zone": "storage", "path": "notes/new/a.txt", "content": "x"}, nil)
	wantOK(t, r)
	if r.Data["created"] != false || r.Message != "File overwritten: 1 line(s) affected" || e.disk("notes/new/a.txt") != "x" {
		t.Fatalf("overwrite: %s", r.raw)
	}
	r = e.post("shed_create_file", map[string]any{"zone": "storage", "path": "b.bin", "content": "00 ff\n10", "file_type": "bytes"}, nil)
	wantOK(t, r)
	if e.disk("b.bin") != "\x00\xff\x10" || r.Data["bytes_written"] != float64(3) {
		t.Fatalf("bytes: %s %q", r.raw, e.disk("b.bin"))
	}
	r = e.post("shed_create_file", map[string]any{"zone": "storage", "path": "c.bin", "content": "AAEC", "file_type": "bytes", "content_format": "base64"}, nil)
	wantOK(t, r)
	if e.disk("c.bin") != "\x00\x01\x02" {
		t.Fatalf("base64: %q", e.disk("c.bin"))
	}
	if e.used(t) != 1+3+3 { // a.txt overwritten down to 1 byte, two 3-byte binaries
		t.Fatalf("usage %d", e.used(t))
	}
	noTemp(t, e.base)
}

func TestCreateFileRefusals(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_MAX_FILE_SIZE_MB": "1"})
	e.write(storageDir+"/file.txt", "x")
	e.write(storageDir+"/dir/keep.txt", "x")
	outside := t.TempDir()
	must(t, os.Symlink(outside, filepath.Join(e.base, storageDir, "out")))
	must(t, os.Symlink(filepath.Join(outside, "missing.txt"), filepath.Join(e.base, storageDir, "dangling-abs")))
	must(t, os.Symlink("../../../../../../missing.txt", filepath.Join(e.base, storageDir, "dangling-rel")))
	must(t, os.Symlink("made-by-link.txt", filepath.Join(e.base, storageDir, "dangling-in")))
	cases := []struct {
		name string
		body map[string]any
		code string
	}{
		{"uploads is read-only", map[string]any{"zone": "uploads", "path": "a.txt", "content": "x"}, "ZONE_READONLY"},
		{"bad file_type", map[string]any{"zone": "storage", "path": "a.txt", "content": "x", "file_type": "pdf"}, "INVALID_PARAMETER"},
		{"missing path", map[string]any{"zone": "storage", "content": "x"}, "MISSING_PARAMETER"},
		{"traversal", map[string]any{"zone": "storage", "path": "../../x.txt", "content": "x"}, "PATH_ESCAPE"},
		{"absolute", map[string]any{"zone": "storage", "path": "/etc/x", "content": "x"}, "PATH_ESCAPE"},
		{"NUL in path", map[string]any{"zone": "storage", "path": "a\x00b", "content": "x"}, "INVALID_PATH"},
		{"zone prefix", map[string]any{"zone": "storage", "path": "storage/a.txt", "content": "x"}, "PATH_STARTS_WITH_ZONE"},
		{"zone root", map[string]any{"zone": "storage", "path": ".", "content": "x"}, "NOT_A_FILE"},
		{"replace a directory", map[string]any{"zone": "storage", "path": "dir", "content": "x"}, "NOT_A_FILE"},
		{"parent is a file", map[string]any{"zone": "storage", "path": "file.txt/a.txt", "content": "x"}, "INVALID_PATH"},
		{"through a symlinked folder", map[string]any{"zone": "storage", "path": "out/x.txt", "content": "x"}, "PATH_ESCAPE"},
		{"dangling absolute symlink", map[string]any{"zone": "storage", "path": "dangling-abs", "content": "x"}, "PATH_ESCAPE"},
		{"dangling relative symlink out", map[string]any{"zone": "storage", "path": "dangling-rel", "content": "x"}, "PATH_ESCAPE"},
		{"NUL in text", map[string]any{"zone": "storage", "path": "n.txt", "content": "a\x00b"}, "INVALID_PARAMETER"},
		{"bad hex", map[string]any{"zone": "storage", "path": "a.bin", "content": "0g", "file_type": "bytes"}, "INVALID_PARAMETER"},
		{"odd hex", map[string]any{"zone": "storage", "path": "a.bin", "content": "abc", "file_type": "bytes"}, "INVALID_PARAMETER"},
		{"bad base64", map[string]any{"zone": "storage", "path": "a.bin", "content": "@@@", "file_type": "bytes", "content_format": "base64"}, "INVALID_PARAMETER"},
		{"bad content_format", map[string]any{"zone": "storage", "path": "a.bin", "content": "00", "file_type": "bytes", "content_format": "rot13"}, "INVALID_PARAMETER"},
		{"too large", map[string]any{"zone": "storage", "path": "big.txt", "content": strings.Repeat("x", 1<<20+1)}, "FILE_TOO_LARGE"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, e.post("shed_create_file", tc.body, nil), tc.code)
		})
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("something was written outside the zone: %v", entries)
	}
	for _, p := range []string{"a.txt", "n.txt", "a.bin", "big.txt", "dir/x"} {
		if _, err := os.Lstat(filepath.Join(e.base, storageDir, p)); err == nil {
			t.Errorf("%s was written", p)
		}
	}
	// A dangling symlink that stays inside the zone is written through (its target is created).
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "dangling-in", "content": "via link"}, nil))
	if e.disk("made-by-link.txt") != "via link" {
		t.Fatalf("target: %q", e.disk("made-by-link.txt"))
	}
	if e.used(t) != 1+1+8 {
		t.Fatalf("usage %d", e.used(t))
	}
	noTemp(t, e.base)
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
