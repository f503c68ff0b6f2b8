package handlers_test

import (
	"strings"
	"testing"
)

// TestGroupOwnerModeTools: an 'owner' file refuses every other member's write, delete and
// rename through each tool, under every spelling of its path; the owner may.
func TestGroupOwnerModeTools(t *testing.T) {
	t.Parallel()
	g := startGroups(t, nil)
	g.create("alice", "docs/plan.md", "v1\n", "owner")
	for _, p := range []string{"docs/plan.md", "./docs/plan.md", "docs/sub/../plan.md", "docs/plan.md/", "docs//plan.md"} {
		wantError(t, g.as("bob", "shed_patch_text", in(map[string]any{"path": p, "content": "x", "position": "end"})), "FILE_OWNER_ONLY")
		wantError(t, g.as("bob", "shed_create_file", in(map[string]any{"path": p, "content": "x"})), "FILE_OWNER_ONLY")
		wantError(t, g.as("bob", "shed_patch_bytes", in(map[string]any{"path": p, "content": "41", "overwrite": true})), "FILE_OWNER_ONLY")
		wantError(t, g.as("bob", "shed_convert_eol", in(map[string]any{"path": p, "to": "dos"})), "FILE_OWNER_ONLY")
		r := g.as("bob", "shed_delete", in(map[string]any{"path": p}))
		wantError(t, r, "PERMISSION_DENIED")
		if r.Details["reason"] != "FILE_OWNER_ONLY" || r.Details["owner"] != "alice" {
			t.Fatalf("details: %s", r.raw)
		}
		wantError(t, g.as("bob", "shed_rename", in(map[string]any{"old_path": p, "new_path": "mine.md"})), "PERMISSION_DENIED")
		wantError(t, g.as("bob", "shed_lockedit_open", in(map[string]any{"path": p})), "FILE_OWNER_ONLY")
	}
	// The folder counts for the file in it.
	wantError(t, g.as("bob", "shed_delete", in(map[string]any{"path": "docs"})), "PERMISSION_DENIED")
	wantError(t, g.as("bob", "shed_rename", in(map[string]any{"old_path": "docs", "new_path": "docs2"})), "PERMISSION_DENIED")
	// Overwriting it with a rename of another file is a write.
	g.create("bob", "b.md", "bob\n", "")
	wantError(t, g.as("bob", "shed_rename", in(map[string]any{"old_path": "b.md", "new_path": "docs/plan.md", "overwrite": true})), "FILE_OWNER_ONLY")
	g.wantFile("docs/plan.md", "v1\n")
	// The owner writes, renames (the record follows, also for a folder) and deletes.
	wantOK(t, g.as("alice", "shed_patch_text", in(map[string]any{"path": "./docs/plan.md", "content": "v2\n", "position": "end"})))
	wantOK(t, g.as("alice", "shed_rename", in(map[string]any{"old_path": "docs", "new_path": "archive/docs"})))
	wantError(t, g.as("bob", "shed_patch_text", in(map[string]any{"path": "archive/docs/plan.md", "content": "x"})), "FILE_OWNER_ONLY")
	// A new file at the old place is anyone's.
	g.create("bob", "docs/plan.md", "bob's\n", "")
	wantOK(t, g.as("alice", "shed_delete", in(map[string]any{"path": "archive"})))
	// The record went with the file: bob may now create it there.
	g.create("bob", "archive/docs/plan.md", "new\n", "")
}

// TestGroupReadOnlyMode: nobody writes an owner_ro file, the owner included; only the owner
// deletes it or switches it back.
func TestGroupReadOnlyMode(t *testing.T) {
	t.Parallel()
	g := startGroups(t, nil)
	g.create("alice", "ro.md", "frozen\n", "owner_ro")
	for _, u := range []string{"alice", "bob"} {
		wantError(t, g.as(u, "shed_patch_text", in(map[string]any{"path": "ro.md", "content": "x"})), "FILE_READ_ONLY")
	}
	r := g.as("bob", "shed_delete", in(map[string]any{"path": "ro.md"}))
	wantError(t, r, "PERMISSION_DENIED")
	if r.Details["reason"] != "FILE_READ_ONLY" {
		t.Fatalf("details: %s", r.raw)
	}
	wantError(t, g.as("bob", "shed_group_set_mode", in(map[string]any{"path": "ro.md", "mode": "group"})), "NOT_FILE_OWNER")
	wantOK(t, g.as("alice", "shed_group_set_mode", in(map[string]any{"path": "ro.md", "mode": "owner"})))
	wantOK(t, g.as("alice", "shed_patch_text", in(map[string]any{"path": "ro.md", "content": "thawed\n", "overwrite": true})))
	wantOK(t, g.as("alice", "shed_group_set_mode", in(map[string]any{"path": "ro.md", "mode": "owner_ro"})))
	r = g.as("alice", "shed_delete", in(map[string]any{"path": "ro.md"}))
	wantError(t, r, "PERMISSION_DENIED")
	if r.Details["reason"] != "FILE_READ_ONLY" {
		t.Fatalf("details: %s", r.raw)
	}
	wantOK(t, g.as("alice", "shed_group_set_mode", in(map[string]any{"path": "ro.md", "mode": "owner"})))
	wantOK(t, g.as("alice", "shed_delete", in(map[string]any{"path": "ro.md"})))
	g.create("bob", "ro.md", "bob's now\n", "")
}

// TestGroupRestore: shed_restore is a write: refused on another member's 'owner' file; a
// deleted file brought back is a new file of whoever restores it.
func TestGroupRestore(t *testing.T) {
	t.Parallel()
	g := startGroups(t, nil)
	g.create("alice", "a.md", "v1\n", "owner")
	wantOK(t, g.as("alice", "shed_patch_text", in(map[string]any{"path": "a.md", "content": "v2\n", "overwrite": true})))
	wantError(t, g.as("bob", "shed_restore", in(map[string]any{"path": "a.md", "version": "HEAD~1"})), "FILE_OWNER_ONLY")
	g.wantFile("a.md", "v2\n")
	wantOK(t, g.as("alice", "shed_delete", in(map[string]any{"path": "a.md"})))
	wantOK(t, g.as("bob", "shed_restore", in(map[string]any{"path": "a.md", "version": "HEAD~1"})))
	g.wantFile("a.md", "v2\n")
	r := g.as("alice", "shed_group_info", map[string]any{"group": "team"})
	if !strings.Contains(r.raw, `{"mode":"group","owner":"bob","path":"a.md"`) {
		t.Fatalf("restored file's record: %s", r.raw)
	}
}
