package handlers_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestGroupLocks: in a group, a fresh lock can be broken only by its holder or an admin;
// another member must wait lock_force_after_minutes of idleness (no open, overwrite or
// exec on the working copy); and breaking a lock never grants a write the mode forbids.
func TestGroupLocks(t *testing.T) {
	t.Parallel()
	g := startGroups(t, nil)
	g.create("alice", "shared.md", "v1\n", "group")
	g.create("alice", "owned.md", "v1\n", "owner")
	open := func(p string) { wantOK(t, g.as("alice", "shed_lockedit_open", in(map[string]any{"path": p}))) }
	force := func(user, p string, hdr map[string]string) reply {
		h := map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": user, "X-OpenWebUI-Chat-Id": "c-" + user}
		for k, v := range hdr {
			h[k] = v
		}
		return g.post("shed_force_unlock", map[string]any{"group": "team", "path": p}, h)
	}
	idle := func(p string, age time.Duration) {
		backdate(t, g.env, p, age)
		old := time.Now().Add(-age)
		if err := os.Chtimes(filepath.Join(g.base, "groups", "team", "editzone", "c-alice", p), old, old); err != nil {
			t.Fatal(err)
		}
	}
	open("shared.md")
	r := force("bob", "shared.md", nil)
	wantError(t, r, "NOT_LOCK_OWNER")
	if r.Details["force_after_minutes"] != 30.0 || r.Details["breakable_at"] == nil {
		t.Fatalf("details: %s", r.raw)
	}
	wantError(t, g.as("bob", "shed_patch_text", in(map[string]any{"path": "shared.md", "content": "x"})), "FILE_LOCKED")
	// An old lock whose working copy was just written is not idle.
	backdate(t, g.env, "shared.md", time.Hour)
	wantError(t, force("bob", "shared.md", nil), "NOT_LOCK_OWNER")
	// The holder (any of her conversations) may always release.
	wantOK(t, force("alice", "shared.md", map[string]string{"X-OpenWebUI-Chat-Id": "other"}))
	// An Open WebUI admin may always.
	open("shared.md")
	wantOK(t, force("carol", "shared.md", map[string]string{"X-OpenWebUI-User-Role": "admin"}))
	// Idle long enough: another member may break it, and then write (mode group).
	open("shared.md")
	idle("shared.md", 31*time.Minute)
	wantOK(t, force("bob", "shared.md", nil))
	wantOK(t, g.as("bob", "shed_patch_text", in(map[string]any{"path": "shared.md", "content": "bob\n"})))
	wantError(t, g.as("alice", "shed_lockedit_save", in(map[string]any{"path": "shared.md"})), "NOT_IN_EDIT_MODE")
	// Breaking the lock of an 'owner' file grants nothing.
	open("owned.md")
	idle("owned.md", 31*time.Minute)
	wantOK(t, force("carol", "owned.md", nil))
	wantError(t, g.as("carol", "shed_patch_text", in(map[string]any{"path": "owned.md", "content": "x"})), "FILE_OWNER_ONLY")
	wantError(t, g.as("carol", "shed_lockedit_open", in(map[string]any{"path": "owned.md"})), "FILE_OWNER_ONLY")
	g.wantFile("owned.md", "v1\n")
	// A mode changed to owner_ro while the owner edits: her save is refused too.
	open("owned.md")
	wantOK(t, g.as("alice", "shed_lockedit_overwrite", in(map[string]any{"path": "owned.md", "content": "v2\n"})))
	wantOK(t, g.as("alice", "shed_group_set_mode", map[string]any{"group": "team", "path": "owned.md", "mode": "owner_ro"}))
	wantError(t, g.as("alice", "shed_lockedit_save", in(map[string]any{"path": "owned.md"})), "FILE_READ_ONLY")
	g.wantFile("owned.md", "v1\n")
}
