package handlers_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	uploadsDir   = "users/local/Uploads/unknown"
	documentsDir = "users/local/Documents/data"
)

func TestBridgeMoveUploadsToStorage(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(uploadsDir+"/report.pdf", "pdf!")
	e.write(uploadsDir+"/batch/a.csv", "a")
	e.write(uploadsDir+"/batch/sub/b.csv", "bb")
	before := e.used(t)
	r := e.post("shed_move_uploads_to_storage", map[string]any{"src": "report.pdf", "dest": "in/report.pdf"}, nil)
	wantOK(t, r)
	if r.Message != "Moved: Uploads/report.pdf -> Storage/in/report.pdf" || r.Data["type"] != "file" {
		t.Fatalf("answer: %s", r.raw)
	}
	if e.disk("in/report.pdf") != "pdf!" || exists(e, uploadsDir+"/report.pdf") {
		t.Fatal("not moved")
	}
	// A folder moves whole; a dest ending in '/' keeps the name.
	r = e.post("shed_move_uploads_to_storage", map[string]any{"src": "batch", "dest": "in/"}, nil)
	wantOK(t, r)
	if e.disk("in/batch/sub/b.csv") != "bb" || r.Data["files"] != float64(2) || r.Data["dest"] != "in/batch" {
		t.Fatalf("folder: %s", r.raw)
	}
	if u := e.used(t); u != before {
		t.Fatalf("a move within the user's space changed the usage: %d -> %d", before, u)
	}
	r = e.post("shed_move_uploads_to_storage", map[string]any{"src": "report.pdf", "dest": "x"}, nil)
	wantError(t, r, "FILE_NOT_FOUND")
	if !strings.Contains(r.Hint, "shed_import") {
		t.Fatalf("hint: %s", r.raw)
	}
}

// TestBridgeWholeUploadFolder: src='.' moves the conversation's whole upload folder (the
// original's behaviour); the next call finds an empty Uploads again.
func TestBridgeWholeUploadFolder(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(uploadsDir+"/a.txt", "a")
	e.write(uploadsDir+"/sub/b.txt", "bb")
	wantError(t, e.post("shed_move_uploads_to_storage", map[string]any{"src": ".", "dest": "."}, nil), "INVALID_PATH")
	wantError(t, e.post("shed_copy_storage_to_documents", map[string]any{"src": ".", "dest": "all"}, nil), "INVALID_PATH")
	r := e.post("shed_move_uploads_to_storage", map[string]any{"src": ".", "dest": "imports/chat"}, nil)
	wantOK(t, r)
	if r.Message != "Moved: Uploads/. -> Storage/imports/chat" || r.Data["files"] != float64(2) {
		t.Fatalf("answer: %s", r.raw)
	}
	if e.disk("imports/chat/a.txt") != "a" || e.disk("imports/chat/sub/b.txt") != "bb" {
		t.Fatal("not moved")
	}
	r = e.post("shed_tree", map[string]any{"zone": "uploads"}, nil)
	wantOK(t, r)
	if strings.Contains(r.raw, "a.txt") {
		t.Fatalf("uploads still lists the files: %s", r.raw)
	}
	if u := e.used(t); u != 3 {
		t.Fatalf("usage %d, want 3", u)
	}
}

func TestBridgeDocumentsSidesCommit(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(uploadsDir+"/a.md", "from chat")
	r := e.post("shed_move_uploads_to_documents", map[string]any{"src": "a.md", "dest": "notes/a.md"}, nil)
	wantOK(t, r)
	if r.Message != "Moved and committed: Uploads/a.md -> Documents/notes/a.md" || len(r.Data["commit"].(string)) != 40 {
		t.Fatalf("answer: %s", r.raw)
	}
	if got := git(t, e, "log", "-1", "--format=%an|%s", "--", "notes/a.md"); got != "local|Import a.md" {
		t.Fatalf("commit: %q", got)
	}
	// Storage -> Documents copies (the source stays), with the caller's message.
	e.write(storageDir+"/draft/x.txt", "x1")
	e.write(storageDir+"/draft/y.txt", "y22")
	e.write(storageDir+"/draft/.fileshed-tmp-"+strings.Repeat("A", 26), "a write in flight: never copied")
	before, history := e.used(t), historyOnDisk(t, e)
	r = e.post("shed_copy_storage_to_documents", map[string]any{"src": "draft", "dest": "final", "message": "publish"}, nil)
	wantOK(t, r)
	if readFile(t, e, documentsDir+"/final/y.txt") != "y22" || e.disk("draft/x.txt") != "x1" {
		t.Fatal("not copied")
	}
	if u, want := e.used(t), before+5+historyOnDisk(t, e)-history; u != want {
		t.Fatalf("usage %d, want %d (the copies and their history)", u, want)
	}
	if got := git(t, e, "log", "-1", "--format=%an|%s"); got != "local|publish" {
		t.Fatalf("commit: %q", got)
	}
	if got := git(t, e, "ls-files", "final"); got != "final/x.txt\nfinal/y.txt" {
		t.Fatalf("tracked: %q", got)
	}
	// Documents -> Storage commits the removal.
	r = e.post("shed_move_documents_to_storage", map[string]any{"src": "final", "dest": "back"}, nil)
	wantOK(t, r)
	if e.disk("back/x.txt") != "x1" || exists(e, documentsDir+"/final") {
		t.Fatal("not moved")
	}
	if got := git(t, e, "ls-files", "final"); got != "" {
		t.Fatalf("still tracked: %q", got)
	}
	if got := git(t, e, "log", "-1", "--format=%an|%s"); got != "local|Move to Storage: final" {
		t.Fatalf("commit: %q", got)
	}
	if u, want := e.used(t), before+5+historyOnDisk(t, e)-history; u != want {
		t.Fatalf("usage %d after the move, want %d (the files moved, and the history kept)", u, want)
	}
	if got := git(t, e, "status", "--porcelain"); got != "" {
		t.Fatalf("work tree not clean: %q", got)
	}
}

func TestBridgeOverwrite(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(uploadsDir+"/a.txt", "new")
	e.write(storageDir+"/a.txt", "older content")
	e.write(storageDir+"/dir/k.txt", "k")
	e.write(uploadsDir+"/dir/k.txt", "k2")
	before := e.used(t)
	wantError(t, e.post("shed_move_uploads_to_storage", map[string]any{"src": "a.txt", "dest": "a.txt"}, nil), "FILE_EXISTS")
	r := e.post("shed_move_uploads_to_storage", map[string]any{"src": "a.txt", "dest": "a.txt", "overwrite": true}, nil)
	wantOK(t, r)
	if e.disk("a.txt") != "new" || r.Data["replaced"] != true {
		t.Fatalf("overwrite: %s", r.raw)
	}
	if u := e.used(t); u != before-int64(len("older content")) {
		t.Fatalf("usage %d, want %d", u, before-int64(len("older content")))
	}
	// Folders are never replaced.
	r = e.post("shed_move_uploads_to_storage", map[string]any{"src": "dir", "dest": "dir", "overwrite": true}, nil)
	wantError(t, r, "FILE_EXISTS")
	if !strings.Contains(r.Hint, "never a folder") || e.disk("dir/k.txt") != "k" || !exists(e, uploadsDir+"/dir/k.txt") {
		t.Fatalf("folder overwrite: %s", r.raw)
	}
	// A file over a folder neither.
	e.write(uploadsDir+"/dir2", "f")
	e.write(storageDir+"/dir2/z", "z")
	wantError(t, e.post("shed_move_uploads_to_storage", map[string]any{"src": "dir2", "dest": "dir2", "overwrite": true}, nil), "FILE_EXISTS")
}

func TestBridgeParameters(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(uploadsDir+"/a.txt", "a")
	e.write(storageDir+"/f", "file")
	cases := []struct {
		name string
		tool string
		args map[string]any
		code string
	}{
		{"no src", "shed_move_uploads_to_storage", map[string]any{"dest": "x"}, "MISSING_PARAMETER"},
		{"no dest", "shed_copy_storage_to_documents", map[string]any{"src": "f"}, "MISSING_PARAMETER"},
		{"src escapes", "shed_move_uploads_to_storage", map[string]any{"src": "../../Storage/data/f", "dest": "x"}, "PATH_ESCAPE"},
		{"dest escapes", "shed_move_uploads_to_storage", map[string]any{"src": "a.txt", "dest": "../../Documents/data/a.txt"}, "PATH_ESCAPE"},
		{"absolute dest", "shed_move_uploads_to_storage", map[string]any{"src": "a.txt", "dest": "/etc/a.txt"}, "PATH_ESCAPE"},
		{"zone root", "shed_move_documents_to_storage", map[string]any{"src": ".", "dest": "all"}, "INVALID_PATH"},
		{"zone prefix", "shed_move_uploads_to_storage", map[string]any{"src": "a.txt", "dest": "storage/a.txt"}, "PATH_STARTS_WITH_ZONE"},
		{"parent is a file", "shed_move_uploads_to_storage", map[string]any{"src": "a.txt", "dest": "f/a.txt"}, "INVALID_PATH"},
		{"NUL in dest", "shed_move_uploads_to_storage", map[string]any{"src": "a.txt", "dest": "a\x00b"}, "INVALID_PATH"},
		{"overwrite not a boolean", "shed_move_uploads_to_storage", map[string]any{"src": "a.txt", "dest": "b", "overwrite": "perhaps"}, "INVALID_PARAMETER"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, e.post(c.tool, c.args, nil), c.code)
			if !exists(e, uploadsDir+"/a.txt") {
				t.Fatal("the source moved")
			}
		})
	}
	// allow_zone_in_path lets a folder named like the zone through.
	wantOK(t, e.post("shed_move_uploads_to_storage", map[string]any{"src": "a.txt", "dest": "storage/a.txt", "allow_zone_in_path": true}, nil))
	if e.disk("storage/a.txt") != "a" {
		t.Fatal("not moved")
	}
}

// TestBridgeQuotaLeavesNothing: a copy over the quota is refused before anything is
// written; the source is intact, nothing is staged, the usage unchanged.
func TestBridgeQuotaLeavesNothing(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_QUOTA_PER_USER_MB": "1"})
	e.write(storageDir+"/big/a.bin", strings.Repeat("a", 600<<10))
	before := e.used(t)
	r := e.post("shed_copy_storage_to_documents", map[string]any{"src": "big", "dest": "big"}, nil)
	wantError(t, r, "QUOTA_EXCEEDED")
	if exists(e, documentsDir+"/big") || e.used(t) != before {
		t.Fatalf("after a refused copy: dest exists %v, usage %d -> %d", exists(e, documentsDir+"/big"), before, e.used(t))
	}
	entries, _ := os.ReadDir(filepath.Join(e.base, documentsDir))
	if len(entries) != 0 {
		t.Fatalf("left in Documents: %v", entries)
	}
	noTemp(t, e.base)
}
