package handlers_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/core/archive/ziptest"
	"github.com/fileshed/fileshed/core/vcs"
)

// gitSpellings are the names of a .git path, as a model, a careless user or an attacker
// would spell them; every one is PROTECTED_PATH in a versioned zone (issue 23).
var gitSpellings = []string{
	".git/config",
	"sub/.git/hooks/pre-commit",
	"./.git/config",
	"a/../.git/x",
	".GIT/config",
	".Git/hooks/post-checkout",
	".git./config",      // NTFS drops the trailing dot
	".git /config",      // and the trailing space
	"git~1/config",      // NTFS short name
	".g\u200cit/config", // HFS+ ignores zero-width characters
	// NTFS alternate data streams and short names (issue 32): git fsck's hasDotgit.
	".git::$INDEX_ALLOCATION/config",
	".git:x",
	"GIT~1:x",
	".git.::$DATA",
	"sub/git~1 :$DATA/x",
}

// TestGitPathsAreProtectedInVersionedZones (issue 23): no tool writes a .git path in
// Documents or a group zone. Planted in a group, a .git/config with core.fsmonitor reached
// every member who downloaded the folder and opened it with git.
func TestGitPathsAreProtectedInVersionedZones(t *testing.T) {
	t.Parallel()
	g := startGroups(t, nil)
	zones := []struct {
		name string
		args map[string]any
		dir  string
	}{
		{"documents", map[string]any{"zone": "documents"}, "users/alice/Documents/data"},
		{"group", map[string]any{"zone": "group", "group": "team"}, "groups/team/data"},
	}
	wantOK(t, g.as("alice", "shed_create_file", map[string]any{"zone": "storage", "path": "s.txt", "content": "s"}))
	for _, z := range zones {
		with := func(extra map[string]any) map[string]any {
			out := map[string]any{}
			for k, v := range z.args {
				out[k] = v
			}
			for k, v := range extra {
				out[k] = v
			}
			return out
		}
		wantOK(t, g.as("alice", "shed_create_file", with(map[string]any{"path": "ok.txt", "content": "ok"})))
		for _, p := range gitSpellings {
			t.Run(z.name+"/"+p, func(t *testing.T) {
				calls := []struct {
					tool string
					args map[string]any
				}{
					{"shed_create_file", with(map[string]any{"path": p, "content": "[core]\n\tfsmonitor = evil\n"})},
					{"shed_patch_text", with(map[string]any{"path": p, "content": "x", "position": "end"})},
					{"shed_patch_bytes", with(map[string]any{"path": p, "content": "41"})},
					{"shed_rename", with(map[string]any{"old_path": "ok.txt", "new_path": p})},
					{"shed_save_page", with(map[string]any{"title": "t", "content": "x", "path": p})},
				}
				for _, c := range calls {
					r := g.as("alice", c.tool, c.args)
					wantError(t, r, "PROTECTED_PATH")
					if strings.Contains(r.raw, g.base) {
						t.Fatalf("%s: host path in %s", c.tool, r.raw)
					}
				}
				if z.name == "group" {
					wantError(t, g.as("alice", "shed_copy_to_group", map[string]any{"src_zone": "storage", "src_path": "s.txt",
						"group": "team", "dest_path": p}), "PROTECTED_PATH")
				} else {
					wantError(t, g.as("alice", "shed_copy_storage_to_documents", map[string]any{"src": "s.txt", "dest": p}), "PROTECTED_PATH")
				}
			})
		}
		wantNoGit(t, filepath.Join(g.base, z.dir))
	}
}

// TestGitFoldersCannotBeCarriedIn (issue 23): a folder holding a .git (made in Storage, where
// .git is a user's own clone) is not copied, moved or renamed into or inside a versioned
// zone, and an archive entry under .git is not extracted there.
func TestGitFoldersCannotBeCarriedIn(t *testing.T) {
	t.Parallel()
	g := startGroups(t, nil)
	g.write("users/alice/Storage/data/proj/.git/config", "[core]\n\tfsmonitor = evil\n")
	g.write("users/alice/Storage/data/proj/readme.md", "hi")
	wantError(t, g.as("alice", "shed_copy_storage_to_documents", map[string]any{"src": "proj", "dest": "proj"}), "PROTECTED_PATH")
	wantError(t, g.as("alice", "shed_copy_to_group", map[string]any{"src_zone": "storage", "src_path": "proj",
		"group": "team", "dest_path": "proj"}), "PROTECTED_PATH")
	// A .git that pre-dates the rule (or came in by hand) is not moved around either.
	g.write("users/alice/Documents/data/old/.git/HEAD", "ref: refs/heads/main\n")
	wantError(t, g.as("alice", "shed_rename", map[string]any{"zone": "documents", "old_path": "old", "new_path": "new"}), "PROTECTED_PATH")
	for i, name := range []string{".git/config", "sub/.git/hooks/post-checkout", ".GIT/config"} {
		g.zipAt("users/alice/Storage/data/a.zip", zipOf(ziptest.Entry{Name: "ok.txt", Body: "ok"}, ziptest.Entry{Name: name, Body: "evil"}))
		r := g.as("alice", "shed_unzip", map[string]any{"zone": "documents", "src": "a.zip", "src_zone": "storage", "dest": fmt.Sprintf("x%d", i)})
		if r.Success {
			// Extracted without the .git entry is acceptable only if the entry is reported as skipped.
			if !strings.Contains(r.raw, "skipped") {
				t.Fatalf("%s: extracted without a word: %s", name, r.raw)
			}
		} else {
			wantError(t, r, "PROTECTED_PATH")
		}
	}
	wantNoGit(t, filepath.Join(g.base, "groups/team/data"))
	wantNoGitBelow(t, filepath.Join(g.base, "users/alice/Documents/data"), "old")
	if _, err := os.Stat(filepath.Join(g.base, "users/alice/Documents/data/proj")); err == nil {
		t.Fatal("proj was copied into Documents")
	}
}

// TestCommandsCannotCreateGitPaths (issue 23): `mkdir -p .git/hooks`, `cp -r x .git` and a
// tar with .git entries under shed_exec in Documents and a group: refused up front where an
// operand names .git, else removed after the command and listed in data.reverted.
func TestCommandsCannotCreateGitPaths(t *testing.T) {
	g := startGroups(t, nil)
	for _, z := range []map[string]any{{"zone": "documents"}, {"zone": "group", "group": "team"}} {
		call := func(cmd string, args ...string) reply {
			a := map[string]any{"cmd": cmd, "args": args}
			for k, v := range z {
				a[k] = v
			}
			return g.as("alice", "shed_exec", a)
		}
		dir := filepath.Join(g.base, "users/alice/Documents/data")
		if z["zone"] == "group" {
			dir = filepath.Join(g.base, "groups/team/data")
		}
		wantError(t, call("mkdir", "-p", ".git/hooks"), "PROTECTED_PATH")
		wantError(t, call("mkdir", "-p", "sub/.GIT"), "PROTECTED_PATH")
		wantOK(t, call("mkdir", "-p", "x"))
		wantError(t, call("cp", "-r", "x", ".git"), "PROTECTED_PATH")
		// A tar whose entries name .git: the operand does not show it.
		tarDir := t.TempDir()
		must(t, os.MkdirAll(filepath.Join(tarDir, "p/.git/hooks"), 0o700))
		must(t, os.WriteFile(filepath.Join(tarDir, "p/.git/hooks/post-checkout"), []byte("#!/bin/sh\necho evil\n"), 0o700))
		must(t, os.WriteFile(filepath.Join(tarDir, "p/keep.txt"), []byte("keep"), 0o600))
		tarball := filepath.Join(dir, "p.tar")
		if out, err := exec.Command("tar", "-C", tarDir, "-cf", tarball, "p").CombinedOutput(); err != nil {
			t.Fatalf("tar: %v %s", err, out)
		}
		r := call("tar", "-xf", "p.tar")
		wantOK(t, r)
		if !strings.Contains(r.raw, ".git") || r.Data["reverted"] == nil {
			t.Fatalf("the .git entries are not reported in data.reverted: %s", r.raw)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "p/keep.txt")); err != nil || string(b) != "keep" {
			t.Fatalf("the rest of the archive: %q %v", b, err)
		}
		wantNoGit(t, dir)
	}
}

// TestGitSpellingsAreNeverCommitted (issue 32): names that pre-date the rule (put there
// by hand) in each of git's spellings of .git — NTFS streams and short names, HFS+
// ignorables — are left out of the commit a command makes, so git fsck finds no
// hasDotgit in the history a member clones.
func TestGitSpellingsAreNeverCommitted(t *testing.T) {
	t.Parallel()
	g := startGroups(t, nil)
	for _, p := range gitSpellings {
		g.write("users/alice/Documents/data/"+p, "[core]\n\tfsmonitor = evil\n")
	}
	wantOK(t, g.as("alice", "shed_exec", map[string]any{"zone": "documents", "cmd": "touch", "args": []string{"new.txt"}}))
	gitDir := filepath.Join(g.base, "users/alice/Documents/repo.git")
	out, err := exec.Command("git", "--git-dir="+gitDir, "ls-tree", "-r", "--name-only", "HEAD").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "new.txt" {
		t.Fatalf("committed: %q %v", out, err)
	}
	if out, err := exec.Command("git", "--git-dir="+gitDir, "fsck", "--strict", "--no-progress").CombinedOutput(); err != nil {
		t.Fatalf("git fsck: %v\n%s", err, out)
	}
}

// wantNoGit fails when any .git-like folder exists under dir.
func wantNoGit(t *testing.T, dir string) {
	t.Helper()
	wantNoGitBelow(t, dir, "")
}

// wantNoGitBelow is wantNoGit except for the folder except (a .git that pre-dates the rule).
func wantNoGitBelow(t *testing.T, dir, except string) {
	t.Helper()
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if except != "" && p == filepath.Join(dir, except) {
			return filepath.SkipDir
		}
		if err == nil && vcs.IgnoredName(fi.Name()) {
			t.Fatalf("%s exists", strings.TrimPrefix(p, dir))
		}
		return nil
	})
}
