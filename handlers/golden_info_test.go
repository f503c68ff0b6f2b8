package handlers_test

import (
	"os"
	"path/filepath"
	"testing"
)

// TestGoldenInfo pins the answers of shed_parameters, shed_help (quick reference, one
// guide, all of them: the texts masked, the guides' list kept) and shed_stats (without
// groups; with groups, an open locked edit and links; groups available but none).
func TestGoldenInfo(t *testing.T) {
	e := start(t, nil)
	pinGolden(t, "info_parameters", e.post("shed_parameters", nil, nil), nil)
	pinGolden(t, "info_help_quick", e.post("shed_help", nil, nil), nil, "help")
	pinGolden(t, "info_help_topic", e.post("shed_help", map[string]any{"howto": "Edit"}, nil), nil, "help")
	pinGolden(t, "info_help_full", e.post("shed_help", map[string]any{"howto": "full"}, nil), nil, "help")
	e.write(zoneDir+"a.txt", "hello")
	e.write(zoneDir+"d/b.txt", "b")
	e.write("users/local/Documents/data/d.txt", "doc")
	stats := e.post("shed_stats", nil, nil)
	pinGolden(t, "info_stats", stats, nil)
	// files means files (issue 33 item 7: a.txt + d/b.txt counted 3); the quota counts both.
	if st := stats.Data["storage"].(map[string]any); st["files"] != 2.0 || st["folders"] != 1.0 {
		t.Errorf("storage: %v files, %v folders; want 2 and 1", st["files"], st["folders"])
	}

	g := startGroups(t, nil)
	g.create("alice", "plan.md", "plan", "group")
	g.write("users/alice/Storage/data/s.txt", "storage")
	wantOK(t, g.as("alice", "shed_lockedit_open", map[string]any{"zone": "storage", "path": "s.txt"}))
	wantOK(t, g.as("alice", "shed_lockedit_open", in(map[string]any{"path": "plan.md"})))
	wantOK(t, g.as("alice", "shed_link_create", map[string]any{"zone": "storage", "path": "s.txt"}))
	// The group's history (plan.md's commit) and its usage: plan.md's 4 bytes, its working
	// copy's 4 and the history.
	team := historyMasks(t, filepath.Join(g.base, "groups/team"), 8, "used_bytes")
	pinGolden(t, "info_stats_groups", g.as("alice", "shed_stats", nil), team, "since")
	pinGolden(t, "info_stats_no_group", g.as("erin", "shed_stats", nil), nil)
	pinGolden(t, "info_stats_other_conversation", g.post("shed_stats", nil, map[string]string{"Authorization": "Bearer " + key,
		"X-OpenWebUI-User-Id": "alice", "X-OpenWebUI-Chat-Id": "c-other"}), team, "since")
}

// TestGoldenMaintenance pins the answers of shed_maintenance: nothing to do (quota lines of
// the user and a group, repositories ok), a stale index.lock removed and the pending change
// committed, a garbage index rebuilt, and a damaged repository.
func TestGoldenMaintenance(t *testing.T) {
	g := startGroups(t, nil)
	g.create("alice", "plan.md", "plan", "group")
	wantOK(t, g.as("alice", "shed_create_file", map[string]any{"zone": "documents", "path": "a.txt", "content": "v1"}))
	// Each owner's usage is its files and its history (masks: its size varies with the
	// commits' times); recorded and measured agree.
	masks := func() map[string]string {
		return mergeMasks(historyMasks(t, filepath.Join(g.base, "users/alice/Documents"), 2, "measured_bytes", "recorded_bytes"),
			historyMasks(t, filepath.Join(g.base, "groups/team"), 4, "measured_bytes", "recorded_bytes"))
	}
	r := g.as("alice", "shed_maintenance", nil)
	pinGolden(t, "maintenance_clean", r, masks())

	gitDir := filepath.Join(g.base, "users/alice/Documents/repo.git")
	if err := os.WriteFile(filepath.Join(gitDir, "index.lock"), []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	g.write("users/alice/Documents/data/a.txt", "v2")
	r = g.as("alice", "shed_maintenance", nil)
	pinGolden(t, "maintenance_repaired", r, masks(), "committed_pending")
	if err := os.WriteFile(filepath.Join(gitDir, "index"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = g.as("alice", "shed_maintenance", nil)
	pinGolden(t, "maintenance_index_rebuilt", r, masks(), "committed_pending")
	if err := os.WriteFile(filepath.Join(gitDir, "refs/heads/main"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r = g.as("alice", "shed_maintenance", nil)
	pinGolden(t, "maintenance_damaged", r, masks())
}
