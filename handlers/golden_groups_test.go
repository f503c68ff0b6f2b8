package handlers_test

import (
	"os"
	"path/filepath"
	"testing"
)

// TestGoldenGroups pins the answers of the group tools: list and info (static groups: all
// members known; a file without an ownership record), set_mode, chown, and copy_to_group
// (a file committed, a folder with a symbolic link skipped, the same file again: nothing
// to commit).
func TestGoldenGroups(t *testing.T) {
	g := startGroups(t, nil)
	g.create("alice", "docs/plan.md", "plan", "owner")
	g.create("alice", "docs/notes.md", "notes", "group")
	g.write("groups/team/data/raw.txt", "no owner recorded")
	g.write("users/alice/Storage/data/out/report.csv", "a,b\n")
	g.write("users/alice/Storage/data/out/sub/deep.txt", "deep")
	if err := os.Symlink("report.csv", filepath.Join(g.base, "users/alice/Storage/data/out/link")); err != nil {
		t.Fatal(err)
	}
	pinGolden(t, "groups_list", g.as("alice", "shed_group_list", nil), nil)
	// The group's usage: its two files' 9 bytes and their history (raw.txt was put there
	// behind the server's back, so is not counted until a reconcile).
	pinGolden(t, "groups_info", g.as("alice", "shed_group_info", map[string]any{"group": "team"}),
		historyMasks(t, filepath.Join(g.base, "groups/team"), 9, "used_bytes"), "last_seen")
	pinGolden(t, "groups_set_mode", g.as("alice", "shed_group_set_mode", map[string]any{"group": "team", "path": "docs/plan.md",
		"mode": "owner_ro"}), nil)
	pinGolden(t, "groups_chown", g.as("alice", "shed_group_chown", map[string]any{"group": "team", "path": "docs/notes.md",
		"new_owner": "bob"}), nil)
	copyFile := map[string]any{"src_zone": "storage", "src_path": "out/report.csv", "group": "team", "dest_path": "in/report.csv",
		"overwrite": true}
	pinGolden(t, "groups_copy_file", g.as("alice", "shed_copy_to_group", copyFile), nil, "commit")
	pinGolden(t, "groups_copy_folder", g.as("alice", "shed_copy_to_group", map[string]any{"src_zone": "storage", "src_path": "out",
		"group": "team", "dest_path": "folder", "mode": "group"}), nil, "commit")
	pinGolden(t, "groups_copy_unchanged", g.as("alice", "shed_copy_to_group", copyFile), nil, "commit")
}

// TestGoldenGroupsSession pins shed_group_list and shed_group_info where the member lists
// are not known (Open WebUI without an admin key): no member_count in the list, the members
// this server has seen in the info.
func TestGoldenGroupsSession(t *testing.T) {
	e, _ := sessionMembers(t, "")
	wantOK(t, e.post("shed_tree", map[string]any{"zone": "storage"}, session("bob")))
	swap := map[string]string{e.srv.URL: "<server>"}
	pinGolden(t, "groups_session_list", e.post("shed_group_list", nil, session("alice")), swap)
	pinGolden(t, "groups_session_info", e.post("shed_group_info", map[string]any{"group": "g-eng"}, session("alice")), swap, "last_seen")
}
