package handlers_test

import (
	"strings"
	"testing"
)

// TestEncryptionMigrateLeavesALockedEdit: migrate rewrites each file as a write of the
// kernel, under the file's lock, and like every other writer it does not replace a file
// another conversation holds in a locked edit: that file is skipped and reported (errors),
// left as it is on disk; the others are encrypted. Saving the edit writes it encrypted
// (the zone is sealed), and the next migrate has nothing left to do.
func TestEncryptionMigrateLeavesALockedEdit(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_ENCRYPTION_MASTER_KEY": masterKey})
	e.write(zoneDir+"held.txt", "held before setup\n")
	e.write(zoneDir+"free.txt", "free before setup\n")
	wantOK(t, e.post("shed_lockedit", map[string]any{"action": "open", "zone": "storage", "path": "held.txt"}, conv("c2")))
	wantOK(t, e.post("shed_encryption", map[string]any{"action": "setup"}, conv("c1")))

	m := e.post("shed_encryption", map[string]any{"action": "migrate"}, conv("c1"))
	wantOK(t, m)
	if got := e.disk("held.txt"); got != "held before setup\n" {
		t.Fatalf("migrate rewrote held.txt while conversation c2 holds it in a locked edit: %q", got[:min(len(got), 12)])
	}
	e.sealedOnDisk(zoneDir+"free.txt", "free before setup")
	errs, _ := m.Data["errors"].([]any)
	if m.Data["files_changed"] != 1.0 || len(errs) != 1 || !strings.Contains(errs[0].(string), "held.txt") ||
		!strings.Contains(errs[0].(string), "locked edit") {
		t.Fatalf("migrate does not report the locked file: %s", m.raw)
	}

	wantOK(t, e.post("shed_lockedit", map[string]any{"action": "overwrite", "zone": "storage", "path": "held.txt", "content": "saved in c2\n"}, conv("c2")))
	wantOK(t, e.post("shed_lockedit", map[string]any{"action": "save", "zone": "storage", "path": "held.txt"}, conv("c2")))
	e.sealedOnDisk(zoneDir+"held.txt", "saved in c2")
	m = e.post("shed_encryption", map[string]any{"action": "migrate"}, conv("c1"))
	wantOK(t, m)
	if errs, _ := m.Data["errors"].([]any); m.Data["files_changed"] != 0.0 || len(errs) != 0 {
		t.Fatalf("second migrate: %s", m.raw)
	}
	r := e.post("shed_read", map[string]any{"zone": "storage", "path": "held.txt"}, nil)
	if r.Data["content"] != "saved in c2\n" {
		t.Fatalf("read after save: %s", r.raw)
	}
}
