package admin_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportOriginalRefusals: what is not an original, a storage nested in the original
// (or the reverse), a storage that holds data (without --force) and a storage a server
// runs on are refused before anything is written; a failure midway changes nothing.
func TestImportOriginalRefusals(t *testing.T) {
	t.Parallel()
	o := original{t: t, dir: filepath.Join(t.TempDir(), "user_files")}
	o.write("users/"+alice+"/Storage/data/s.txt", "s\n")
	before := treeHash(t, o.dir)
	base := filepath.Join(t.TempDir(), "storage")

	refused := func(name, base string, args []string, want string) {
		t.Helper()
		code, out, errOut := run(t, base, append([]string{"import-original"}, args...)...)
		if code != 1 || !strings.Contains(errOut, want) {
			t.Fatalf("%s: want exit 1 and %q, got %d %q %q", name, want, code, out, errOut)
		}
	}
	refused("an empty folder", base, []string{t.TempDir()}, "not an original Fileshed storage directory")
	refused("a missing folder", base, []string{filepath.Join(t.TempDir(), "none")}, "no such file or directory")
	inside := filepath.Join(o.dir, "new-storage")
	refused("a storage inside the original", inside, []string{o.dir}, "must not contain one another")
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(o.dir, link); err != nil {
		t.Fatal(err)
	}
	refused("a storage inside the original through a link", filepath.Join(link, "x", "y"), []string{o.dir}, "must not contain one another")
	refused("an original inside the storage", filepath.Dir(o.dir), []string{o.dir}, "must not contain one another")
	if treeHash(t, o.dir) != before {
		t.Fatal("a refused import changed the original")
	}

	if code, out, errOut := run(t, base, "import-original", o.dir); code != 0 {
		t.Fatalf("import: %s %s", out, errOut)
	}
	refused("a fileshed storage as the original", t.TempDir(), []string{base}, "is a fileshed storage directory")
	refused("a storage that holds data", base, []string{o.dir}, "--force")
	s := serveHeaders(t, config(t, base))
	refused("a storage a server runs on", base, []string{o.dir, "--force"}, "server is running")
	s.close()

	// --force replaces the storage's zones and state: a user only the storage had is gone.
	if err := os.MkdirAll(filepath.Join(base, "users", "zed", "Storage", "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := run(t, base, "import-original", o.dir, "--force"); code != 0 {
		t.Fatalf("import --force: %s %s", out, errOut)
	}
	if _, err := os.Stat(filepath.Join(base, "users", "zed")); err == nil {
		t.Fatal("--force kept a user the original does not have")
	}

	// All or nothing: an import that fails after copying the zones leaves the storage empty.
	o.write("elsewhere.sqlite", "")
	if err := os.Symlink("elsewhere.sqlite", filepath.Join(o.dir, "access_auth.sqlite")); err != nil {
		t.Fatal(err)
	}
	before = treeHash(t, o.dir)
	fresh := filepath.Join(t.TempDir(), "fresh")
	refused("an access_auth.sqlite that is a symlink", fresh, []string{o.dir}, "nothing was changed")
	if entries, _ := os.ReadDir(filepath.Join(fresh, "users")); len(entries) > 0 {
		t.Fatalf("a failed import left users behind: %v", entries)
	}
	if _, err := os.Lstat(fresh); err == nil { // issue 33: it said "nothing was changed"
		t.Errorf("a failed import left the storage folder it made (and its lock file) behind")
	}
	if treeHash(t, o.dir) != before {
		t.Fatal("a failed import changed the original")
	}
	if err := os.Remove(filepath.Join(o.dir, "access_auth.sqlite")); err != nil {
		t.Fatal(err)
	}
	o.write("access_auth.sqlite", "not a database, but 512 bytes of it"+strings.Repeat(".", 480))
	refused("an access_auth.sqlite that is not a database", fresh, []string{o.dir}, "access_auth.sqlite: file is not a database")
}

// TestImportOriginalUnreadableHistory: a repository that cannot be read in full (a broken
// branch ref, a .git that is a file pointing elsewhere, a HEAD naming a path out of the git
// directory, a commit missing from the history, and (issue 33) an older blob missing,
// which used to import with exit 0 and fail later in shed_version) stops the import, every
// one named; with --allow-damaged-history the files are imported and committed as one
// version, and the report says the history was not and what was missing.
func TestImportOriginalUnreadableHistory(t *testing.T) {
	t.Parallel()
	o := original{t: t, dir: filepath.Join(t.TempDir(), "user_files")}
	broken := "users/" + alice + "/Documents/data"
	o.initRepo(broken, "storage@openwebui.local", true)
	o.write(broken+"/a.md", "a\n")
	o.commit(broken, "", "Patch a.md: end")
	o.write(broken+"/.git/refs/heads/master", "not a commit id\n")
	gitfile := "users/" + bob + "/Documents/data"
	o.write(gitfile+"/b.md", "b\n")
	o.write(gitfile+"/.git", "gitdir: /etc\n")
	climbing := "users/" + carol + "/Documents/data"
	o.initRepo(climbing, "storage@openwebui.local", true)
	o.write(climbing+"/c.md", "c\n")
	o.commit(climbing, "", "Patch c.md: end")
	o.write(climbing+"/.git/HEAD", "ref: refs/heads/../../../../../../etc/passwd\n")
	const dave = "0b0e8a42-5d1c-4c8e-9a57-1f00000000da"
	missing := "users/" + dave + "/Documents/data"
	o.initRepo(missing, "storage@openwebui.local", true)
	o.write(missing+"/d.md", "1\n")
	o.commit(missing, "", "Patch d.md: end")
	first := o.git(missing, "rev-parse", "HEAD")
	o.write(missing+"/d.md", "2\n")
	o.commit(missing, "", "Patch d.md: end")
	if err := os.Remove(filepath.Join(o.dir, missing, ".git/objects", first[:2], first[2:])); err != nil {
		t.Fatal(err) // the first commit is gone: HEAD reads, its history does not
	}
	const eve = "0b0e8a42-5d1c-4c8e-9a57-1f00000000ee"
	oldBlob := "users/" + eve + "/Documents/data"
	o.initRepo(oldBlob, "storage@openwebui.local", true)
	o.write(oldBlob+"/e.md", "one\n")
	o.commit(oldBlob, "", "Patch e.md: end")
	blob := o.git(oldBlob, "rev-parse", "HEAD:e.md")
	firstE := o.git(oldBlob, "rev-parse", "HEAD")
	o.write(oldBlob+"/e.md", "two\n")
	o.commit(oldBlob, "", "Patch e.md: end")
	if err := os.Remove(filepath.Join(o.dir, oldBlob, ".git/objects", blob[:2], blob[2:])); err != nil {
		t.Fatal(err) // HEAD, its tree and every commit read; shed_version restore of the first would not
	}
	// Issue 32 #12: references naming paths outside the git directory were copied as is.
	const frank, gina = "0b0e8a42-5d1c-4c8e-9a57-1f00000000f0", "0b0e8a42-5d1c-4c8e-9a57-1f00000000f1"
	looseOut, packedOut := "users/"+frank+"/Documents/data", "users/"+gina+"/Documents/data"
	for _, d := range []string{looseOut, packedOut} {
		o.initRepo(d, "storage@openwebui.local", true)
		o.write(d+"/f.md", "f\n")
		o.commit(d, "", "Patch f.md: end")
	}
	o.write(looseOut+"/.git/refs/heads/evil", "ref: refs/../../../../etc/passwd\n")
	o.write(packedOut+"/.git/packed-refs", "# pack-refs with: peeled\n"+o.git(packedOut, "rev-parse", "HEAD")+" /etc/passwd\n")
	base := filepath.Join(t.TempDir(), "storage")
	code, out, errOut := run(t, base, "import-original", o.dir)
	if code != 1 || !strings.Contains(errOut, "7 repositor(ies) of the original cannot be imported with their history") ||
		!strings.Contains(errOut, looseOut+`/.git: refs/heads/evil names "ref: refs/../../../../etc/passwd", not a commit or a reference inside the git directory`) ||
		!strings.Contains(errOut, packedOut+`/.git: packed-refs line 2 names`) ||
		!strings.Contains(errOut, oldBlob+"/.git: repository corrupted: blob "+blob+" (e.md in commit "+firstE+")") ||
		!strings.Contains(errOut, "--allow-damaged-history") {
		t.Fatalf("damaged histories: want a refusal naming them, got %d %q %q", code, out, errOut)
	}
	if _, err := os.Lstat(base); err == nil {
		t.Fatal("the refused import left the storage folder behind")
	}
	code, out, errOut = run(t, base, "import-original", o.dir, "--allow-damaged-history")
	if code != 0 {
		t.Fatalf("import: %s %s", out, errOut)
	}
	for _, want := range []string{broken + "/.git: history not imported", gitfile + "/.git: history not imported: .git is not a folder",
		climbing + `/.git: history not imported: HEAD names "ref: refs/heads/../../../../../../etc/passwd", not a branch`,
		missing + "/.git: history not imported: repository corrupted: commit " + first,
		oldBlob + "/.git: history not imported: repository corrupted: blob " + blob + " (e.md in commit " + firstE + ")",
		"every earlier version of these files is lost",
		"Documents 1 commit(s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	s := serveHeaders(t, config(t, base))
	for user, p := range map[string]string{alice: "a.md", bob: "b.md", carol: "c.md", dave: "d.md", eve: "e.md", frank: "f.md", gina: "f.md"} {
		h := s.ok(t, user, "", "shed_history", map[string]any{"zone": "documents", "path": p})
		if h["count"] != float64(1) {
			t.Errorf("%s's %s: want the one import commit, got %v", user, p, h)
		}
	}
	if _, err := os.Lstat(filepath.Join(base, "users", bob, "Documents", "data", ".git")); err == nil {
		t.Error("the .git file was copied into the zone")
	}
}
