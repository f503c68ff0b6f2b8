package admin_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fileshed/fileshed/admin"
	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/internal/testtool"
)

// buildOriginal lays out an original storage with everything the import must carry over
// and everything it must leave out.
func buildOriginal(t *testing.T) original {
	o := original{t: t, dir: filepath.Join(t.TempDir(), "user_files")}
	docs := "users/" + alice + "/Documents/data"
	o.initRepo(docs, "storage@openwebui.local", true)
	o.write(docs+"/plan.md", "v1\n")
	o.commit(docs, "", "Patch plan.md: end")
	o.write(docs+"/plan.md", "v1\nv2\n")
	o.commit(docs, alice, "Edit plan.md")
	// A repository cloned into Documents by the original's shed_exec: the outer commit holds
	// it as a gitlink; fileshed versions its files (never its .git).
	o.initRepo(docs+"/proj", "storage@openwebui.local", true)
	o.write(docs+"/proj/readme.md", "cloned\n")
	o.commit(docs+"/proj", "", "inner")
	o.commit(docs, alice, "Add proj")
	o.write(docs+"/draft.md", "never committed\n") // a shed_exec's change: the original never committed it
	o.write("users/"+alice+"/Documents/locks/plan.md.lock", `{"conv_id": "chat-1", "user_id": "`+alice+`", "path": "plan.md"}`)
	o.write("users/"+alice+"/Documents/editzone/chat-1/plan.md", "unsaved edit\n")

	o.write("users/"+alice+"/Storage/data/s.txt", "storage text\n")
	o.write("users/"+alice+"/Storage/data/sub/t.csv", "a,b\n1,2\n")
	o.write("users/"+alice+"/Storage/data/secret.txt", "FILESHED_ENC_V1\x00"+strings.Repeat("\x8f", 40))
	if err := os.Symlink("/etc/passwd", filepath.Join(o.dir, "users", alice, "Storage/data/escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../../..", filepath.Join(o.dir, "users", alice, "Storage/data/sub/up")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(o.dir, "users", alice, "Storage/data/title\x1b]0;pwned\x07")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub/t.csv", filepath.Join(o.dir, "users", alice, "Storage/data/inside")); err != nil {
		t.Fatal(err)
	}
	o.write("users/"+alice+"/Storage/data/big.bin", strings.Repeat("x", 1<<20+1))
	o.write("users/"+alice+"/Uploads/chat-1/u.txt", "uploaded\n")
	o.write("users/"+alice+"/Uploads/chat with space/v.txt", "other chat\n")
	// A folder already named as fileshed names that chat: two folders for one conversation.
	o.write("users/"+alice+"/Uploads/"+core.SanitizeConvID("chat with space")+"/w.txt", "collides\n")

	// Bob's HEAD is detached (a `git checkout <commit>` through the original's shed_exec).
	bobDocs := "users/" + bob + "/Documents/data"
	o.initRepo(bobDocs, "storage@openwebui.local", true)
	o.write(bobDocs+"/b.md", "first\n")
	o.commit(bobDocs, "", "Patch b.md: end")
	first := o.git(bobDocs, "rev-parse", "HEAD")
	o.write(bobDocs+"/b.md", "second\n")
	o.commit(bobDocs, "", "Patch b.md: end")
	o.git(bobDocs, "checkout", "-q", first)

	// The group repository as the original made it (hooks not neutralised), then made
	// hostile: a hook and a config that would run programs under the git CLI.
	g := "groups/" + team + "/data"
	o.initRepo(g, "storage@openwebui", false)
	o.write(g+"/a.md", "alice's\n")
	o.write(g+"/b.md", "everyone's\n")
	o.commit(g, alice, "Add file to group")
	o.write(g+"/c.md", "frozen\n")
	o.commit(g, bob, "Add file to group")
	o.write(g+"/.git/hooks/post-checkout", "#!/bin/sh\ntouch /tmp/fileshed-import-hook-ran\n")
	if err := os.Chmod(filepath.Join(o.dir, g, ".git/hooks/post-checkout"), 0o755); err != nil {
		t.Fatal(err)
	}
	o.git(g, "config", "core.fsmonitor", "touch /tmp/fileshed-import-fsmonitor-ran")
	o.write("groups/"+team+"/locks/b.md.lock", `{"conv_id": "chat-9"}`)
	o.ownershipDB([][4]string{
		{team, "a.md", alice, "owner"},
		{team, "b.md", alice, "group"},
		{team, "c.md", bob, "owner_ro"},
		{team, "gone.md", alice, "owner"}, // its file was removed by a command: never cleaned up
		{"another-group", "x.md", bob, "owner"},
	})

	o.write("users/"+alice+"/Uploads/stray.txt", "not in a conversation\n")
	if err := syscall.Mkfifo(filepath.Join(o.dir, "users", alice, "Storage/data/fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	o.write(g+"/.git/objects/info/alternates", "/nonexistent/objects\n")
	// Carol's zones are links: to the host, and to another user's zone. Neither is followed.
	if err := os.MkdirAll(filepath.Join(o.dir, "users", carol, "Documents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(o.dir, "users", carol, "Storage")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../"+alice+"/Documents/data", filepath.Join(o.dir, "users", carol, "Documents/data")); err != nil {
		t.Fatal(err)
	}
	o.write("users/not valid!/Storage/data/x.txt", "x")
	o.write("README.txt", "not the original's")
	return o
}

// TestImportOriginal imports an original storage built as the original lays it out and
// checks it through a real server: files, history with its authors, group ownership modes,
// usage, and the original tree unchanged byte for byte.
func TestImportOriginal(t *testing.T) {
	t.Parallel()
	o := buildOriginal(t)
	before := treeHash(t, o.dir)
	base := filepath.Join(t.TempDir(), "storage")
	cfg := config(t, base)
	cfg.MaxFileSizeMB = 1
	var out, errOut strings.Builder
	if code := admin.Run(cfg, []string{"import-original", o.dir}, &out, &errOut); code != 0 {
		t.Fatalf("import-original: %d\n%s\n%s", code, out.String(), errOut.String())
	}
	report := out.String()
	t.Log(report)
	if strings.ContainsAny(report, "\x1b\x07") || !strings.Contains(report, `title\u001b]0;pwned\u0007 -> /etc: a symlink leaving its zone`) {
		t.Error("a name from the original reached the terminal unescaped")
	}
	if after := treeHash(t, o.dir); after != before {
		t.Fatal("the original storage changed during the import")
	}
	for _, want := range []string{
		"; Storage 3 file(s), 1.00 MB; Uploads 2 file(s), 20 B;",
		"Documents 4 commit(s) on master", // 3 commits + the uncommitted draft
		"user " + bob + ":",
		"HEAD was detached at",
		"group " + team + ": group 3 file(s)",
		"group 2 commit(s) on master; 3 ownership record(s)",
		"secret.txt: encrypted by the original (FILESHED_ENC_V1): not imported",
		"escape -> /etc/passwd: a symlink leaving its zone: not imported",
		"sub/up -> ../../../../..: a symlink leaving its zone",
		"big.bin: 1048577 bytes, over max_file_size_mb (1): imported",
		"Documents/locks: 1 lock(s) dropped (plan.md)",
		"Documents/editzone: 1 working cop(ies)",
		"groups/" + team + "/locks: 1 lock(s) dropped (b.md)",
		"conversation folder renamed chat_with_space-",
		"Uploads/" + core.SanitizeConvID("chat with space") + ": its conversation folder would be " + core.SanitizeConvID("chat with space") + ", as users/" + alice + "/Uploads/chat with space's: not imported",
		"hooks: post-checkout: not imported",
		"config: not imported (it set core.fsmonitor)",
		`1 ownership record(s) dropped: "gone.md" (no such file)`,
		`ownership record of "x.md" in group "another-group" dropped`,
		`"not valid!" is not a valid user id`,
		"README.txt: not part of the original's layout",
		"Uploads/stray.txt: not in a conversation folder",
		"Storage/data/fifo: not a file, folder or symlink",
		"objects/info/alternates: objects borrowed from elsewhere are not imported",
		"users/" + carol + "/Storage: not a folder (a symlink is never followed)",
		"users/" + carol + "/Documents/data: not a folder (a symlink is never followed)",
		"Documents/data/proj/.git: a protected name (.git folders are never written in a versioned zone",
		"imported 3 user(s), 1 group(s)",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q", want)
		}
	}

	// Usage recorded by the import, before any server recounts: the bytes of the files...
	aliceBytes := len("v1\nv2\n") + len("never committed\n") + len("storage text\n") + len("a,b\n1,2\n") + (1<<20 + 1) +
		len("uploaded\n") + len("other chat\n") + len("cloned\n") // not proj/.git: a protected name (issue 32 #9)
	groupBytes := len("alice's\n") + len("everyone's\n") + len("frozen\n")
	// ... and their history (the quota's unit since issue 32 item 8).
	aliceBytes += int(testtool.RegularSize(t, filepath.Join(base, "users", alice, "Documents", "repo.git", "objects")))
	groupBytes += int(testtool.RegularSize(t, filepath.Join(base, "groups", team, "repo.git", "objects")))
	code, shown, _ := run(t, base, "quota", "show")
	if code != 0 || !strings.Contains(shown, fmt.Sprintf("%s  %d", alice, aliceBytes)) {
		t.Fatalf("alice's usage is not %d bytes:\n%s", aliceBytes, shown)
	}
	if !strings.Contains(shown, fmt.Sprintf("%s  %d", team, groupBytes)) {
		t.Fatalf("the group's usage is not %d bytes:\n%s", groupBytes, shown)
	}
	if code, out, errOut := run(t, base, "verify"); code != 0 {
		t.Fatalf("verify of the imported storage: %s %s", out, errOut)
	}
	// The repositories beside the zones: no hook, fileshed's own config; no .git in a zone.
	for _, space := range []string{"users/" + alice + "/Documents", "groups/" + team} {
		hooks, _ := os.ReadDir(filepath.Join(base, space, "repo.git/hooks"))
		if len(hooks) > 0 {
			t.Errorf("%s: hooks were copied: %v", space, hooks)
		}
		conf, err := os.ReadFile(filepath.Join(base, space, "repo.git/config"))
		if err != nil || strings.Contains(string(conf), "touch") || !strings.Contains(string(conf), "hooksPath = /dev/null") {
			t.Errorf("%s: config not fileshed's: %v\n%s", space, err, conf)
		}
		if _, err := os.Lstat(filepath.Join(base, space, "data/.git")); err == nil {
			t.Errorf("%s: the original's .git was copied into the zone", space)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(base, "users", carol)); len(entries) > 0 {
		t.Errorf("carol's linked zones were imported: %v", entries)
	}
	if _, err := os.Lstat(filepath.Join(base, ".import-original")); err == nil {
		t.Error("the staging directory was left behind")
	}

	s := serveHeaders(t, config(t, base))
	if d := s.ok(t, alice, "", "shed_read", map[string]any{"zone": "documents", "path": "plan.md"}); d["content"] != "v1\nv2\n" {
		t.Fatalf("plan.md: %v", d)
	}
	h := s.ok(t, alice, "", "shed_history", map[string]any{"zone": "documents", "path": "plan.md"})
	entries, _ := h["entries"].([]any)
	if len(entries) != 2 {
		t.Fatalf("history of plan.md: want the original's 2 commits, got %v", h)
	}
	for i, want := range [][2]string{{alice, "Edit plan.md"}, {"Fileshed", "Patch plan.md: end"}} {
		e := entries[i].(map[string]any)
		if e["author"] != want[0] || strings.TrimSpace(e["message"].(string)) != want[1] {
			t.Errorf("commit %d: want %v, got %v", i, want, e)
		}
	}
	if d := s.ok(t, alice, "", "shed_read", map[string]any{"zone": "documents", "path": "proj/readme.md"}); d["content"] != "cloned\n" {
		t.Errorf("a repository cloned into Documents: %v", d)
	}
	if d := s.ok(t, alice, "", "shed_version", map[string]any{"action": "history", "zone": "documents"}); d["count"] != float64(4) {
		t.Errorf("history of the zone: %v", d)
	}
	if d := s.ok(t, alice, "", "shed_read", map[string]any{"zone": "storage", "path": "inside"}); d["content"] != "a,b\n1,2\n" {
		t.Errorf("a link inside the zone: %v", d)
	}
	s.refused(t, alice, "shed_read", map[string]any{"zone": "storage", "path": "secret.txt"}, "FILE_NOT_FOUND")
	if d := s.ok(t, alice, "chat-1", "shed_read", map[string]any{"zone": "uploads", "path": "u.txt"}); d["content"] != "uploaded\n" {
		t.Errorf("uploads of chat-1: %v", d)
	}
	if d := s.ok(t, alice, "chat with space", "shed_read", map[string]any{"zone": "uploads", "path": "v.txt"}); d["content"] != "other chat\n" {
		t.Errorf("uploads of a chat whose id is not a safe name: %v", d)
	}
	if d := s.ok(t, bob, "", "shed_read", map[string]any{"zone": "documents", "path": "b.md"}); d["content"] != "first\n" {
		t.Errorf("bob's detached HEAD: %v", d)
	}
	s.ok(t, bob, "", "shed_patch_text", map[string]any{"zone": "documents", "path": "b.md", "content": "third\n", "position": "end"})

	// Group: history with the users as authors, and the ownership modes hold.
	gh := s.ok(t, bob, "", "shed_history", map[string]any{"zone": "group", "group": team, "path": "c.md"})
	if e, _ := gh["entries"].([]any); len(e) != 1 || e[0].(map[string]any)["author"] != bob {
		t.Errorf("history of the group's c.md: %v", gh)
	}
	in := func(p string) map[string]any {
		return map[string]any{"zone": "group", "group": team, "path": p, "content": "more\n", "position": "end"}
	}
	s.refused(t, bob, "shed_patch_text", in("a.md"), "FILE_OWNER_ONLY")
	s.ok(t, alice, "", "shed_patch_text", in("a.md"))
	s.ok(t, bob, "", "shed_patch_text", in("b.md"))
	s.refused(t, bob, "shed_patch_text", in("c.md"), "FILE_READ_ONLY")
	s.refused(t, alice, "shed_delete", map[string]any{"zone": "group", "group": team, "path": "c.md"}, "PERMISSION_DENIED")
	info := s.ok(t, alice, "", "shed_group", map[string]any{"action": "info", "group": team})
	if !strings.Contains(fmt.Sprint(info["files"]), "owner:"+alice) {
		t.Errorf("group info does not name the owners: %v", info)
	}
	for _, marker := range []string{"/tmp/fileshed-import-hook-ran", "/tmp/fileshed-import-fsmonitor-ran"} {
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("the original's git hook or fsmonitor ran: %s exists", marker)
		}
	}
}
