package handlers_test

import (
	"github.com/fileshed/fileshed/core"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDelete(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "a.txt", "content": "12345"}, nil))
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "d/e/f.txt", "content": "123"}, nil))
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "d/g.txt", "content": "12"}, nil))
	if e.used(t) != 10 {
		t.Fatalf("usage %d", e.used(t))
	}
	r := e.post("shed_delete", map[string]any{"zone": "storage", "path": "a.txt"}, nil)
	wantOK(t, r)
	if r.Data["deleted"] != "a.txt" || r.Data["was_directory"] != false || r.Message != "Deleted: a.txt" || e.used(t) != 5 {
		t.Fatalf("file: %s usage %d", r.raw, e.used(t))
	}
	r = e.post("shed_delete", map[string]any{"zone": "storage", "path": "d"}, nil)
	wantOK(t, r)
	if r.Data["was_directory"] != true || r.Data["bytes_freed"] != float64(5) || e.used(t) != 0 {
		t.Fatalf("dir: %s usage %d", r.raw, e.used(t))
	}
	if _, err := os.Lstat(filepath.Join(e.base, storageDir, "d")); err == nil {
		t.Fatal("directory still there")
	}
	// Uploads allows deleting (cleaning imports).
	e.write("users/local/Uploads/unknown/up.txt", "u")
	wantOK(t, e.post("shed_delete", map[string]any{"zone": "uploads", "path": "up.txt"}, nil))
}

// TestDeleteSymlinkRemovesTheLinkNotTheTarget: deleting a link (to a file or a folder
// outside the zone) removes the link only.
func TestDeleteSymlinkRemovesTheLinkNotTheTarget(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	outside := t.TempDir()
	must(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("s"), 0o600))
	e.write(storageDir+"/keep.txt", "k")
	must(t, os.Symlink(outside, filepath.Join(e.base, storageDir, "outdir")))
	must(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(e.base, storageDir, "outfile")))
	must(t, os.Symlink("keep.txt", filepath.Join(e.base, storageDir, "infile")))
	for _, p := range []string{"outdir", "outfile", "infile"} {
		wantOK(t, e.post("shed_delete", map[string]any{"zone": "storage", "path": p}, nil))
		if _, err := os.Lstat(filepath.Join(e.base, storageDir, p)); err == nil {
			t.Fatalf("%s still there", p)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "secret.txt")); err != nil {
		t.Fatal("the target outside was deleted")
	}
	if e.disk("keep.txt") != "k" {
		t.Fatal("the target inside was deleted")
	}
	// A path through a link to outside is refused, never followed.
	must(t, os.Symlink(outside, filepath.Join(e.base, storageDir, "outdir2")))
	wantError(t, e.post("shed_delete", map[string]any{"zone": "storage", "path": "outdir2/secret.txt"}, nil), "PATH_ESCAPE")
	if _, err := os.Stat(filepath.Join(outside, "secret.txt")); err != nil {
		t.Fatal("the target outside was deleted")
	}
}

func TestDeleteRefusals(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(storageDir+"/.git/config", "x")
	e.write(storageDir+"/a.txt", "x")
	cases := []struct {
		name string
		args map[string]any
		code string
	}{
		{"zone root", map[string]any{"path": "."}, "INVALID_PATH"},
		{"zone root via ..", map[string]any{"path": "a/.."}, "INVALID_PATH"},
		{".git", map[string]any{"path": ".git"}, "PROTECTED_PATH"},
		{".git content", map[string]any{"path": ".git/config"}, "PROTECTED_PATH"},
		{"missing", map[string]any{"path": "nope"}, "FILE_NOT_FOUND"},
		{"traversal", map[string]any{"path": "../../../etc/passwd"}, "PATH_ESCAPE"},
		{"absolute", map[string]any{"path": "/etc/passwd"}, "PATH_ESCAPE"},
		{"missing path", map[string]any{"path": nil}, "MISSING_PARAMETER"},
		{"control character", map[string]any{"path": "a\nb"}, "INVALID_PATH"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"zone": "storage"}
			for k, v := range tc.args {
				args[k] = v
			}
			wantError(t, e.post("shed_delete", args, nil), tc.code)
		})
	}
	if e.disk(".git/config") != "x" || e.disk("a.txt") != "x" {
		t.Fatal("a refused delete removed something")
	}
}

// TestDeleteOddNamesStayInside: a name like `..\x` made by a command inside a folder must
// not be read as a path (it would name the zone's own "x").
func TestDeleteOddNamesStayInside(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(storageDir+"/x", "keep")
	e.write(storageDir+`/d/..\x`, "odd")
	e.write(storageDir+"/d/bad\x01name", "odd")
	wantOK(t, e.post("shed_delete", map[string]any{"zone": "storage", "path": "d"}, nil))
	if e.disk("x") != "keep" {
		t.Fatal("the zone's x was deleted")
	}
	if e.used(t) != 4 {
		t.Fatalf("usage %d after reconcile", e.used(t))
	}
}

func TestRename(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(storageDir+"/a.txt", "A")
	e.write(storageDir+"/b.txt", "BB")
	e.write(storageDir+"/dir/in.txt", "I")
	r := e.post("shed_rename", map[string]any{"zone": "storage", "old_path": "a.txt", "new_path": "new/deep/a2.txt"}, nil)
	wantOK(t, r)
	if e.disk("new/deep/a2.txt") != "A" || e.disk("a.txt") != "" || r.Message != "Renamed: a.txt -> new/deep/a2.txt" {
		t.Fatalf("rename: %s", r.raw)
	}
	if fi, _ := os.Stat(filepath.Join(e.base, storageDir, "new/deep")); fi.Mode().Perm() != 0o700 {
		t.Fatalf("new folder mode %v", fi.Mode())
	}
	wantOK(t, e.post("shed_rename", map[string]any{"zone": "storage", "old_path": "dir", "new_path": "dir2"}, nil))
	if e.disk("dir2/in.txt") != "I" {
		t.Fatal("folder not moved")
	}
	wantError(t, e.post("shed_rename", map[string]any{"zone": "storage", "old_path": "b.txt", "new_path": "new/deep/a2.txt"}, nil), "FILE_EXISTS")
	if e.disk("new/deep/a2.txt") != "A" {
		t.Fatal("overwritten without overwrite")
	}
	before := e.used(t)
	wantOK(t, e.post("shed_rename", map[string]any{"zone": "storage", "old_path": "b.txt", "new_path": "new/deep/a2.txt", "overwrite": true}, nil))
	if e.disk("new/deep/a2.txt") != "BB" || e.used(t) != before-1 {
		t.Fatalf("overwrite: usage %d -> %d", before, e.used(t))
	}
	wantError(t, e.post("shed_rename", map[string]any{"zone": "storage", "old_path": "new/deep/a2.txt", "new_path": "dir2", "overwrite": true}, nil), "FILE_EXISTS")
}

// TestRenameConfinesBothSides: traversal and symlinks on the source and the destination.
func TestRenameConfinesBothSides(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	outside := t.TempDir()
	must(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("s"), 0o600))
	e.write(storageDir+"/a.txt", "A")
	e.write(storageDir+"/file", "F")
	e.write(storageDir+"/sub/x.txt", "X")
	must(t, os.Symlink(outside, filepath.Join(e.base, storageDir, "outdir")))
	must(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(e.base, storageDir, "outlink")))
	must(t, os.Symlink("../a.txt", filepath.Join(e.base, storageDir, "sub/up")))
	cases := []struct {
		name     string
		old, new string
		code     string
	}{
		{"source traversal", "../../etc/passwd", "p", "PATH_ESCAPE"},
		{"source absolute", "/etc/passwd", "p", "PATH_ESCAPE"},
		{"source through a symlinked folder", "outdir/secret.txt", "stolen.txt", "PATH_ESCAPE"},
		{"destination traversal", "a.txt", "../../a.txt", "PATH_ESCAPE"},
		{"destination absolute", "a.txt", "/tmp/a.txt", "PATH_ESCAPE"},
		{"destination through a symlinked folder", "a.txt", "outdir/a.txt", "PATH_ESCAPE"},
		{"destination below a symlinked folder", "a.txt", "outdir/new/a.txt", "PATH_ESCAPE"},
		{"destination is an existing link", "a.txt", "outlink", "FILE_EXISTS"},
		{"destination below a link to a file outside", "a.txt", "outlink/x", "PATH_ESCAPE"},
		{"moving a link out of the zone", "outlink", "moved", "PATH_ESCAPE"},
		{"relative link would escape from its new place", "sub/up", "up", "PATH_ESCAPE"},
		{"destination in another zone", "a.txt", "documents/a.txt", "PATH_STARTS_WITH_ZONE"},
		{"destination with own zone", "a.txt", "storage/a.txt", "PATH_STARTS_WITH_ZONE"},
		{"source missing", "nope", "x", "FILE_NOT_FOUND"},
		{"zone root", ".", "x", "INVALID_PATH"},
		{"into itself", "sub", "sub/inner", "INVALID_PATH"},
		{"onto itself", "a.txt", "./a.txt", "INVALID_PATH"},
		{"parent is a file", "a.txt", "file/a.txt", "INVALID_PATH"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, e.post("shed_rename", map[string]any{"zone": "storage", "old_path": tc.old, "new_path": tc.new}, nil), tc.code)
		})
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Fatalf("outside changed: %v", entries)
	}
	if e.disk("a.txt") != "A" || e.disk("sub/up") != "A" {
		t.Fatal("a refused rename moved something")
	}
	wantError(t, e.post("shed_rename", map[string]any{"zone": "uploads", "old_path": "a", "new_path": "b"}, nil), "ZONE_READONLY")
	wantError(t, e.post("shed_rename", map[string]any{"zone": "storage", "old_path": "a.txt"}, nil), "MISSING_PARAMETER")
	// allow_zone_in_path makes "documents/" a plain folder of this zone.
	wantOK(t, e.post("shed_rename", map[string]any{"zone": "storage", "old_path": "a.txt", "new_path": "documents/a.txt", "allow_zone_in_path": true}, nil))
	if e.disk("documents/a.txt") != "A" {
		t.Fatal("not moved")
	}
}

func TestConvertEOL(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(storageDir+"/f.txt", "a\nb\n")
	r := e.post("shed_convert_eol", map[string]any{"zone": "storage", "path": "f.txt", "to": "dos"}, nil)
	wantOK(t, r)
	if e.disk("f.txt") != "a\r\nb\r\n" || r.Data["original_format"] != "unix" || r.Data["lines_converted"] != float64(2) || e.used(t) != 6 {
		t.Fatalf("to dos: %s %q", r.raw, e.disk("f.txt"))
	}
	r = e.post("shed_convert_eol", map[string]any{"zone": "storage", "path": "f.txt", "to": "CRLF"}, nil)
	wantOK(t, r)
	if r.Data["changed"] != false || r.Message != "File already in dos format" || r.Data["hash"] != core.HashOf([]byte("a\r\nb\r\n")) {
		t.Fatalf("unchanged (with the file's hash, issue 37): %s", r.raw)
	}
	r = e.post("shed_convert_eol", map[string]any{"zone": "storage", "path": "f.txt"}, nil)
	wantOK(t, r)
	if e.disk("f.txt") != "a\nb\n" || r.Data["original_format"] != "dos" || e.used(t) != 4 {
		t.Fatalf("to unix: %s", r.raw)
	}
	e.write(storageDir+"/bin", "a\x00\n")
	e.write(storageDir+"/d/x", "x")
	for name, tc := range map[string]struct {
		args map[string]any
		code string
	}{
		"windows is not a format": {map[string]any{"path": "f.txt", "to": "windows"}, "INVALID_MODE"},
		"directory":               {map[string]any{"path": "d"}, "INVALID_FORMAT"},
		"binary":                  {map[string]any{"path": "bin"}, "INVALID_FORMAT"},
		"missing":                 {map[string]any{"path": "nope"}, "FILE_NOT_FOUND"},
		"traversal":               {map[string]any{"path": "../x"}, "PATH_ESCAPE"},
	} {
		t.Run(name, func(t *testing.T) {
			args := map[string]any{"zone": "storage"}
			for k, v := range tc.args {
				args[k] = v
			}
			wantError(t, e.post("shed_convert_eol", args, nil), tc.code)
		})
	}
	wantError(t, e.post("shed_convert_eol", map[string]any{"zone": "uploads", "path": "x"}, nil), "ZONE_READONLY")
}

// TestWritesAreCommittedInDocuments: every write in a versioned zone makes one commit,
// renames with both paths.
func TestWritesAreCommittedInDocuments(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	steps := []struct {
		tool string
		args map[string]any
	}{
		{"shed_create_file", map[string]any{"path": "a.txt", "content": "a\n"}},
		{"shed_patch_text", map[string]any{"path": "a.txt", "content": "b\n", "message": "add b"}},
		{"shed_patch_bytes", map[string]any{"path": "a.txt", "content": "63"}},
		{"shed_convert_eol", map[string]any{"path": "a.txt", "to": "dos"}},
		{"shed_rename", map[string]any{"old_path": "a.txt", "new_path": "d/b.txt"}},
		{"shed_delete", map[string]any{"path": "d"}},
	}
	seenCommits := map[string]bool{}
	for _, s := range steps {
		s.args["zone"] = "documents"
		r := e.post(s.tool, s.args, nil)
		wantOK(t, r)
		c, _ := r.Data["commit"].(string)
		if len(c) != 40 || seenCommits[c] {
			t.Fatalf("%s: commit %q: %s", s.tool, c, r.raw)
		}
		seenCommits[c] = true
	}
	if strings.Contains(e.disk("a.txt"), "a") {
		t.Fatal("documents writes landed in storage")
	}
}

// TestSafeWritesHonourLockedEdits: a file opened with shed_lockedit_open by another
// conversation refuses safe patches, deletes and renames (FILE_LOCKED); safe=false writes
// through, as in the original.
func TestSafeWritesHonourLockedEdits(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(storageDir+"/f.txt", "1\n")
	a := map[string]string{"X-OpenWebUI-Chat-Id": "chat-a"}
	b := map[string]string{"X-OpenWebUI-Chat-Id": "chat-b"}
	wantOK(t, e.post("shed_lockedit_open", map[string]any{"zone": "storage", "path": "f.txt"}, a))
	wantError(t, e.post("shed_patch_text", map[string]any{"zone": "storage", "path": "f.txt", "content": "2\n"}, b), "FILE_LOCKED")
	wantError(t, e.post("shed_patch_bytes", map[string]any{"zone": "storage", "path": "f.txt", "content": "32"}, b), "FILE_LOCKED")
	wantError(t, e.post("shed_delete", map[string]any{"zone": "storage", "path": "f.txt"}, b), "FILE_LOCKED")
	wantError(t, e.post("shed_rename", map[string]any{"zone": "storage", "old_path": "f.txt", "new_path": "g.txt"}, b), "FILE_LOCKED")
	wantError(t, e.post("shed_convert_eol", map[string]any{"zone": "storage", "path": "f.txt", "to": "dos"}, b), "FILE_LOCKED")
	wantOK(t, e.post("shed_patch_text", map[string]any{"zone": "storage", "path": "f.txt", "content": "a\n"}, a))
	wantOK(t, e.post("shed_patch_text", map[string]any{"zone": "storage", "path": "f.txt", "content": "b\n", "safe": false}, b))
	if e.disk("f.txt") != "1\na\nb\n" {
		t.Fatalf("content %q", e.disk("f.txt"))
	}
}
