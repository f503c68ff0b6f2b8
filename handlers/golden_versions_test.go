package handlers_test

import "testing"

// TestGoldenVersions pins the answers of shed_history (a file, the zone root, nothing yet)
// and shed_restore (a commit, and a restore to the same content: nothing to commit).
func TestGoldenVersions(t *testing.T) {
	e := start(t, nil)
	pinGolden(t, "versions_history_empty", e.post("shed_history", map[string]any{"zone": "documents"}, nil), nil)
	for _, content := range []string{"v1\n", "v2\n"} {
		wantOK(t, e.post("shed_create_file", map[string]any{"zone": "documents", "path": "notes/a.txt", "content": content,
			"overwrite": true}, nil))
	}
	vol := []string{"hash", "short", "date", "commit"}
	pinGolden(t, "versions_history_file", e.post("shed_history", map[string]any{"zone": "documents", "path": "notes/a.txt",
		"limit": 5}, nil), nil, vol...)
	pinGolden(t, "versions_history_root", e.post("shed_history", map[string]any{"zone": "documents"}, nil), nil, vol...)
	pinGolden(t, "versions_restore", e.post("shed_restore", map[string]any{"zone": "documents", "path": "notes/a.txt",
		"version": "HEAD~1"}, nil), nil, vol...)
	pinGolden(t, "versions_restore_unchanged", e.post("shed_restore", map[string]any{"zone": "documents", "path": "notes/a.txt",
		"version": "HEAD", "message": "same"}, nil), nil, vol...)
}

// TestGoldenJournal pins the answers of shed_changes (a list, a diff) and shed_undo.
func TestGoldenJournal(t *testing.T) {
	e := start(t, nil)
	a := map[string]string{"X-OpenWebUI-Chat-Id": "chat-a"}
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "n.md", "content": "a\nb\n"}, a))
	wantOK(t, e.post("shed_create_file", map[string]any{"zone": "storage", "path": "n.md", "content": "a\nc\n", "overwrite": true}, a))
	pinGolden(t, "journal_changes", e.post("shed_changes", map[string]any{}, a), nil, "time")
	pinGolden(t, "journal_diff", e.post("shed_changes", map[string]any{"change_id": 2}, a), nil, "time")
	pinGolden(t, "journal_undo", e.post("shed_undo", map[string]any{"change_id": 2}, a), nil, "time")
}
