package handlers_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestBridgeRefusesLinksAndSpecialFiles: a symlink pointing outside, a symlink inside, a
// FIFO, and folders holding either are refused before anything moves; a FIFO never hangs.
func TestBridgeRefusesLinksAndSpecialFiles(t *testing.T) {
	e := start(t, nil)
	outside := t.TempDir()
	must(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o600))
	up := filepath.Join(e.base, uploadsDir)
	st := filepath.Join(e.base, storageDir)
	e.write(uploadsDir+"/real.txt", "r")
	e.write(storageDir+"/real.txt", "r")
	must(t, os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(up, "out-link")))
	must(t, os.Symlink("real.txt", filepath.Join(up, "in-link")))
	must(t, syscall.Mkfifo(filepath.Join(up, "fifo"), 0o600))
	e.write(uploadsDir+"/withlink/ok.txt", "ok")
	must(t, os.Symlink(outside, filepath.Join(up, "withlink", "escape")))
	e.write(storageDir+"/withlink/ok.txt", "ok")
	must(t, os.Symlink("../real.txt", filepath.Join(st, "withlink", "inner")))
	e.write(storageDir+"/withfifo/ok.txt", "ok")
	must(t, syscall.Mkfifo(filepath.Join(st, "withfifo", "pipe"), 0o600))
	must(t, syscall.Mkfifo(filepath.Join(st, "fifo"), 0o600))
	e.write(storageDir+"/weird/bad\nname", "made by a command")
	cases := []struct {
		name, tool, src, code string
		kept                  string // must still be there afterwards
	}{
		{"link pointing outside", "shed_move_uploads_to_storage", "out-link", "PATH_ESCAPE", uploadsDir + "/out-link"},
		{"link inside", "shed_move_uploads_to_documents", "in-link", "INVALID_PATH", uploadsDir + "/in-link"},
		{"fifo moved", "shed_move_uploads_to_storage", "fifo", "NOT_A_FILE", uploadsDir + "/fifo"},
		{"fifo copied", "shed_copy_storage_to_documents", "fifo", "NOT_A_FILE", storageDir + "/fifo"},
		{"folder with a link out", "shed_move_uploads_to_storage", "withlink", "PATH_ESCAPE", uploadsDir + "/withlink/ok.txt"},
		{"folder with a link in, copied", "shed_copy_storage_to_documents", "withlink", "INVALID_PATH", storageDir + "/withlink/inner"},
		{"folder with a fifo, copied", "shed_copy_storage_to_documents", "withfifo", "NOT_A_FILE", storageDir + "/withfifo/pipe"},
		{"folder with a name no tool could write", "shed_copy_storage_to_documents", "weird", "INVALID_PATH", storageDir + "/weird/bad\nname"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			wantError(t, e.post(c.tool, map[string]any{"src": c.src, "dest": "got/" + c.src}, nil), c.code)
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("took %v", d)
			}
			if !exists(e, c.kept) {
				t.Fatalf("%s was moved", c.kept)
			}
		})
	}
	for _, dest := range []string{storageDir + "/got", documentsDir + "/got"} {
		if exists(e, dest) {
			t.Fatalf("%s was created", dest)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "secret" {
		t.Fatal("the outside file changed")
	}
	noTemp(t, e.base)
}

// TestBridgeDestinationThroughLinkOut: a destination folder that is a symlink leading out
// of the zone is PATH_ESCAPE; nothing lands outside.
func TestBridgeDestinationThroughLinkOut(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	outside := t.TempDir()
	e.write(uploadsDir+"/a.txt", "a")
	e.write(storageDir+"/keep", "k")
	must(t, os.Symlink(outside, filepath.Join(e.base, storageDir, "out")))
	wantError(t, e.post("shed_move_uploads_to_storage", map[string]any{"src": "a.txt", "dest": "out/a.txt"}, nil), "PATH_ESCAPE")
	wantError(t, e.post("shed_move_uploads_to_storage", map[string]any{"src": "a.txt", "dest": "out/"}, nil), "PATH_ESCAPE")
	if entries, _ := os.ReadDir(outside); len(entries) != 0 || !exists(e, uploadsDir+"/a.txt") {
		t.Fatalf("outside now holds %v", entries)
	}
	// A source reached through a symlinked folder that leads outside is never taken.
	must(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("s"), 0o600))
	must(t, os.Symlink(outside, filepath.Join(e.base, uploadsDir, "outdir")))
	wantError(t, e.post("shed_move_uploads_to_storage", map[string]any{"src": "outdir/secret.txt", "dest": "s.txt"}, nil), "PATH_ESCAPE")
	if _, err := os.Stat(filepath.Join(outside, "secret.txt")); err != nil || exists(e, storageDir+"/s.txt") {
		t.Fatal("the outside file was moved")
	}
	must(t, os.Remove(filepath.Join(outside, "secret.txt")))
	// A symlink at the destination itself is never written through, even with overwrite.
	must(t, os.Symlink(filepath.Join(outside, "t.txt"), filepath.Join(e.base, storageDir, "dest-link")))
	wantError(t, e.post("shed_move_uploads_to_storage", map[string]any{"src": "a.txt", "dest": "dest-link", "overwrite": true}, nil), "FILE_EXISTS")
	if _, err := os.Stat(filepath.Join(outside, "t.txt")); err == nil {
		t.Fatal("written through the link")
	}
}

// TestBridgeRespectsLocks: a file (or a folder holding a file) that another conversation
// edits is neither moved away nor overwritten; the lock holder may.
func TestBridgeRespectsLocks(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(documentsDir+"/dir/plan.md", "v1")
	e.write(storageDir+"/plan.md", "s")
	e.write(uploadsDir+"/plan.md", "u")
	wantOK(t, e.post("shed_lockedit_open", map[string]any{"zone": "documents", "path": "dir/plan.md"}, conv("chat-a")))
	wantOK(t, e.post("shed_lockedit_open", map[string]any{"zone": "storage", "path": "plan.md"}, conv("chat-a")))
	b := conv("chat-b")
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"shed_move_documents_to_storage", map[string]any{"src": "dir/plan.md", "dest": "moved.md"}},
		{"shed_move_documents_to_storage", map[string]any{"src": "dir", "dest": "moved"}},
		{"shed_copy_storage_to_documents", map[string]any{"src": "plan.md", "dest": "dir/plan.md", "overwrite": true}},
	} {
		r := e.post(c.tool, c.args, b)
		wantError(t, r, "FILE_LOCKED")
		if r.Details["locked_by_conversation"] != "chat-a" {
			t.Fatalf("details: %s", r.raw)
		}
	}
	if readFile(t, e, documentsDir+"/dir/plan.md") != "v1" {
		t.Fatal("the locked file changed")
	}
	// Copying FROM a locked file is a read: allowed.
	wantOK(t, e.post("shed_copy_storage_to_documents", map[string]any{"src": "plan.md", "dest": "copy.md"}, b))
	// The holder itself may move its file.
	wantOK(t, e.post("shed_move_documents_to_storage", map[string]any{"src": "dir", "dest": "moved"}, conv("chat-a")))
}
