package handlers_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestEverythingWrittenIsPrivate: after a workflow that touches every way fileshed writes
// (create, patch, a command's files, a database shed_sqlite creates, zip and unzip of entries
// that carry 0644/0755, a group file put back after another member's command replaced it
// with a 0644 copy, a locked edit opened and saved, a link, the Documents history), no file
// under the storage directory is readable by group or others and no folder is open to them:
// files 0600, folders 0700, the git repositories included (storage_base_path itself is
// the operator's, see below). The process umask is set to the
// usual 022 for the test, so that a mode left to the umask shows.
func TestEverythingWrittenIsPrivate(t *testing.T) {
	if !alone(t) { // sets the umask
		return
	}
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	g := startGroups(t, nil)
	alice := func(tool string, args map[string]any) {
		t.Helper()
		wantOK(t, g.as("alice", tool, args))
	}
	for _, zone := range []string{"storage", "documents"} {
		alice("shed_create_file", map[string]any{"zone": zone, "path": "notes/a.txt", "content": "one\n"})
		alice("shed_patch_text", map[string]any{"zone": zone, "path": "notes/a.txt", "content": "two\n"})
		alice("shed_exec", map[string]any{"zone": zone, "cmd": "touch", "args": []string{"made.txt"}})
		alice("shed_exec", map[string]any{"zone": zone, "cmd": "mkdir", "args": []string{"-p", "made/deep/er"}})
		alice("shed_exec", map[string]any{"zone": zone, "cmd": "cp", "args": []string{"notes/a.txt", "made/deep/copy.txt"}})
		alice("shed_sqlite", map[string]any{"zone": zone, "path": "db/new.db", "query": "CREATE TABLE t(a)"})
		alice("shed_sqlite", map[string]any{"zone": zone, "path": "db/new.db", "query": "INSERT INTO t VALUES (1)"})
		alice("shed_zip", map[string]any{"zone": zone, "src": "made", "include_empty_dirs": true})
		alice("shed_unzip", map[string]any{"zone": zone, "src": "made.zip", "dest": "back"})
		alice("shed_lockedit_open", map[string]any{"zone": zone, "path": "notes/a.txt"})
		alice("shed_lockedit_overwrite", map[string]any{"zone": zone, "path": "notes/a.txt", "content": "three\n"})
		alice("shed_lockedit_save", map[string]any{"zone": zone, "path": "notes/a.txt"})
		alice("shed_link_create", map[string]any{"zone": zone, "path": "notes/a.txt"})
	}
	// The group guard puts back alice's file that bob's command replaced with a 0644 copy.
	g.create("alice", "mine.md", "alice's\n", "owner")
	g.create("bob", "other.md", "bob's\n", "group")
	r := g.as("bob", "shed_exec", in(map[string]any{"cmd": "install", "args": []string{"-m", "644", "other.md", "mine.md"}}))
	wantOK(t, r)
	if rev := reverted(r); len(rev) != 1 || rev[0] != "mine.md" {
		t.Fatalf("the guard put back %v: %s", rev, r.raw)
	}
	g.wantFile("mine.md", "alice's\n")

	var files, dirs int
	err := filepath.WalkDir(g.base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(g.base, p)
		switch {
		case rel == ".":
			// storage_base_path itself is the operator's (here the test's TempDir, 0755);
			// fileshed makes it 0700 only when it creates it (core.New).
		case fi.IsDir():
			dirs++
			if fi.Mode().Perm()&0o077 != 0 {
				t.Errorf("folder %s is %v: open to group or others", rel, fi.Mode().Perm())
			}
		case fi.Mode().IsRegular():
			files++
			if fi.Mode().Perm()&0o077 != 0 {
				t.Errorf("file %s is %v: readable by group or others", rel, fi.Mode().Perm())
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 40 || dirs < 20 {
		t.Fatalf("the walk saw %d files and %d folders: the workflow wrote less than expected", files, dirs)
	}
	t.Logf("%d files, %d folders checked", files, dirs)
}

// TestDecryptedCopyIsPrivate: a command in an encrypted zone runs on a decrypted copy in
// encryption.work_dir; each copied file is the owner's alone even when the sealed file on
// disk is not (a file left 0644 by an earlier version), so no host user reads plaintext;
// and what the command left 0644 there comes back to the zone 0600.
func TestDecryptedCopyIsPrivate(t *testing.T) {
	e := startSealed(t, nil)
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "secret.txt", "content": "plaintext\n"}, nil))
	if err := os.Chmod(filepath.Join(e.base, "users/local/Storage/data/secret.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.post("shed_exec", map[string]any{"zone": "storage", "cmd": "stat", "args": []string{"-c", "%a", "secret.txt"}}, nil)
	wantOK(t, r)
	if out, _ := r.Data["stdout"].(string); out != "600\n" {
		t.Fatalf("the decrypted copy's mode: %q (%s)", out, r.raw)
	}
	// What a command leaves 0644 in the copy is written back private, new or existing.
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "old.txt", "content": "x\n"}, nil))
	for _, name := range []string{"new.txt", "old.txt"} {
		wantOK(t, e.post("shed_exec", map[string]any{"zone": "storage", "cmd": "install", "args": []string{"-m", "644", "secret.txt", name}}, nil))
		fi, err := os.Stat(filepath.Join(e.base, "users/local/Storage/data", name))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s written back as %v (%v)", name, fi.Mode().Perm(), err)
		}
	}
}
