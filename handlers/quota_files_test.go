package handlers_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/core/archive/ziptest"
	"github.com/fileshed/fileshed/core/store"
)

// names counts every name (file, folder, link) under the user's zones: what the file quota
// counts (not the conversations' folders in Uploads, the roots of its zones).
func names(t *testing.T, e *env, user string) int64 {
	t.Helper()
	var n int64
	for _, d := range []string{"Uploads", "Storage/data", "Documents/data"} {
		root := filepath.Join(e.base, "users", user, d)
		_ = filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
			if err == nil && p != root && (d != "Uploads" || filepath.Dir(p) != root || !de.IsDir()) {
				n++
			}
			return nil
		})
	}
	return n
}

// recorded is the owner's recorded usage in the state database.
func recorded(t *testing.T, e *env, o store.Owner) store.Amount {
	t.Helper()
	db, err := store.OpenSource(core.StateSource(e.cfg, e.base))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	u, err := db.Usage(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// local is the user of auth mode none.
var local = store.Owner{Kind: "user", ID: "local"}

// wantFileQuota asserts a QUOTA_EXCEEDED answer about the file count.
func wantFileQuota(t *testing.T, r reply, limit int) {
	t.Helper()
	wantError(t, r, "QUOTA_EXCEEDED")
	if !strings.Contains(r.Message, "files") || r.Details["files_limit"] != float64(limit) {
		t.Fatalf("not a file-quota answer: %s", r.raw)
	}
}

// TestExecCannotExhaustInodes (issue 24 finding 7): the quota counted bytes only, so
// `split -b 1` made 100,000 files and `touch` 240,000 empty ones (quota: 0 bytes), and one
// user could exhaust the inodes of the shared volume. With a file quota (lowered to 300
// here), each attack is stopped and rolled back like a byte overshoot, the answer naming
// files; what was there before stays.
func TestExecCannotExhaustInodes(t *testing.T) {
	t.Parallel()
	touch := []string{}
	for i := range 400 {
		touch = append(touch, fmt.Sprintf("empty%03d", i))
	}
	deep := strings.Repeat("d/", 399) + "d"
	cases := []struct {
		name string
		cmd  string
		args []string
	}{
		{"split into one-byte files", "split", []string{"-b", "1", "-a", "4", "seed.txt", "part-"}},
		{"touch of empty files", "touch", touch},
		{"mkdir of a deep chain", "mkdir", []string{"-p", deep}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := start(t, map[string]string{"FILESHED_QUOTA_FILES_PER_USER": "300"})
			wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "seed.txt", "content": strings.Repeat("x", 2000)}, nil))
			r := runExec(e, execCall{"zone": "storage", "cmd": tc.cmd, "args": tc.args, "timeout": 120})
			wantFileQuota(t, r, 300)
			if got := names(t, e, "local"); got != 1 {
				t.Fatalf("%d names left after the rollback, want only seed.txt", got)
			}
			if u := recorded(t, e, local); u.Files != 1 || u.Bytes != 2000 {
				t.Fatalf("recorded usage %+v, want 2000 bytes in 1 file", u)
			}
			if e.disk("seed.txt") != strings.Repeat("x", 2000) {
				t.Fatal("the earlier file was touched")
			}
		})
	}
}

// TestToolsStopAtTheFileQuota: every tool that adds names reserves them first: a create,
// the folders it makes, an unzip of many entries, a copy of a folder. A refused call
// leaves nothing behind, and the recorded count follows the disk.
func TestToolsStopAtTheFileQuota(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_QUOTA_FILES_PER_USER": "20"})
	var es []ziptest.Entry
	for i := range 30 {
		es = append(es, ziptest.Entry{Name: fmt.Sprintf("many/e%02d.txt", i), Body: "z"})
	}
	e.zipAt(execDir+"many.zip", zipOf(es...)) // 1 name, counted at first use
	create := func(p string) reply {
		return e.post("shed_create_file", map[string]any{"zone": "storage", "path": p, "content": "x"}, nil)
	}
	for i := range 5 {
		wantOK(t, create(fmt.Sprintf("dir/f%d.txt", i))) // 1 folder + 5 files: 7
	}
	wantFileQuota(t, e.post("shed_unzip", map[string]any{"zone": "storage", "src": "many.zip", "dest": "out"}, nil), 20)
	wantOK(t, e.post("shed_copy_storage_to_documents", map[string]any{"src": "dir/f0.txt", "dest": "f0.txt"}, nil)) // 8
	for i := range 10 {
		wantOK(t, create(fmt.Sprintf("more/g%d.txt", i))) // 19
	}
	wantFileQuota(t, e.post("shed_copy_storage_to_documents", map[string]any{"src": "dir", "dest": "dir2"}, nil), 20)
	wantFileQuota(t, create("a/b/c.txt"), 20) // 3 names, 1 left
	wantOK(t, create("last.txt"))             // 20
	wantFileQuota(t, create("over.txt"), 20)
	r := e.post("shed_stats", nil, nil)
	wantOK(t, r)
	total := r.Data["total"].(map[string]any)
	if total["files_used"] != 20.0 || total["files_limit"] != 20.0 {
		t.Fatalf("stats: %v", total)
	}
	for _, gone := range []string{"storage/out", "storage/a", "storage/over.txt", "documents/dir2"} {
		zone, rel, _ := strings.Cut(gone, "/")
		dir := map[string]string{"storage": execDir, "documents": "users/local/Documents/data/"}[zone]
		if _, err := os.Lstat(filepath.Join(e.base, dir, rel)); !os.IsNotExist(err) {
			t.Fatalf("%s left behind: %v", gone, err)
		}
	}
	// Deleting gives names back: a folder with its content, then a file renamed over.
	wantOK(t, e.post("shed_delete", map[string]any{"zone": "storage", "path": "more"}, nil))
	wantOK(t, e.post("shed_rename", map[string]any{"zone": "storage", "old_path": "last.txt", "new_path": "dir/f1.txt", "overwrite": true}, nil))
	if u, disk := recorded(t, e, local), names(t, e, "local"); u.Files != disk || disk != 8 {
		t.Fatalf("recorded %d names, disk %d, want 8", u.Files, disk)
	}
	wantOK(t, e.post("shed_zip", map[string]any{"zone": "storage", "src": "dir"}, nil))
	wantOK(t, e.post("shed_unzip", map[string]any{"zone": "storage", "src": "dir.zip", "dest": "out"}, nil))
	wantOK(t, e.post("shed_sqlite", map[string]any{"zone": "documents", "path": "db/x.db", "query": "CREATE TABLE t (x)"}, nil))
	wantOK(t, e.post("shed_move_documents_to_storage", map[string]any{"src": "db", "dest": "moved/db"}, nil))
	if u, disk := recorded(t, e, local), names(t, e, "local"); u.Files != disk || disk < 18 {
		t.Fatalf("after zip, unzip, sqlite and a move: recorded %d names, disk %d", u.Files, disk)
	}
	p := e.post("shed_info", map[string]any{"action": "parameters"}, nil)
	if !strings.Contains(p.raw, `"quota_files_per_user":20`) {
		t.Fatalf("parameters: %s", p.raw)
	}
}

// TestGroupFileQuota: a group space has a file count of its own (quota_files_per_group),
// held against its members' commands and copies like a user's.
func TestGroupFileQuota(t *testing.T) {
	t.Parallel()
	g := startGroups(t, map[string]string{"FILESHED_QUOTA_FILES_PER_GROUP": "10"})
	g.create("alice", "a.md", "a", "group")
	var many []string
	for i := range 20 {
		many = append(many, fmt.Sprintf("t%02d", i))
	}
	r := g.as("bob", "shed_exec", in(map[string]any{"cmd": "touch", "args": many}))
	wantFileQuota(t, r, 10)
	for i := range 12 {
		g.as("carol", "shed_create_file", map[string]any{"zone": "storage", "path": fmt.Sprintf("src/f%02d.txt", i), "content": "c"})
	}
	r = g.as("carol", "shed_copy_to_group", map[string]any{"src_zone": "storage", "src_path": "src", "group": "team", "dest_path": "src"})
	wantFileQuota(t, r, 10)
	r = g.as("alice", "shed_stats", nil)
	wantOK(t, r)
	line := r.Data["groups"].([]any)[0].(map[string]any)
	if line["files_used"] != 1.0 || line["files_limit"] != 10.0 {
		t.Fatalf("group line: %v", line)
	}
}

// TestImportStopsAtTheFileQuota: an import adds a file (and the folders of dest_subdir):
// past the file count it is refused and keeps nothing; the Uploads count follows the disk.
func TestImportStopsAtTheFileQuota(t *testing.T) {
	t.Parallel()
	e, _ := importWorld(t, map[string]string{"FILESHED_QUOTA_FILES_PER_USER": "3"})
	wantOK(t, e.post("shed_import", map[string]any{"file_id": "f-report", "dest_subdir": "in"}, alice("chat-1"))) // in, Report.pdf
	wantOK(t, e.post("shed_import", map[string]any{"file_id": "f-notes"}, alice("chat-1")))                       // 3
	wantFileQuota(t, e.post("shed_import", map[string]any{"file_id": "f-notes"}, alice("chat-1")), 3)
	if u, disk := recorded(t, e, store.Owner{Kind: "user", ID: "alice-1"}), names(t, e, "alice-1"); u.Files != 3 || disk != 3 {
		t.Fatalf("recorded %d names, disk %d, want 3", u.Files, disk)
	}
	// The whole upload folder moved to Storage: a zone root becomes a counted folder.
	wantFileQuota(t, e.post("shed_move_uploads_to_storage", map[string]any{"src": ".", "dest": "imports/chat"}, alice("chat-1")), 3)
	wantOK(t, e.post("shed_move_uploads_to_storage", map[string]any{"src": "in", "dest": "in"}, alice("chat-1")))
	if u, disk := recorded(t, e, store.Owner{Kind: "user", ID: "alice-1"}), names(t, e, "alice-1"); u.Files != 3 || disk != 3 {
		t.Fatalf("after a move: recorded %d names, disk %d, want 3", u.Files, disk)
	}
}
