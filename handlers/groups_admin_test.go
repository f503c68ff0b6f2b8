package handlers_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// TestGroupListInfo: list and info show members, owners, modes, sizes and usage.
func TestGroupListInfo(t *testing.T) {
	t.Parallel()
	g := startGroups(t, nil)
	r := g.as("alice", "shed_group_list", nil)
	wantOK(t, r)
	if r.Data["count"] != 1.0 || !strings.Contains(r.raw, `"member_count":3`) {
		t.Fatalf("list: %s", r.raw)
	}
	g.create("alice", "a.md", "12345", "owner")
	wantOK(t, g.as("alice", "shed_exec", in(map[string]any{"cmd": "cp", "args": []string{"a.md", "b.md"}})))
	r = g.as("bob", "shed_group_info", map[string]any{"group": "team"})
	wantOK(t, r)
	if r.Data["total_files"] != 2.0 || r.Data["total_size"] != 10.0 || r.Data["member_count"] != 3.0 {
		t.Fatalf("info: %s", r.raw)
	}
	files := r.Data["files"].([]any)
	a, b := files[0].(map[string]any), files[1].(map[string]any)
	// b.md, made by alice's command, is hers in group_default_mode, as a tool's new file.
	if a["owner"] != "alice" || a["mode"] != "owner" || b["owner"] != "alice" || b["mode"] != "group" {
		t.Fatalf("files: %v", files)
	}
	q := r.Data["quota"].(map[string]any)
	if q["used_bytes"] != float64(10+historyAt(t, filepath.Join(g.base, "groups", "team"))) || q["limit_bytes"] != float64(2000<<20) {
		t.Fatalf("quota: %v", q)
	}
}

// TestGroupOutsiders: a non-member learns nothing about the group's files, and bad group
// ids are refused before any lookup.
func TestGroupOutsiders(t *testing.T) {
	t.Parallel()
	g := startGroups(t, nil)
	g.create("alice", "secret-plan.md", "x", "owner")
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"shed_group_info", map[string]any{"group": "team"}},
		{"shed_tree", in(map[string]any{})},
		{"shed_read", in(map[string]any{"path": "secret-plan.md"})},
		{"shed_create_file", in(map[string]any{"path": "x.md", "content": "x"})},
		{"shed_exec", in(map[string]any{"cmd": "ls"})},
		{"shed_group_set_mode", map[string]any{"group": "team", "path": "secret-plan.md", "mode": "group"}},
		{"shed_copy_to_group", map[string]any{"src_zone": "storage", "src_path": "x", "group": "team", "dest_path": "x"}},
	}
	for _, c := range calls {
		r := g.as("dave", c.tool, c.args)
		wantError(t, r, "GROUP_ACCESS_DENIED")
		if strings.Contains(r.raw, "secret-plan") {
			t.Fatalf("%s revealed a file name: %s", c.tool, r.raw)
		}
	}
	for _, id := range []string{"..", "a/b", "te\x01am"} {
		wantError(t, g.as("alice", "shed_group_info", map[string]any{"group": id}), "INVALID_GROUP_ID")
	}
	wantError(t, g.as("alice", "shed_group_info", map[string]any{"group": ""}), "MISSING_PARAMETER")
	r := g.as("alice", "shed_group_info", map[string]any{"group": "TEAM"})
	wantError(t, r, "GROUP_NOT_FOUND")
	if !strings.Contains(r.raw, `"similar":["team"]`) {
		t.Fatalf("no similar names: %s", r.raw)
	}
}

// TestGroupChownSetMode: only the owner changes the mode or the owner, only to a member.
func TestGroupChownSetMode(t *testing.T) {
	t.Parallel()
	g := startGroups(t, nil)
	g.create("alice", "a.md", "x", "owner")
	chown := func(user, to string) reply {
		return g.as(user, "shed_group_chown", map[string]any{"group": "team", "path": "./a.md", "new_owner": to})
	}
	wantError(t, chown("bob", "bob"), "NOT_FILE_OWNER") // to oneself, by a non-owner
	wantError(t, chown("alice", "dave"), "INVALID_OWNER")
	wantError(t, chown("alice", "../x"), "INVALID_OWNER")
	wantError(t, chown("alice", ""), "MISSING_PARAMETER")
	wantError(t, chown("alice", "  "), "INVALID_OWNER")
	wantError(t, g.as("alice", "shed_group_set_mode", map[string]any{"group": "team", "path": "a.md", "mode": "everyone"}), "INVALID_MODE")
	wantError(t, g.as("alice", "shed_group_set_mode", map[string]any{"group": "team", "path": "none.md", "mode": "group"}), "FILE_NOT_FOUND")
	r := chown("alice", "bob")
	wantOK(t, r)
	if r.Data["old_owner"] != "alice" || r.Data["new_owner"] != "bob" {
		t.Fatalf("chown: %s", r.raw)
	}
	wantError(t, g.as("alice", "shed_patch_text", in(map[string]any{"path": "a.md", "content": "x"})), "FILE_OWNER_ONLY")
	wantOK(t, g.as("bob", "shed_patch_text", in(map[string]any{"path": "a.md", "content": "x"})))
	// Headers-only membership: u2 was never seen in the group, so a chown to u2 is refused
	// (groups_members_test.go: a member seen is accepted).
	h := start(t, map[string]string{"FILESHED_AUTH_MODE": "headers", "FILESHED_AUTH_API_KEY": key})
	hdr := map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": "u1", "X-Shed-Groups": "team"}
	wantOK(t, h.post("shed_create_file", map[string]any{"zone": "group", "group": "team", "path": "a.md", "content": "x", "mode": "owner"}, hdr))
	wantError(t, h.post("shed_group_chown", map[string]any{"group": "team", "path": "a.md", "new_owner": "u2"}, hdr), "INVALID_OWNER")
}

// TestGroupDefaultModeAndUnicode: group_default_mode applies to new files (also those a
// command creates), an invalid mode is refused before writing, and the NFC and NFD
// spellings of a name are one record.
func TestGroupDefaultModeAndUnicode(t *testing.T) {
	t.Parallel()
	g := startGroups(t, map[string]string{"FILESHED_GROUP_DEFAULT_MODE": "owner"})
	nfc := "caf\u00e9.md"
	nfd := norm.NFD.String(nfc)
	g.create("alice", nfd, "x", "")
	wantError(t, g.as("bob", "shed_patch_text", in(map[string]any{"path": nfc, "content": "y"})), "FILE_OWNER_ONLY")
	wantError(t, g.as("bob", "shed_delete", in(map[string]any{"path": nfd})), "PERMISSION_DENIED")
	if _, ok := g.file(nfc); !ok {
		t.Fatal("the file is not stored under its NFC name")
	}
	// Files a command creates follow group_default_mode too; existing ones keep their owner.
	wantOK(t, g.as("bob", "shed_exec", in(map[string]any{"cmd": "cp", "args": []string{nfc, "bobs.md"}})))
	wantError(t, g.as("alice", "shed_patch_text", in(map[string]any{"path": "bobs.md", "content": "x"})), "FILE_OWNER_ONLY")
	wantOK(t, g.as("bob", "shed_patch_text", in(map[string]any{"path": "bobs.md", "content": "x"})))
	wantError(t, g.as("bob", "shed_patch_text", in(map[string]any{"path": nfc, "content": "y"})), "FILE_OWNER_ONLY")
	wantError(t, g.as("bob", "shed_create_file", in(map[string]any{"path": "new.md", "content": "y", "mode": "admin"})), "INVALID_MODE")
	if _, ok := g.file("new.md"); ok {
		t.Fatal("a refused mode still wrote the file")
	}
}

// TestGroupQuotaRace: two members filling the group quota at once never overshoot it.
func TestGroupQuotaRace(t *testing.T) {
	t.Parallel()
	g := startGroups(t, map[string]string{"FILESHED_QUOTA_PER_GROUP_MB": "1"})
	chunk := strings.Repeat("x", 100<<10)
	var wg sync.WaitGroup
	for _, u := range []string{"alice", "bob"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 8 {
				r := g.post("shed_create_file", in(map[string]any{"path": fmt.Sprintf("%s-%d.txt", u, i), "content": chunk}),
					map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": u})
				if !r.Success && r.Error != "QUOTA_EXCEEDED" {
					t.Errorf("%s: %s", u, r.raw)
				}
			}
		}()
	}
	wg.Wait()
	var sum int64
	_ = filepath.Walk(filepath.Join(g.base, "groups", "team", "data"), func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			sum += fi.Size()
		}
		return nil
	})
	if sum > 1<<20 || sum < 900<<10 {
		t.Fatalf("group holds %d bytes for a 1 MB quota", sum)
	}
}

// TestGroupListUnavailableAndUploads: without any group source the tools say so; a file
// from the chat's uploads can be copied into a group.
func TestGroupListUnavailableAndUploads(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	wantError(t, e.post("shed_group_list", nil, nil), "GROUP_NOT_AVAILABLE")
	g := startGroups(t, nil)
	g.write("users/alice/Uploads/c-alice/report.txt", "uploaded\n")
	r := g.as("alice", "shed_copy_to_group", map[string]any{"src_zone": "uploads", "src_path": "report.txt", "group": "team", "dest_path": "in/report.txt"})
	wantOK(t, r)
	g.wantFile("in/report.txt", "uploaded\n")
}
