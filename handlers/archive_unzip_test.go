package handlers_test

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/core/archive/ziptest"
)

// TestUnzipFromUploadsIntoStorage: the everyday case, with the answer's fields, the modes
// reduced (an 04755 entry becomes 0700, no setuid), the quota grown by the bytes written,
// and no staging folder left.
func TestUnzipFromUploadsIntoStorage(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.zipAt(uploadsDir+"/proj.zip", zipOf(
		ziptest.Entry{Name: "proj/"},
		ziptest.Entry{Name: "proj/README.md", Body: "# hi\n"},
		ziptest.Entry{Name: "proj/bin/run.sh", Body: "#!/bin/sh\n", Mode: 0o4755 | fs.ModeSetuid},
		ziptest.Entry{Name: "proj/world.txt", Body: "w", Mode: 0o666},
	))
	before := e.used(t)
	r := e.post("shed_unzip", map[string]any{"zone": "storage", "src_zone": "uploads", "src": "proj.zip", "dest": "imports"}, nil)
	wantOK(t, r)
	if r.Data["files_count"] != float64(4) || r.Data["destination"] != "imports" || r.Data["source_zone"] != "Uploads" ||
		r.Data["destination_zone"] != "Storage" || r.Data["skipped_count"] != float64(0) {
		t.Fatalf("data: %s", r.raw)
	}
	if e.disk("imports/proj/README.md") != "# hi\n" {
		t.Fatalf("README: %q", e.disk("imports/proj/README.md"))
	}
	for rel, want := range map[string]fs.FileMode{"imports/proj/bin/run.sh": 0o700, "imports/proj/world.txt": 0o600, "imports/proj": fs.ModeDir | 0o700} {
		fi, err := os.Lstat(filepath.Join(e.base, storageDir, rel))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode() & (fs.ModeType | fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky); got != want {
			t.Errorf("%s: mode %v, want %v", rel, got, want)
		}
	}
	if got := e.used(t) - before; got != 5+10+1 {
		t.Errorf("usage grew by %d, want 16", got)
	}
	noTemp(t, e.base)
}

// TestUnzipRefusesZipSlip: every traversal spelling is refused before anything is written,
// and nothing appears inside or outside the zone.
func TestUnzipRefusesZipSlip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, entry, code string }{
		{"dot-dot", "../../x", "PATH_ESCAPE"},
		{"absolute", "/abs", "PATH_ESCAPE"},
		{"drive letter", `C:\x`, "PATH_ESCAPE"},
		{"backslash dot-dot", `a\..\..\x`, "PATH_ESCAPE"},
		{"inner dot-dot", "a/../../../x", "PATH_ESCAPE"},
		{"NUL", "a\x00b", "INVALID_PATH"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := start(t, nil)
			e.zipAt(storageDir+"/in/slip.zip", zipOf(ziptest.Entry{Name: "first.txt", Body: "ok"}, ziptest.Entry{Name: tc.entry, Body: "evil"}))
			before := snapshot(t, e.base+"/users/local/Storage")
			r := e.post("shed_unzip", map[string]any{"zone": "storage", "src": "in/slip.zip"}, nil)
			wantError(t, r, tc.code)
			if r.Details["entry"] != tc.entry {
				t.Errorf("details: %s", r.raw)
			}
			if after := snapshot(t, e.base+"/users/local/Storage"); after != before {
				t.Fatalf("the zone changed:\n%s\n---\n%s", before, after)
			}
			_ = filepath.Walk(filepath.Join(e.base, "users"), func(p string, fi os.FileInfo, err error) error { // the zones (not the server's own files)
				if err == nil && fi.Mode().IsRegular() && !strings.HasSuffix(p, ".zip") {
					t.Errorf("file written: %s", p)
				}
				return nil
			})
		})
	}
}

// TestUnzipNeverCreatesSymlinks: a symlink entry to /etc followed by a file entry written
// "through" it: the link is skipped (reported), the file lands in a real folder of the
// zone, and /etc is untouched.
func TestUnzipNeverCreatesSymlinks(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.zipAt(storageDir+"/l.zip", zipOf(
		ziptest.Entry{Name: "link", Body: "/etc", Mode: fs.ModeSymlink | 0o777},
		ziptest.Entry{Name: "link/passwd", Body: "pwned"},
		ziptest.Entry{Name: "rel", Body: "../../../../../../etc", Mode: fs.ModeSymlink | 0o777},
	))
	r := e.post("shed_unzip", map[string]any{"zone": "storage", "src": "l.zip", "dest": "out"}, nil)
	wantOK(t, r)
	if r.Data["skipped_count"] != float64(2) || !strings.Contains(r.Message, "2 entries skipped") {
		t.Fatalf("answer: %s", r.raw)
	}
	fi, err := os.Lstat(filepath.Join(e.base, storageDir, "out/link"))
	if err != nil || !fi.IsDir() {
		t.Fatalf("out/link: %v %v", fi, err)
	}
	if _, err := os.Lstat(filepath.Join(e.base, storageDir, "out/rel")); err == nil {
		t.Fatal("a symlink entry was created")
	}
	if e.disk("out/link/passwd") != "pwned" {
		t.Fatal("the file entry was not written inside the zone")
	}
	if b, _ := os.ReadFile("/etc/passwd"); bytes.Contains(b, []byte("pwned")) {
		t.Fatal("/etc/passwd was written")
	}
}

// TestUnzipRefusesBombs: bombs generated here (streamed to disk, never in memory) are
// refused with ZIP_BOMB, from the headers or while extracting; the zone, the quota and
// the disk are as before.
func TestUnzipRefusesBombs(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(storageDir+"/keep.txt", "kept")
	for _, tc := range []struct {
		name, limit string
		gen         func(io.Writer) error
		streamed    bool // only the bytes read reveal it: shed_zipinfo cannot warn
	}{
		// 27 MB of deflate expanding to 4 GB, with an honest header.
		{"27 MB to 4 GB ratio bomb", "ratio", func(w io.Writer) error { return ziptest.Bomb(w, 16_646_000, ziptest.ZerosSize(16_646_000), 0) }, false},
		// The same kernel, padded so that the declared ratio looks harmless: caught on the
		// bytes read.
		{"ratio bomb behind a padded header", "ratio", func(w io.Writer) error { return ziptest.Bomb(w, 1_000_000, 250<<20, 2<<20) }, true},
		{"header claims 10 bytes for 1 GB", "size_mismatch", func(w io.Writer) error { return ziptest.Bomb(w, 4_000_000, 10, 0) }, false},
		{"header claims 8 MB for 1 GB", "ratio", func(w io.Writer) error { return ziptest.Bomb(w, 4_000_000, 8<<20, 0) }, true},
		{"stored entry longer than its header", "size_mismatch", func(w io.Writer) error { return ziptest.Longer(w, 2<<20, 2<<20-1000) }, true},
		{"Fifield overlapping entries, 70 KB to 4 GB", "overlap", func(w io.Writer) error { return ziptest.Overlapped(w, 740, 20_900) }, false},
		{"100,000 empty entries", "entries", func(w io.Writer) error { return ziptest.Many(w, 100_000) }, false},
		{"1,000-deep path", "depth", zipOf(ziptest.Entry{Name: strings.Repeat("d/", 1000) + "x", Body: "x"}), false},
		{"2,000-byte name", "name_length", zipOf(ziptest.Entry{Name: strings.Repeat(strings.Repeat("n", 200)+"/", 10) + "x", Body: "x"}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.zipAt(uploadsDir+"/bomb.zip", tc.gen)
			before, used := snapshot(t, e.base+"/users/local/Storage"), e.used(t)
			r := e.post("shed_unzip", map[string]any{"zone": "storage", "src_zone": "uploads", "src": "bomb.zip"}, nil)
			wantError(t, r, "ZIP_BOMB")
			if r.Details["limit"] != tc.limit {
				t.Fatalf("limit: %s", r.raw)
			}
			if after := snapshot(t, e.base+"/users/local/Storage"); after != before || e.used(t) != used {
				t.Fatalf("the zone or the quota changed:\n%s\n---\n%s", before, after)
			}
			if tc.streamed {
				return
			}
			// shed_zipinfo lists it with a warning instead of refusing to look.
			r = e.post("shed_zipinfo", map[string]any{"zone": "uploads", "path": "bomb.zip"}, nil)
			wantOK(t, r)
			if r.Data["warnings_count"].(float64) < 1 {
				t.Fatalf("zipinfo without warnings: %s", r.raw[:min(len(r.raw), 400)])
			}
		})
	}
	noTemp(t, e.base)
}

// TestUnzipNestedArchivesAreNotExpanded: a zip of zips (the 42.zip shape) extracts its
// inner archives as files.
func TestUnzipNestedArchivesAreNotExpanded(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	var inner bytes.Buffer
	if err := ziptest.Bomb(&inner, 100_000, ziptest.ZerosSize(100_000), 0); err != nil {
		t.Fatal(err)
	}
	var es []ziptest.Entry
	for _, n := range []string{"0", "1", "2", "3"} {
		es = append(es, ziptest.Entry{Name: "lib" + n + ".zip", Body: inner.String()})
	}
	e.zipAt(storageDir+"/42.zip", zipOf(es...))
	r := e.post("shed_unzip", map[string]any{"zone": "storage", "src": "42.zip", "dest": "n"}, nil)
	wantOK(t, r)
	if got := e.disk("n/lib3.zip"); got != inner.String() {
		t.Fatalf("inner archive: %d bytes", len(got))
	}
}

// TestUnzipCaseCollisionsAreDeterministic: of A.txt and a.txt the first wins and the
// other is reported skipped, the same way every time.
func TestUnzipCaseCollisionsAreDeterministic(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.zipAt(storageDir+"/c.zip", zipOf(ziptest.Entry{Name: "A.txt", Body: "upper"}, ziptest.Entry{Name: "a.txt", Body: "lower"},
		ziptest.Entry{Name: "A.txt", Body: "dup"}))
	for _, dest := range []string{"one", "two"} {
		r := e.post("shed_unzip", map[string]any{"zone": "storage", "src": "c.zip", "dest": dest}, nil)
		wantOK(t, r)
		if e.disk(dest+"/A.txt") != "upper" || e.disk(dest+"/a.txt") != "" || r.Data["skipped_count"] != float64(2) {
			t.Fatalf("%s: %s", dest, r.raw)
		}
	}
}

// TestUnzipSkipsGitInVersionedZones: .git/hooks/post-commit is never written into
// Documents; the rest is extracted with one commit.
func TestUnzipSkipsGitInVersionedZones(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.zipAt(storageDir+"/g.zip", zipOf(ziptest.Entry{Name: ".git/hooks/post-commit", Body: "#!/bin/sh\ntouch /tmp/pwned\n", Mode: 0o755},
		ziptest.Entry{Name: "notes.txt", Body: "n"}, ziptest.Entry{Name: "sub/.GIT/config", Body: "[core]\nfsmonitor = evil\n"},
		ziptest.Entry{Name: ".fileshed-tmp-AAAAAAAAAAAAAAAAAAAAAAAAAA/x", Body: "would be swept"}))
	r := e.post("shed_unzip", map[string]any{"zone": "documents", "src_zone": "storage", "src": "g.zip", "dest": "imp"}, nil)
	wantOK(t, r)
	docs := filepath.Join(e.base, "users/local/Documents/data/imp")
	if _, err := os.Stat(filepath.Join(docs, ".git")); err == nil {
		t.Fatal(".git extracted into Documents")
	}
	if _, err := os.Stat(filepath.Join(docs, "sub/.GIT")); err == nil {
		t.Fatal(".GIT extracted into Documents")
	}
	if r.Data["commit"] == nil || r.Data["skipped_count"] != float64(3) {
		t.Fatalf("answer: %s", r.raw)
	}
	h := history(t, e, "imp/notes.txt")
	if len(h) != 1 || !strings.Contains(h[0]["message"].(string), "Extracted Storage:g.zip to imp") {
		t.Fatalf("history: %v", h)
	}
	r = e.post("shed_unzip", map[string]any{"zone": "documents", "src_zone": "storage", "src": "g.zip", "dest": ".git/x"}, nil)
	wantError(t, r, "PROTECTED_PATH")
}

// TestUnzipInvalidFormat: a .zip that is a gzip, a tar, truncated or empty is named for
// what it is.
func TestUnzipInvalidFormat(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	tar := make([]byte, 1024)
	copy(tar, "f.txt")
	copy(tar[257:], "ustar\x0000")
	var good bytes.Buffer
	_ = ziptest.Build(&good, ziptest.Entry{Name: "a.txt", Body: strings.Repeat("abc", 3000)})
	for _, tc := range []struct {
		name, detected string
		content        []byte
	}{
		{"gzip", "gzip", []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0}},
		{"tar", "tar", tar},
		{"empty", "empty", nil},
		{"truncated", "", good.Bytes()[:good.Len()-30]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.write(storageDir+"/"+tc.name+".zip", string(tc.content))
			for _, tool := range []string{"shed_unzip", "shed_zipinfo"} {
				arg := map[string]any{"zone": "storage", "src": tc.name + ".zip", "path": tc.name + ".zip"}
				r := e.post(tool, arg, nil)
				wantError(t, r, "INVALID_FORMAT")
				if tc.detected != "" && r.Details["detected"] != tc.detected {
					t.Fatalf("%s: %s", tool, r.raw)
				}
			}
		})
	}
	// A corrupt entry late in the archive: the files before it are not left behind.
	e.zipAt(storageDir+"/bad.zip", func(w io.Writer) error {
		return ziptest.Build(w, ziptest.Entry{Name: "one.txt", Body: "first"}, ziptest.Entry{Name: "two.txt", Body: strings.Repeat("x", 100), Stored: true})
	})
	p := filepath.Join(e.base, storageDir, "bad.zip")
	content, _ := os.ReadFile(p)
	j := bytes.Index(content, []byte(strings.Repeat("x", 100)))
	content[j+50] = 'y' // the CRC no longer matches
	_ = os.WriteFile(p, content, 0o600)
	before, used := snapshot(t, e.base+"/users/local/Storage"), e.used(t)
	r := e.post("shed_unzip", map[string]any{"zone": "storage", "src": "bad.zip", "dest": "bad"}, nil)
	wantError(t, r, "INVALID_FORMAT")
	if r.Details["entry"] != "two.txt" {
		t.Fatalf("details: %s", r.raw)
	}
	if after := snapshot(t, e.base+"/users/local/Storage"); after != before || e.used(t) != used {
		t.Fatalf("partial extraction left:\n%s", after)
	}
}
