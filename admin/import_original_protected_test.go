package admin_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportOriginalSkipsProtectedNames (issue 32 #9): the import used to bring into the
// versioned zones paths no tool can delete (PROTECTED_PATH) and that every zip of the
// folder carries: a top-level .GIT/, proj/.git with an fsmonitor config, git~1, a group's
// sub/.git/hooks, a link to .git. Each is skipped and reported (every spelling, through
// core.ProtectedReason); Storage keeps a user's clone as it is.
func TestImportOriginalSkipsProtectedNames(t *testing.T) {
	t.Parallel()
	o := original{t: t, dir: filepath.Join(t.TempDir(), "user_files")}
	docs := "users/" + alice + "/Documents/data"
	o.initRepo(docs, "storage@openwebui.local", true)
	o.write(docs+"/plan.md", "plan\n")
	o.commit(docs, "", "Patch plan.md: end")
	o.write(docs+"/.GIT/config", "[core]\n\tfsmonitor = touch /tmp/pwned\n")
	o.write(docs+"/proj/.git/config", "[core]\n\tfsmonitor = touch /tmp/pwned\n")
	o.write(docs+"/proj/readme.md", "kept\n")
	o.write(docs+"/git~1/HEAD", "ref: refs/heads/main\n")
	if err := os.Symlink(".GIT", filepath.Join(o.dir, docs, "lnk")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("proj/.git/config", filepath.Join(o.dir, docs, "cfg")); err != nil {
		t.Fatal(err)
	}
	g := "groups/" + team + "/data"
	o.write(g+"/sub/.git/hooks/post-checkout", "#!/bin/sh\ntouch /tmp/pwned\n")
	o.write(g+"/sub/ok.md", "ok\n")
	o.write("users/"+alice+"/Storage/data/clone/.git/HEAD", "ref: refs/heads/main\n")
	o.ownershipDB(nil)
	base := filepath.Join(t.TempDir(), "storage")
	code, out, errOut := run(t, base, "import-original", o.dir)
	if code != 0 {
		t.Fatalf("import: %s %s", out, errOut)
	}
	for _, want := range []string{
		docs + "/.GIT: a protected name (.git folders are never written",
		docs + "/proj/.git: a protected name",
		docs + "/git~1: a protected name",
		docs + "/lnk -> .GIT: a symlink to a protected name",
		docs + "/cfg -> proj/.git/config: a symlink to a protected name",
		g + "/sub/.git: a protected name",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	for _, p := range []string{"users/" + alice + "/Documents/data/.GIT", "users/" + alice + "/Documents/data/proj/.git",
		"users/" + alice + "/Documents/data/git~1", "users/" + alice + "/Documents/data/lnk", "users/" + alice + "/Documents/data/cfg",
		"groups/" + team + "/data/sub/.git"} {
		if _, err := os.Lstat(filepath.Join(base, p)); err == nil {
			t.Errorf("%s was imported", p)
		}
	}
	for _, p := range []string{"users/" + alice + "/Documents/data/proj/readme.md", "groups/" + team + "/data/sub/ok.md",
		"users/" + alice + "/Storage/data/clone/.git/HEAD"} {
		if _, err := os.Lstat(filepath.Join(base, p)); err != nil {
			t.Errorf("%s was not imported: %v", p, err)
		}
	}
	if code, out, errOut := run(t, base, "verify"); code != 0 {
		t.Fatalf("verify of the imported storage: %s %s", out, errOut)
	}
}

// TestVerifyReadsEveryVersionAndFindsProtectedNames (issue 32 #9, issue 33): admin verify
// used to say "problems: 0" with an older blob missing from a repository (shed_version
// restore then failed) and with a .GIT folder in a zone; it reads every reachable object
// and lists protected names now.
func TestVerifyReadsEveryVersionAndFindsProtectedNames(t *testing.T) {
	t.Parallel()
	o := original{t: t, dir: filepath.Join(t.TempDir(), "user_files")}
	docs := "users/" + alice + "/Documents/data"
	o.initRepo(docs, "storage@openwebui.local", true)
	o.write(docs+"/plan.md", "v1\n")
	o.commit(docs, "", "Patch plan.md: end")
	blob := o.git(docs, "rev-parse", "HEAD:plan.md")
	o.write(docs+"/plan.md", "v2\n")
	o.commit(docs, "", "Patch plan.md: end")
	base := filepath.Join(t.TempDir(), "storage")
	if code, out, errOut := run(t, base, "import-original", o.dir); code != 0 {
		t.Fatalf("import: %s %s", out, errOut)
	}
	if code, out, errOut := run(t, base, "verify"); code != 0 {
		t.Fatalf("verify of the imported storage: %s %s", out, errOut)
	}
	repo := filepath.Join(base, "users", alice, "Documents", "repo.git")
	if err := os.Remove(filepath.Join(repo, "objects", blob[:2], blob[2:])); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".GIT/config", "sub/.git/HEAD"} {
		f := filepath.Join(base, "users", alice, "Documents", "data", p)
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	code, out, _ := run(t, base, "verify")
	var rep struct {
		Repositories map[string]string   `json:"repositories"`
		Protected    map[string][]string `json:"protected_paths"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	name := "user " + alice + " documents"
	if code != 1 || !strings.Contains(rep.Repositories[name], "blob "+blob+" (plan.md in commit ") {
		t.Errorf("verify does not report the missing blob: %d %s", code, out)
	}
	if got := strings.Join(rep.Protected[name], "; "); !strings.Contains(got, ".GIT (") || !strings.Contains(got, "sub/.git (") {
		t.Errorf("verify does not list the protected names: %s", out)
	}
}
