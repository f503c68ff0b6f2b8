package handlers_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Writes beside a command in Storage (core/plain.go): Storage has no repository, and the
// writes of other conversations during a command were taken for the command's own.

// commandRunning starts the Storage command call of conversation chat-cmd and returns, once
// it runs, where its answer will come.
func commandRunning(t *testing.T, e *env, call execCall) <-chan reply {
	t.Helper()
	done := make(chan reply, 1)
	go func() { done <- execAs(e, "chat-cmd", call) }()
	waitRunning(t, filepath.Join(e.base, execDir))
	return done
}

// usageIsDisk fails t unless the local user's recorded usage equals the bytes on disk.
func usageIsDisk(t *testing.T, e *env) {
	t.Helper()
	if used, disk := usage(t, e, "local"), diskUsage(t, e, "local"); used != disk {
		t.Fatalf("recorded usage %d, disk %d", used, disk)
	}
}

// TestStorageWriteBesideACommandCountsOnce: a file created, and another deleted, in Storage
// while a command ran were counted by the command's measure too (recorded usage 10,000
// bytes for 5,000 on disk). The usage now equals the disk.
func TestStorageWriteBesideACommandCountsOnce(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "old/gone.txt", "content": strings.Repeat("o", 3000)}, nil))
	done := commandRunning(t, e, execCall{"zone": "storage", "cmd": "sleep", "args": []string{"2"}})
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "new.txt", "content": strings.Repeat("x", 5000)}, conv("other")))
	wantOK(t, e.post("shed_delete", map[string]any{"zone": "storage", "path": "old"}, conv("other")))
	wantOK(t, <-done)
	if used, disk := usage(t, e, "local"), diskUsage(t, e, "local"); used != disk || disk != 5000 {
		t.Fatalf("recorded usage %d, disk %d (want 5000)", used, disk)
	}
}

// TestStorageCommandOverQuotaLeavesWritesBeside: the rollback of a Storage command over the
// quota removed what another conversation wrote during the command, with the command's own
// files. chat B writes 400 KB while chat A's command computes, then the command writes
// 700 KB: each fits the 1 MB quota alone, not together; the command is rolled back and B's
// file stays, and the usage equals the disk.
func TestStorageCommandOverQuotaLeavesWritesBeside(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_QUOTA_PER_USER_MB": "1"})
	call := slowSQLite("q.db", 8_000_000, "CREATE TABLE t(b); INSERT INTO t VALUES (zeroblob(700000));")
	call["zone"] = "storage"
	done := commandRunning(t, e, call)
	content := strings.Repeat("b", 400_000)
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "b/beside.txt", "content": content}, conv("chat-b")))
	r := <-done
	wantError(t, r, "QUOTA_EXCEEDED")
	if got := readFile(t, e, execDir+"b/beside.txt"); got != content {
		t.Fatalf("the file written beside the command: %d bytes left by the rollback", len(got))
	}
	if _, err := os.Stat(filepath.Join(e.base, execDir, "q.db")); !os.IsNotExist(err) {
		t.Fatalf("the command's database survived its rollback: %v", err)
	}
	usageIsDisk(t, e)
}

// TestStorageSaveBesideACommandIsKept: a locked edit saved in Storage while another
// conversation's command ran was taken by the command's lock guard for the command's own
// change of a locked file, and the old content was put back: the save was lost, on one
// server. The file is now left as its holder saved it, and the usage counts the save once.
func TestStorageSaveBesideACommandIsKept(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(execDir+"notes.txt", "old\n")
	editor := conv("chat-editor")
	wantOK(t, e.post("shed_lockedit_open", map[string]any{"zone": "storage", "path": "notes.txt"}, editor))
	saved := strings.Repeat("saved beside the command\n", 400)
	wantOK(t, e.post("shed_lockedit_overwrite", map[string]any{"zone": "storage", "path": "notes.txt", "content": saved}, editor))
	done := commandRunning(t, e, execCall{"zone": "storage", "cmd": "sleep", "args": []string{"2"}})
	time.Sleep(100 * time.Millisecond) // past the command's first measure
	wantOK(t, e.post("shed_lockedit_save", map[string]any{"zone": "storage", "path": "notes.txt"}, editor))
	r := <-done
	wantOK(t, r)
	if rev := reverted(r); len(rev) != 0 {
		t.Errorf("the command put back %v", rev)
	}
	if got := readFile(t, e, execDir+"notes.txt"); got != saved {
		t.Fatalf("notes.txt after the command: %.40q (the save was lost)", got)
	}
	usageIsDisk(t, e)
}

// TestStorageBridgeWaitsForACommand: a bridge's Storage end (documents_to_storage moves a
// file in, storage_to_documents copies one out) changed Storage while a Storage command ran,
// unnoted: the command's measure counted the moved file as its own growth (and its rollback
// over the quota would have removed it). A bridge now waits for a Storage command, as
// whole-tree changes wait for a command in Documents; the usage equals the disk.
func TestStorageBridgeWaitsForACommand(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "documents", "path": "d.md", "content": strings.Repeat("d", 7000)}, nil))
	done := commandRunning(t, e, execCall{"zone": "storage", "cmd": "sleep", "args": []string{"2"}})
	wantOK(t, e.post("shed_transfer", map[string]any{"action": "documents_to_storage", "src": "d.md", "dest": "d.md"}, conv("other")))
	wantOK(t, <-done)
	usageIsDisk(t, e)
}
