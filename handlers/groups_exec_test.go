package handlers_test

import (
	"archive/tar"
	"bytes"
	"encoding/base64"
	"slices"
	"strings"
	"testing"
)

// reverted returns the paths listed in data.reverted.
func reverted(r reply) []string {
	var out []string
	list, _ := r.Data["reverted"].([]any)
	for _, x := range list {
		out = append(out, x.(map[string]any)["path"].(string))
	}
	return out
}

// TestGroupExecGuard: whatever command a member runs, alice's 'owner' file ends as it was,
// the change is reported in data.reverted, and it is not in the commit.
func TestGroupExecGuard(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup [][]string // commands bob runs first (not checked)
		cmd   []string
	}{
		{"mv folder", nil, []string{"mv", "docs", "docs2"}},
		{"mv file", nil, []string{"mv", "docs/plan.md", "x.md"}},
		{"rm -r dot", nil, []string{"rm", "-r", "."}},
		{"rm -rf folder", nil, []string{"rm", "-rf", "docs"}},
		{"gzip", nil, []string{"gzip", "docs/plan.md"}},
		{"sed -i", nil, []string{"sed", "-i", "s/v1/pwned/", "docs/plan.md"}},
		{"tar -xf over it", [][]string{{"tar", "-cf", "x.tar", "b/docs/plan.md"}}, []string{"tar", "-xf", "x.tar", "--strip-components=1"}},
		// ln is not on the whitelist; tar and cp make the same links.
		{"symlink over it (ln -sf)", nil, []string{"tar", "-xf", "links.tar", "docs/plan.md"}},
		{"hard link (cp -l)", nil, []string{"cp", "-l", "docs/plan.md", "mine.md"}},
		{"truncate", nil, []string{"truncate", "-s", "0", "docs/plan.md"}},
		{"cp over it", nil, []string{"cp", "b/docs/plan.md", "docs/plan.md"}},
		{"touch", nil, []string{"touch", "docs/plan.md"}},
		{"chmod (install -m)", nil, []string{"install", "-m", "0644", "b/docs/plan.md", "docs/plan.md"}},
		{"folder replaced by a link", nil, []string{"tar", "-xf", "links.tar", "--recursive-unlink", "docs"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := startGroups(t, nil)
			g.create("alice", "docs/plan.md", "v1\n", "owner")
			g.create("bob", "b/docs/plan.md", "bob's\n", "")
			wantOK(t, g.as("bob", "shed_create_file", in(map[string]any{"path": "links.tar", "file_type": "bytes",
				"content_format": "base64", "content": linksTar(t)})))
			var r reply
			for _, c := range append(tc.setup, tc.cmd) {
				r = g.as("bob", "shed_exec", in(map[string]any{"cmd": c[0], "args": c[1:]}))
				wantOK(t, r)
			}
			g.wantFile("docs/plan.md", "v1\n")
			t.Logf("reverted: %v", r.Data["reverted"])
			if got := reverted(r); len(got) != 1 || got[0] != "docs/plan.md" {
				if !(tc.name == "rm -r dot" && got == nil) { // rm refuses '.' itself
					t.Fatalf("reverted = %v: %s", got, r.raw)
				}
			}
			// The commit holds alice's content: a read of HEAD through git agrees.
			h := g.as("bob", "shed_exec", in(map[string]any{"cmd": "git", "args": []string{"show", "HEAD:docs/plan.md"}}))
			wantOK(t, h)
			if h.Data["stdout"] != "v1\n" {
				t.Fatalf("HEAD:docs/plan.md = %q", h.Data["stdout"])
			}
			// Still protected afterwards.
			wantError(t, g.as("bob", "shed_patch_text", in(map[string]any{"path": "docs/plan.md", "content": "x"})), "FILE_OWNER_ONLY")
		})
	}
}

// TestGroupExecOwnerAndOthers: the guard only reverts what the caller may not do: the owner
// edits and removes her own file, group-mode files are anyone's, and an owner_ro file is
// protected from its owner's edits but she may delete it.
func TestGroupExecOwnerAndOthers(t *testing.T) {
	t.Parallel()
	g := startGroups(t, nil)
	g.create("alice", "mine.md", "v1\n", "owner")
	g.create("alice", "shared.md", "v1\n", "group")
	g.create("alice", "ro.md", "v1\n", "owner_ro")
	r := g.as("alice", "shed_exec", in(map[string]any{"cmd": "sed", "args": []string{"-i", "s/v1/v2/", "mine.md", "ro.md"}}))
	wantOK(t, r)
	g.wantFile("mine.md", "v2\n")
	g.wantFile("ro.md", "v1\n")
	if got := reverted(r); len(got) != 1 || got[0] != "ro.md" {
		t.Fatalf("reverted = %v", got)
	}
	r = g.as("bob", "shed_exec", in(map[string]any{"cmd": "sed", "args": []string{"-i", "s/v1/bob/", "shared.md"}}))
	wantOK(t, r)
	g.wantFile("shared.md", "bob\n")
	if reverted(r) != nil {
		t.Fatalf("reverted: %s", r.raw)
	}
	// alice's rm of her owner_ro file is put back (owner_ro protects from its owner too,
	// reference §2.10); once she switches it to 'owner', rm deletes it and its record.
	r = g.as("alice", "shed_exec", in(map[string]any{"cmd": "rm", "args": []string{"ro.md", "mine.md"}}))
	wantOK(t, r)
	g.wantFile("ro.md", "v1\n")
	if got := reverted(r); len(got) != 1 || got[0] != "ro.md" {
		t.Fatalf("reverted = %v", got)
	}
	wantOK(t, g.as("alice", "shed_group_set_mode", in(map[string]any{"path": "ro.md", "mode": "owner"})))
	wantOK(t, g.as("alice", "shed_exec", in(map[string]any{"cmd": "rm", "args": []string{"ro.md"}})))
	if _, ok := g.file("ro.md"); ok {
		t.Fatal("ro.md not deleted by its owner")
	}
	// A file bob then makes there with a command is his, and writable.
	wantOK(t, g.as("bob", "shed_exec", in(map[string]any{"cmd": "cp", "args": []string{"shared.md", "ro.md"}})))
	wantOK(t, g.as("bob", "shed_patch_text", in(map[string]any{"path": "ro.md", "content": "ok\n"})))
	// alice moves a folder holding her file and one of carol's: hers moves, carol's is put back.
	g.create("alice", "d/a.md", "a\n", "owner")
	g.create("carol", "d/c.md", "c\n", "owner")
	r = g.as("alice", "shed_exec", in(map[string]any{"cmd": "mv", "args": []string{"d", "d2"}}))
	wantOK(t, r)
	if got := reverted(r); len(got) != 1 || got[0] != "d/c.md" {
		t.Fatalf("reverted = %v", got)
	}
	g.wantFile("d2/a.md", "a\n")
	g.wantFile("d/c.md", "c\n")
	if _, ok := g.file("d/a.md"); ok {
		t.Fatal("alice's own move was reverted")
	}
	// stdout_file onto a protected file is a write too.
	g.create("alice", "out.md", "keep\n", "owner")
	r = g.as("bob", "shed_exec", in(map[string]any{"cmd": "echo", "args": []string{"pwned"}, "stdout_file": "out.md"}))
	wantOK(t, r)
	g.wantFile("out.md", "keep\n")
	// cp /dev/null over it: refused (outside the zone) or reverted.
	if r = g.as("bob", "shed_exec", in(map[string]any{"cmd": "cp", "args": []string{"/dev/null", "out.md"}})); !r.Success {
		wantError(t, r, "PATH_ESCAPE")
	}
	g.wantFile("out.md", "keep\n")
	// Quota usage counts what is on disk after the restore.
	st := g.as("alice", "shed_group_info", map[string]any{"group": "team"})
	wantOK(t, st)
	used := st.Data["quota"].(map[string]any)["used_bytes"].(float64)
	if disk := groupDiskAt(t, g.base, "team"); int64(used) != disk {
		t.Fatalf("used %v, disk %d", used, disk)
	}
}

// linksTar is an archive of two symlinks: docs -> b/docs (a folder replaced by a link) and
// docs/plan.md -> ../b/docs/plan.md (a file replaced by a link), base64.
func linksTar(t *testing.T) string {
	return symlinkTar(t, "docs", "b/docs", "docs/plan.md", "../b/docs/plan.md")
}

// symlinkTar is a base64 tar archive of symlinks, given as name, target pairs: commands
// cannot make links (ln is not allowed) but tar extracts them.
func symlinkTar(t *testing.T, pairs ...string) string {
	var b bytes.Buffer
	w := tar.NewWriter(&b)
	for i := 0; i < len(pairs); i += 2 {
		if err := w.WriteHeader(&tar.Header{Name: pairs[i], Typeflag: tar.TypeSymlink, Linkname: pairs[i+1], Mode: 0o777}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

// TestGroupSymlinkedFolder: a link to a protected folder launders nothing: writes, deletes
// and renames through it are checked against the file it reaches; the link itself is anyone's.
func TestGroupSymlinkedFolder(t *testing.T) {
	t.Parallel()
	g := startGroups(t, nil)
	g.create("alice", "docs/plan.md", "v1\n", "owner")
	g.create("bob", "b.md", "bob\n", "")
	wantOK(t, g.as("bob", "shed_create_file", in(map[string]any{"path": "l.tar", "file_type": "bytes",
		"content_format": "base64", "content": symlinkTar(t, "l", "docs", "f.md", "docs/plan.md")})))
	wantOK(t, g.as("bob", "shed_exec", in(map[string]any{"cmd": "tar", "args": []string{"-xf", "l.tar"}})))
	wantError(t, g.as("bob", "shed_patch_text", in(map[string]any{"path": "l/plan.md", "content": "x"})), "FILE_OWNER_ONLY")
	wantError(t, g.as("bob", "shed_patch_text", in(map[string]any{"path": "f.md", "content": "x"})), "FILE_OWNER_ONLY")
	wantError(t, g.as("bob", "shed_delete", in(map[string]any{"path": "l/plan.md"})), "PERMISSION_DENIED")
	wantError(t, g.as("bob", "shed_rename", in(map[string]any{"old_path": "l/plan.md", "new_path": "x.md"})), "PERMISSION_DENIED")
	wantError(t, g.as("bob", "shed_rename", in(map[string]any{"old_path": "b.md", "new_path": "l/plan.md", "overwrite": true})), "FILE_OWNER_ONLY")
	wantOK(t, g.as("bob", "shed_delete", in(map[string]any{"path": "l"})))
	wantOK(t, g.as("bob", "shed_delete", in(map[string]any{"path": "f.md"})))
	g.wantFile("docs/plan.md", "v1\n")
}

// Both guards report into one data.reverted: in a group zone, a command that removes a file
// another conversation holds locked and a file owned by another member gets both back, and
// the answer lists both (the ownership guard used to overwrite the lock guard's list).
func TestGroupExecLockAndOwnerRevertedTogether(t *testing.T) {
	t.Parallel()
	g := startGroups(t, nil)
	g.create("alice", "docs/plan.md", "v1\n", "owner")
	g.create("bob", "notes/todo.md", "todo\n", "")
	wantOK(t, g.post("shed_lockedit_open", in(map[string]any{"path": "notes/todo.md"}),
		map[string]string{"Authorization": "Bearer " + key, "X-OpenWebUI-User-Id": "carol", "X-OpenWebUI-Chat-Id": "c-other"}))
	r := g.as("bob", "shed_exec", in(map[string]any{"cmd": "rm", "args": []string{"-r", "docs", "notes"}}))
	wantOK(t, r)
	g.wantFile("docs/plan.md", "v1\n")
	g.wantFile("notes/todo.md", "todo\n")
	got := reverted(r)
	slices.Sort(got)
	if !slices.Equal(got, []string{"docs/plan.md", "notes/todo.md"}) {
		t.Fatalf("reverted = %v: %s", got, r.raw)
	}
	if !strings.Contains(r.Message, "locked by another conversation") {
		t.Fatalf("message: %s", r.Message)
	}
}

// TestGroupCommandFilesOwnedLikeTools: the files a member's command creates get an owner by
// the write transaction's rule, as a tool's new file: the caller in group_default_mode
// ('group' included, so the creator may switch it to 'owner' later; a command's file used
// to get no record at all then, and shed_group_set_mode answered FILE_NOT_FOUND), no record
// of its own for a SQLite companion, and a link the command makes is recorded as itself:
// the record of the file it points at (another member's) is not touched.
func TestGroupCommandFilesOwnedLikeTools(t *testing.T) {
	t.Parallel()
	g := startGroups(t, nil)
	db := stateDB(t, g.env)
	g.create("alice", "docs/plan.md", "v1\n", "owner")
	g.create("bob", "seed.md", "seed\n", "")
	wantOK(t, g.as("bob", "shed_create_file", in(map[string]any{"path": "l.tar", "file_type": "bytes",
		"content_format": "base64", "content": symlinkTar(t, "ln.md", "docs/plan.md")})))
	wantOK(t, g.as("bob", "shed_exec", in(map[string]any{"cmd": "cp", "args": []string{"seed.md", "made.md"}})))
	wantOK(t, g.as("bob", "shed_exec", in(map[string]any{"cmd": "cp", "args": []string{"seed.md", "made.db-journal"}})))
	wantOK(t, g.as("bob", "shed_exec", in(map[string]any{"cmd": "tar", "args": []string{"-xf", "l.tar"}})))
	owner := func(p string) string {
		var o string
		if err := db.QueryRow(`SELECT owner_id || ':' || mode FROM ownership WHERE group_id = 'team' AND path = $1`, p).Scan(&o); err != nil {
			return err.Error()
		}
		return o
	}
	for p, want := range map[string]string{"made.md": "bob:group", "made.db-journal": "sql: no rows in result set",
		"docs/plan.md": "alice:owner", "ln.md": "bob:group"} {
		if got := owner(p); got != want {
			t.Errorf("record of %s = %q, want %q", p, got, want)
		}
	}
	wantError(t, g.as("alice", "shed_group_set_mode", map[string]any{"group": "team", "path": "made.md", "mode": "owner"}), "NOT_FILE_OWNER")
	wantOK(t, g.as("bob", "shed_group_set_mode", map[string]any{"group": "team", "path": "made.md", "mode": "owner"}))
	wantError(t, g.as("alice", "shed_patch_text", in(map[string]any{"path": "made.md", "content": "x"})), "FILE_OWNER_ONLY")
	wantError(t, g.as("bob", "shed_patch_text", in(map[string]any{"path": "docs/plan.md", "content": "x"})), "FILE_OWNER_ONLY")
}
