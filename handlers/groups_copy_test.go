package handlers_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCopyToGroup: files and folders come in with an owner and a mode, in one commit; a
// refused copy changes nothing (the original deleted the destination before checking).
func TestCopyToGroup(t *testing.T) {
	t.Parallel()
	g := startGroups(t, map[string]string{"FILESHED_MAX_FILE_SIZE_MB": "1"})
	store := func(user, rel, content string) {
		g.write(filepath.Join("users", user, "Storage", "data", rel), content)
	}
	cp := func(user string, args map[string]any) reply {
		args["group"] = "team"
		if args["src_zone"] == nil {
			args["src_zone"] = "storage"
		}
		return g.as(user, "shed_copy_to_group", args)
	}
	store("alice", "plan.md", "alice v1\n")
	r := cp("alice", map[string]any{"src_path": "plan.md", "dest_path": "plan.md", "mode": "owner", "message": "share plan"})
	wantOK(t, r)
	if r.Data["mode"] != "owner" || r.Data["commit"] == nil {
		t.Fatalf("copy: %s", r.raw)
	}
	g.wantFile("plan.md", "alice v1\n")
	log := g.as("alice", "shed_exec", in(map[string]any{"cmd": "git", "args": []string{"log", "-1", "--format=%s", "--name-only"}}))
	if !strings.Contains(log.Data["stdout"].(string), "share plan\n\nplan.md") {
		t.Fatalf("commit: %s", log.raw)
	}
	// bob cannot replace it, and nothing is removed on the way.
	store("bob", "plan.md", "bob\n")
	wantError(t, cp("bob", map[string]any{"src_path": "plan.md", "dest_path": "plan.md"}), "FILE_EXISTS")
	wantError(t, cp("bob", map[string]any{"src_path": "plan.md", "dest_path": "./plan.md", "overwrite": true}), "FILE_OWNER_ONLY")
	g.wantFile("plan.md", "alice v1\n")
	// A folder: its regular files, each recorded; a symlink inside is skipped, never followed.
	store("bob", "kit/a.txt", "a")
	store("bob", "kit/sub/b.txt", "b")
	if err := os.Symlink("/etc/passwd", filepath.Join(g.base, "users/bob/Storage/data/kit/evil")); err != nil {
		t.Fatal(err)
	}
	r = cp("bob", map[string]any{"src_path": "kit", "dest_path": "shared/kit", "mode": "owner_ro"})
	wantOK(t, r)
	if r.Data["files_copied"] != 2.0 || !strings.Contains(r.raw, `"skipped_not_regular":["kit/evil"]`) {
		t.Fatalf("folder copy: %s", r.raw)
	}
	g.wantFile("shared/kit/sub/b.txt", "b")
	if _, ok := g.file("shared/kit/evil"); ok {
		t.Fatal("symlink copied")
	}
	wantError(t, g.as("bob", "shed_patch_text", in(map[string]any{"path": "shared/kit/a.txt", "content": "x"})), "FILE_READ_ONLY")
	// A symlink as the source is refused.
	if err := os.Symlink("plan.md", filepath.Join(g.base, "users/bob/Storage/data/link.md")); err != nil {
		t.Fatal(err)
	}
	wantError(t, cp("bob", map[string]any{"src_path": "link.md", "dest_path": "link.md"}), "NOT_A_FILE")
	// Limits and bad arguments.
	store("bob", "big.bin", strings.Repeat("x", 1<<20+1))
	wantError(t, cp("bob", map[string]any{"src_path": "big.bin", "dest_path": "big.bin"}), "FILE_TOO_LARGE")
	wantError(t, cp("bob", map[string]any{"src_zone": "group", "src_path": "plan.md", "dest_path": "x"}), "ZONE_FORBIDDEN")
	wantError(t, cp("bob", map[string]any{"src_path": "missing.md", "dest_path": "x"}), "FILE_NOT_FOUND")
	wantError(t, cp("bob", map[string]any{"src_path": "../alice/plan.md", "dest_path": "x"}), "PATH_ESCAPE")
	wantError(t, cp("bob", map[string]any{"src_path": "plan.md", "dest_path": "shared"}), "NOT_A_FILE")
	wantError(t, cp("bob", map[string]any{"src_path": "plan.md", "dest_path": "x", "mode": "root"}), "INVALID_MODE")
	for _, p := range []string{"big.bin", "x", "link.md"} {
		if _, ok := g.file(p); ok {
			t.Fatalf("%s written by a refused copy", p)
		}
	}
}

// TestCopyToGroupQuota: the group quota is checked before anything is written.
func TestCopyToGroupQuota(t *testing.T) {
	t.Parallel()
	g := startGroups(t, map[string]string{"FILESHED_QUOTA_PER_GROUP_MB": "1"})
	g.write("users/alice/Storage/data/kit/a.bin", strings.Repeat("a", 600<<10))
	g.write("users/alice/Storage/data/kit/b.bin", strings.Repeat("b", 600<<10))
	wantError(t, g.as("alice", "shed_copy_to_group", map[string]any{"src_zone": "storage", "src_path": "kit", "group": "team", "dest_path": "kit"}), "QUOTA_EXCEEDED")
	if _, ok := g.file("kit/a.bin"); ok {
		t.Fatal("partial copy over quota")
	}
}
