package admin_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/internal/testtool"
)

// groupOriginal is an original with one group whose files alice and bob own.
func groupOriginal(t *testing.T) original {
	o := original{t: t, dir: filepath.Join(t.TempDir(), "user_files")}
	g := "groups/" + team + "/data"
	o.initRepo(g, "storage@openwebui", false)
	o.write(g+"/a.md", "alice's\n")
	o.write(g+"/c.md", "bob's\n")
	o.commit(g, alice, "Add file to group\n\nwith a body")
	return o
}

// TestImportOriginalOwnershipDatabaseRefusals (issue 33, issue 32 #12): a missing
// access_auth.sqlite, one without a file_ownership table, or with a view under that name,
// used to import with exit 0 and no owner at all — every group file writable by every
// member, said on the report's last line at most. Each is refused now, with the flag that
// accepts it; with --no-ownership the import goes through and says so.
func TestImportOriginalOwnershipDatabaseRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, schema, want string
	}{
		{"missing", "", "no access_auth.sqlite: the group files' owners cannot be imported"},
		{"no table", `CREATE TABLE other (x)`, "no file_ownership table"},
		{"a view", `CREATE TABLE real_rows (group_id, file_path, owner_id, write_access, created_at);
			CREATE VIEW file_ownership AS SELECT * FROM real_rows`, "file_ownership is a view"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := groupOriginal(t)
			if tc.schema != "" {
				db, err := sql.Open("sqlite", filepath.Join(o.dir, "access_auth.sqlite"))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := db.Exec(tc.schema); err != nil {
					t.Fatal(err)
				}
				db.Close()
			}
			base := filepath.Join(t.TempDir(), "storage")
			code, out, errOut := run(t, base, "import-original", o.dir)
			if code != 1 || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "--no-ownership") {
				t.Fatalf("want a refusal naming %q and --no-ownership, got %d %q %q", tc.want, code, out, errOut)
			}
			code, out, errOut = run(t, base, "import-original", o.dir, "--no-ownership")
			if code != 0 || !strings.Contains(out, "--no-ownership: access_auth.sqlite not read: the group files have no owner") {
				t.Fatalf("--no-ownership: %d %q %q", code, out, errOut)
			}
		})
	}
}

// TestImportOriginalOwnersBecomeMembers (issue 33): the owners of imported records are
// recorded as members of their groups, so a file can be given to one before they make a
// call, and shed_group info lists them; the import leaves one audit entry with its counts;
// the report gives sizes for people; an imported commit's message has no trailing newline.
func TestImportOriginalOwnersBecomeMembers(t *testing.T) {
	t.Parallel()
	o := groupOriginal(t)
	o.ownershipDB([][4]string{{team, "a.md", alice, "owner"}, {team, "c.md", bob, "owner"}})
	base := filepath.Join(t.TempDir(), "storage")
	code, out, errOut := run(t, base, "import-original", o.dir)
	if code != 0 {
		t.Fatalf("import: %s %s", out, errOut)
	}
	// The usage counts the files and the history (the quota's unit since issue 32 item 8).
	used := 14 + testtool.RegularSize(t, filepath.Join(base, "groups", team, "repo.git", "objects"))
	for _, want := range []string{"group 2 file(s), 14 B", "2 ownership record(s), 2 member(s) recorded", "usage " + core.HumanSize(used) + " of ", "(14 B) from"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	code, audit, _ := run(t, base, "audit", "export")
	if code != 0 || strings.Count(audit, "admin_import_original") != 1 ||
		!strings.Contains(audit, "OK users=0 groups=1 files=2 bytes=14 ownership=2 members=2") {
		t.Fatalf("the audit trail does not hold the import once with its counts:\n%s", audit)
	}
	s := serveHeaders(t, config(t, base))
	// Only alice calls: bob has made no request to this server.
	info := s.ok(t, alice, "", "shed_group", map[string]any{"action": "info", "group": team})
	if members := fmt.Sprint(info["members"]); !strings.Contains(members, bob) {
		t.Errorf("group info does not list the imported owner bob: %v", info)
	}
	s.ok(t, alice, "", "shed_group", map[string]any{"action": "chown", "group": team, "path": "a.md", "new_owner": bob})
	h := s.ok(t, alice, "", "shed_version", map[string]any{"action": "history", "zone": "group", "group": team})
	entries, _ := h["entries"].([]any)
	for _, e := range entries {
		if m := e.(map[string]any)["message"].(string); strings.HasSuffix(m, "\n") {
			t.Errorf("an imported message keeps its trailing newline: %q", m)
		}
	}
}
