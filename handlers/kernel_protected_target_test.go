package handlers_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/core/archive/ziptest"
)

// versionedZones are the zones where .git is protected, with their data folder (alice's).
var versionedZones = []struct {
	name string
	args map[string]any
	dir  string
}{
	{"documents", map[string]any{"zone": "documents"}, "users/alice/Documents/data"},
	{"group", map[string]any{"zone": "group", "group": "team"}, "groups/team/data"},
}

// withZone is args with the zone's arguments added.
func withZone(zone, args map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range zone {
		out[k] = v
	}
	for k, v := range args {
		out[k] = v
	}
	return out
}

// TestWritesThroughALinkToGitAreRefused (issue 32 item 2): a link a command left in a
// versioned zone (proj/lnk -> .git, by tar, unzip or ln) no longer lets a tool write
// proj/.git: the transaction checks the path each write reaches, every symlink resolved,
// not the path as given. Before, shed_create_file path=proj/lnk content="gitdir: evil"
// wrote proj/.git, the folder's zip shipped it, and git in the downloaded folder ran the
// attacker's core.fsmonitor.
func TestWritesThroughALinkToGitAreRefused(t *testing.T) {
	t.Parallel()
	g := startGroups(t, nil)
	for _, z := range versionedZones {
		t.Run(z.name, func(t *testing.T) {
			dir := filepath.Join(g.base, z.dir)
			wantOK(t, g.as("alice", "shed_create_file", withZone(z.args, map[string]any{"path": "proj/ok.txt", "content": "ok"})))
			r := g.as("alice", "shed_create_file", withZone(z.args, map[string]any{"path": "proj/r.txt", "content": "v1"}))
			wantOK(t, r)
			v1, _ := r.Data["commit"].(string)
			if v1 == "" {
				t.Fatalf("no commit: %s", r.raw)
			}
			links := map[string]string{
				"proj/lnk":     ".git",          // dangling: the write would create proj/.git
				"proj/up":      "../proj/.GIT",  // another spelling, through ..
				"proj/gd":      ".git",          // a folder on the way: proj/gd/config
				"proj/ads":     ".git::$DATA",   // an NTFS stream of .git
				"proj/r.txt":   ".git",          // a file with history, replaced by a link
				"proj/hop":     "lnk",           // a chain: hop -> lnk -> .git
				"top":          "proj/.git/cfg", // from another folder
				"proj/page.md": ".git",          // shed_save_page adds .md
			}
			for name, target := range links {
				p := filepath.Join(dir, name)
				_ = os.Remove(p)
				must(t, os.Symlink(target, p))
			}
			calls := []struct {
				tool string
				args map[string]any
			}{
				{"shed_create_file", map[string]any{"path": "proj/lnk", "content": "gitdir: /tmp/evil\n"}},
				{"shed_create_file", map[string]any{"path": "proj/up", "content": "x"}},
				{"shed_create_file", map[string]any{"path": "proj/gd/config", "content": "[core]\n\tfsmonitor = evil\n"}},
				{"shed_create_file", map[string]any{"path": "proj/ads", "content": "x"}},
				{"shed_create_file", map[string]any{"path": "proj/hop", "content": "x", "overwrite": true}},
				{"shed_create_file", map[string]any{"path": "top", "content": "x"}},
				{"shed_patch_text", map[string]any{"path": "proj/lnk", "content": "gitdir: evil\n", "position": "end"}},
				{"shed_patch_bytes", map[string]any{"path": "proj/lnk", "content": "41"}},
				{"shed_save_page", map[string]any{"title": "t", "content": "x", "path": "proj/page.md"}},
				{"shed_restore", map[string]any{"path": "proj/r.txt", "version": v1}},
				{"shed_rename", map[string]any{"old_path": "proj/ok.txt", "new_path": "proj/gd/config"}},
				{"shed_exec", map[string]any{"cmd": "cp", "args": []string{"proj/ok.txt", "proj/lnk"}}},
				{"shed_exec", map[string]any{"cmd": "cp", "args": []string{"proj/ok.txt", "proj/gd/config"}}},
				{"shed_exec", map[string]any{"cmd": "echo", "args": []string{"gitdir: evil"}, "stdout_file": "proj/lnk"}},
				{"shed_exec", map[string]any{"cmd": "echo", "args": []string{"x"}, "stderr_file": "proj/hop"}},
			}
			for _, c := range calls {
				r := g.as("alice", c.tool, withZone(z.args, c.args))
				if r.Success || r.Error != "PROTECTED_PATH" {
					t.Errorf("%s %v: want PROTECTED_PATH, got %s", c.tool, c.args, r.raw)
					continue
				}
				if strings.Contains(r.raw, g.base) {
					t.Errorf("%s: host path in %s", c.tool, r.raw)
				}
			}
			wantOK(t, g.as("alice", "shed_create_file", map[string]any{"zone": "storage", "path": "s.txt", "content": "s", "overwrite": true}))
			if z.name == "group" {
				wantError(t, g.as("alice", "shed_copy_to_group", map[string]any{"src_zone": "storage", "src_path": "s.txt",
					"group": "team", "dest_path": "proj/lnk", "overwrite": true}), "PROTECTED_PATH")
			} else {
				// The bridge refuses to replace anything but a file (FILE_EXISTS): refused too.
				r := g.as("alice", "shed_copy_storage_to_documents", map[string]any{"src": "s.txt", "dest": "proj/lnk", "overwrite": true})
				if r.Success {
					t.Fatalf("copied through the link: %s", r.raw)
				}
			}
			wantNoGit(t, dir)
			// The link itself is no protected name: it can be deleted, and replaced by a file.
			wantOK(t, g.as("alice", "shed_delete", withZone(z.args, map[string]any{"path": "proj/lnk"})))
			wantOK(t, g.as("alice", "shed_create_file", withZone(z.args, map[string]any{"path": "proj/lnk", "content": "plain"})))
			if fi, err := os.Lstat(filepath.Join(dir, "proj/lnk")); err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("proj/lnk: %v %v", fi, err)
			}
			wantNoGit(t, dir)
		})
	}
}

// TestCommandLinksToGitAreSwept (issue 32 item 2): a link a command makes or retargets in
// a versioned zone whose target is protected (an unzip'd link to .git, tar replacing an
// old link) is removed after the command and listed in data.reverted; the next write of
// that name makes a plain file. Links to anything else are kept.
func TestCommandLinksToGitAreSwept(t *testing.T) {
	t.Parallel()
	g := startGroups(t, nil)
	for _, z := range versionedZones {
		t.Run(z.name, func(t *testing.T) {
			dir := filepath.Join(g.base, z.dir)
			run := func(cmd string, args ...string) reply {
				return g.as("alice", "shed_exec", withZone(z.args, map[string]any{"cmd": cmd, "args": args}))
			}
			wantOK(t, g.as("alice", "shed_create_file", withZone(z.args, map[string]any{"path": "proj/ok.txt", "content": "ok"})))
			g.zipAt(z.dir+"/l.zip", zipOf(
				ziptest.Entry{Name: "proj/lnk", Body: ".git", Mode: fs.ModeSymlink | 0o777},
				ziptest.Entry{Name: "proj/deep", Body: "../proj/.GIT/hooks/post-checkout", Mode: fs.ModeSymlink | 0o777},
				ziptest.Entry{Name: "proj/fine", Body: "ok.txt", Mode: fs.ModeSymlink | 0o777},
				ziptest.Entry{Name: "proj/keep.txt", Body: "keep"}))
			r := run("unzip", "-o", "l.zip")
			wantOK(t, r)
			wantReverted(t, r, "proj/lnk", "proj/deep")
			if _, err := os.Lstat(filepath.Join(dir, "proj/lnk")); !os.IsNotExist(err) {
				t.Fatalf("proj/lnk kept: %v", err)
			}
			if target, err := os.Readlink(filepath.Join(dir, "proj/fine")); err != nil || target != "ok.txt" {
				t.Fatalf("a link to a plain file was removed: %q %v", target, err)
			}
			wantOK(t, g.as("alice", "shed_create_file", withZone(z.args, map[string]any{"path": "proj/lnk", "content": "gitdir: evil"})))
			if fi, err := os.Lstat(filepath.Join(dir, "proj/lnk")); err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("proj/lnk: %v %v", fi, err)
			}
			// A link that existed, retargeted by a command (same name, new target).
			tarDir := t.TempDir()
			must(t, os.MkdirAll(filepath.Join(tarDir, "proj"), 0o700))
			must(t, os.Symlink(".git", filepath.Join(tarDir, "proj/fine")))
			tarball := filepath.Join(dir, "t.tar")
			if out, err := exec.Command("tar", "-C", tarDir, "-cf", tarball, "proj").CombinedOutput(); err != nil {
				t.Fatalf("tar: %v %s", err, out)
			}
			r = run("tar", "-xf", "t.tar")
			wantOK(t, r)
			wantReverted(t, r, "proj/fine")
			if _, err := os.Lstat(filepath.Join(dir, "proj/fine")); !os.IsNotExist(err) {
				t.Fatalf("the retargeted proj/fine was kept: %v", err)
			}
			wantNoGit(t, dir)
		})
	}
}

// wantReverted fails unless every path is in the answer's data.reverted, removed.
func wantReverted(t *testing.T, r reply, paths ...string) {
	t.Helper()
	list, _ := r.Data["reverted"].([]any)
	for _, p := range paths {
		found := false
		for _, e := range list {
			m, _ := e.(map[string]any)
			found = found || m["path"] == p && m["removed"] == true
		}
		if !found {
			t.Errorf("%s not in data.reverted: %s", p, r.raw)
		}
	}
}
