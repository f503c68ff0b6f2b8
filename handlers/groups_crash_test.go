package handlers_test

import (
	"testing"
	"time"
)

// TestGroupOwnershipAfterCrash: records are written before the file and removed after it,
// so a crash leaves at worst a record whose file does not exist. Such records (written
// here into the state database as the crash would leave them) never block anyone, through
// the tools or through shed_exec, and the next call cleans them up.
func TestGroupOwnershipAfterCrash(t *testing.T) {
	t.Parallel()
	g := startGroups(t, nil)
	db := stateDB(t, g.env)
	ghost := func(p string) {
		now := time.Now().UnixMicro()
		if _, err := db.Exec(`INSERT INTO ownership (group_id, path, owner_id, mode, created_us, updated_us) VALUES ('team', $1, 'alice', 'owner', $2, $2)`, p, now); err != nil {
			t.Fatal(err)
		}
	}
	count := func(p string) int {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM ownership WHERE group_id = 'team' AND path = $1`, p).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// Crash after the record of a create, before the file: bob creates the file and owns it.
	ghost("new.md")
	g.create("bob", "new.md", "bob\n", "owner")
	wantError(t, g.as("alice", "shed_patch_text", in(map[string]any{"path": "new.md", "content": "x"})), "FILE_OWNER_ONLY")
	// Crash after a delete, before its record went: the same.
	ghost("gone/x.md")
	g.create("bob", "gone/x.md", "bob\n", "")
	// Crash in a rename after the records were copied: the file is still protected at its
	// old place, the copy at the new place blocks nobody.
	g.create("alice", "a.md", "alice\n", "owner")
	ghost("b.md")
	wantError(t, g.as("bob", "shed_patch_text", in(map[string]any{"path": "a.md", "content": "x"})), "FILE_OWNER_ONLY")
	g.create("bob", "b.md", "bob\n", "")
	// A command creating a file where a stale record points: the file is not alice's, it
	// is bob's, as the files the tools create (group_default_mode 'group').
	ghost("cmd.md")
	wantOK(t, g.as("bob", "shed_exec", in(map[string]any{"cmd": "cp", "args": []string{"b.md", "cmd.md"}})))
	var owner string
	if err := db.QueryRow(`SELECT owner_id FROM ownership WHERE group_id = 'team' AND path = 'cmd.md'`).Scan(&owner); err != nil || count("cmd.md") != 1 || owner != "bob" {
		t.Fatalf("stale record kept by the exec guard: owner %q, %v", owner, err)
	}
	wantOK(t, g.as("bob", "shed_patch_text", in(map[string]any{"path": "cmd.md", "content": "x"})))
	// shed_group_info never shows a record without its file as a file.
	ghost("phantom.md")
	r := g.as("bob", "shed_group_info", map[string]any{"group": "team"})
	wantOK(t, r)
	for _, f := range r.Data["files"].([]any) {
		if f.(map[string]any)["path"] == "phantom.md" {
			t.Fatalf("phantom listed: %s", r.raw)
		}
	}
}
