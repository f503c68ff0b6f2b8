package admin_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportOriginalNamesTheToolsCanReach (issue 33): names in decomposed Unicode (NFD, as
// macOS zips make them), with control characters or invalid bytes used to be copied as they
// were: shed_tree listed them, but the tools (which make every name NFC and refuse control
// characters) could neither read nor delete them; in a group such a file's owner_ro record
// was dropped as "no such file" and another member could create a look-alike beside it.
// The import renames them to the name the tools reach (NFC, '_' for control characters and
// invalid bytes), the record and a link's target follow, and the report says so.
func TestImportOriginalNamesTheToolsCanReach(t *testing.T) {
	t.Parallel()
	const (
		nfd = "cafe\u0301.txt" // é as e + combining acute
		nfc = "caf\u00e9.txt"
	)
	o := original{t: t, dir: filepath.Join(t.TempDir(), "user_files")}
	st := "users/" + alice + "/Storage/data/"
	o.write(st+nfd, "decomposed\n")
	o.write(st+"bell\x07.txt", "control\n")
	o.write(st+"bad\xff.txt", "invalid byte\n")
	o.write(st+"re\u0301sume\u0301/cv.md", "in a decomposed folder\n")
	o.write(st+"dup/"+nfc, "composed, kept\n")
	o.write(st+"dup/"+nfd, "decomposed twin, left out\n")
	if err := os.Symlink(nfd, filepath.Join(o.dir, st+"lnk")); err != nil {
		t.Fatal(err)
	}
	docs := "users/" + alice + "/Documents/data"
	o.initRepo(docs, "storage@openwebui.local", true)
	o.write(docs+"/"+nfd, "v1\n")
	o.commit(docs, "", "Patch: end")
	g := "groups/" + team + "/data"
	o.write(g+"/"+nfd, "alice's, read-only\n")
	o.write(g+"/ring\x07.md", "alice's\n")
	o.ownershipDB([][4]string{{team, nfd, alice, "owner_ro"}, {team, "ring\x07.md", alice, "owner"}})
	base := filepath.Join(t.TempDir(), "storage")
	code, out, errOut := run(t, base, "import-original", o.dir)
	if code != 0 {
		t.Fatalf("import: %s %s", out, errOut)
	}
	for _, want := range []string{
		`Storage/data: 4 name(s) renamed to what the tools can reach (NFC, control characters and invalid bytes replaced by '_'):`,
		`"bell\a.txt" -> "bell_.txt"`, `"bad\xff.txt" -> "bad_.txt"`, `"cafe\u0301.txt" -> "caf\u00e9.txt"`,
		`"re\u0301sume\u0301" -> "r\u00e9sum\u00e9"`, `data: 2 name(s) renamed`, `"ring\a.md" -> "ring_.md"`,
		`("cafe\u0301.txt"): its name as the tools can reach it, "caf\u00e9.txt", is taken in its folder: not imported`,
		"2 ownership record(s)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "dropped") {
		t.Errorf("an ownership record was dropped:\n%s", out)
	}
	s := serveHeaders(t, config(t, base))
	for p, want := range map[string]string{nfc: "decomposed\n", "bell_.txt": "control\n", "bad_.txt": "invalid byte\n",
		"r\u00e9sum\u00e9/cv.md": "in a decomposed folder\n", "dup/" + nfc: "composed, kept\n", "lnk": "decomposed\n"} {
		if d := s.ok(t, alice, "", "shed_read", map[string]any{"zone": "storage", "path": p}); d["content"] != want {
			t.Errorf("%s: %v", p, d)
		}
	}
	// The model may send either form: the tools make it NFC.
	s.ok(t, alice, "", "shed_delete", map[string]any{"zone": "storage", "path": nfd})
	if d := s.ok(t, alice, "", "shed_read", map[string]any{"zone": "documents", "path": nfc}); d["content"] != "v1\n" {
		t.Errorf("documents: %v", d)
	}
	s.ok(t, alice, "", "shed_delete", map[string]any{"zone": "documents", "path": nfc})

	grp := func(p string) map[string]any {
		return map[string]any{"zone": "group", "group": team, "path": p, "content": "bob's\n", "overwrite": true}
	}
	s.refused(t, bob, "shed_create_file", grp(nfd), "FILE_READ_ONLY") // the look-alike is the same name
	s.refused(t, bob, "shed_create_file", grp(nfc), "FILE_READ_ONLY")
	s.refused(t, bob, "shed_create_file", grp("ring_.md"), "FILE_OWNER_ONLY")
	tree := s.ok(t, bob, "", "shed_tree", map[string]any{"zone": "group", "group": team})
	if got := fmt.Sprint(tree); strings.Contains(got, "e\u0301") {
		t.Errorf("the group lists a decomposed name: %s", got)
	}
}

// TestImportOriginalHardLinks (issue 33): files of the original with several names used to
// be copied silently, though a name outside the zone means the content may be someone
// else's (a `ln` through the original's shed_exec). Names all in the zone: copied as
// separate files, reported; a name elsewhere: not imported, reported.
func TestImportOriginalHardLinks(t *testing.T) {
	t.Parallel()
	o := original{t: t, dir: filepath.Join(t.TempDir(), "user_files")}
	st := filepath.Join(o.dir, "users", alice, "Storage", "data")
	o.write("users/"+alice+"/Storage/data/a.txt", "twice\n")
	o.write("users/"+bob+"/Storage/data/bobs.txt", "bob's secret\n")
	if err := os.Link(filepath.Join(st, "a.txt"), filepath.Join(st, "b.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(o.dir, "users", bob, "Storage/data/bobs.txt"), filepath.Join(st, "stolen.txt")); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(t.TempDir(), "storage")
	code, out, errOut := run(t, base, "import-original", o.dir)
	if code != 0 {
		t.Fatalf("import: %s %s", out, errOut)
	}
	for _, want := range []string{"Storage/data: hard links copied as separate files: a.txt = b.txt",
		"Storage/data: stolen.txt: a hard link to a file outside this zone (2 names, 1 here): not imported",
		"Storage 2 file(s), 12 B"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Lstat(filepath.Join(base, "users", alice, "Storage/data/stolen.txt")); err == nil {
		t.Error("a hard link to another user's file was imported")
	}
	if code, out, errOut := run(t, base, "verify"); code != 0 {
		t.Fatalf("verify: %s %s", out, errOut)
	}
}
