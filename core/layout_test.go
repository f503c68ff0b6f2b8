package core

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/fileshed/fileshed/core/store"
)

// TestLayoutIsTheStorageTree: every folder and file of the storage directory as the layout
// answers it (DESIGN §4), relative to the storage directory.
func TestLayoutIsTheStorageTree(t *testing.T) {
	t.Parallel()
	l := LayoutOf("/srv/shed")
	alice, team := store.Owner{Kind: "user", ID: "alice"}, store.Owner{Kind: "group", ID: "team"}
	for _, c := range []struct{ got, want string }{
		{l.StateFile(), "fileshed.sqlite"},
		{l.StorageLock(), "fileshed.lock"},
		{l.RunningMarker(), ".fileshed-running"},
		{l.Clock(), ".fileshed-clock"},
		{l.StateRecord(), ".fileshed-state"},
		{l.ImportSwap(), ".import-original/swapping"},
		{l.ImportStaging(), ".import-original"},
		{l.LinksKey(), "links.key"},
		{l.Plain(), ".plain"},
		{l.Owners("user"), "users"},
		{l.Owners("group"), "groups"},
		{l.User("alice"), "users/alice"},
		{l.Uploads("alice"), "users/alice/Uploads"},
		{l.UploadsOf("alice", "c1"), "users/alice/Uploads/c1"},
		{l.StorageSpace("alice"), "users/alice/Storage"},
		{l.DocumentsSpace("alice"), "users/alice/Documents"},
		{l.GroupSpace("team"), "groups/team"},
		{l.VersionedSpace(alice), "users/alice/Documents"},
		{l.VersionedSpace(team), "groups/team"},
		{l.ZoneRoot(alice, Uploads), "users/alice/Uploads"},
		{l.ZoneRoot(alice, Storage), "users/alice/Storage/data"},
		{l.ZoneRoot(alice, Documents), "users/alice/Documents/data"},
		{l.ZoneRoot(team, GroupZone), "groups/team/data"},
		{RepoDir(l.GroupSpace("team")), "groups/team/repo.git"},
		{EditzonesDir(l.StorageSpace("alice")), "users/alice/Storage/editzone"},
		{EditzoneDir(l.DocumentsSpace("alice"), "c1"), "users/alice/Documents/editzone/c1"},
	} {
		rel, err := filepath.Rel(l.Base(), c.got)
		if err != nil || filepath.ToSlash(rel) != c.want {
			t.Errorf("%s: want %s below the storage directory", c.got, c.want)
		}
	}
	if got := l.StateFiles(); len(got) != 3 || got[1] != l.StateFile()+"-wal" || got[2] != l.StateFile()+"-shm" {
		t.Errorf("StateFiles: %v", got)
	}
}

// TestZonesAreWhereTheLayoutSays: the zone a tool resolves is the layout's folder (one
// place decides), and the ids that reach the layout are single safe segments: a hostile
// user, group or conversation id never names another folder.
func TestZonesAreWhereTheLayoutSays(t *testing.T) {
	t.Parallel()
	s, base := testService(t, nil)
	l, ctx := s.Layout(), context.Background()
	if l.Base() != base {
		t.Fatalf("layout base %s, want %s", l.Base(), base)
	}
	c, err := NewCaller("alice", "", "", "", "c1", []string{"team"}, "")
	if err != nil {
		t.Fatal(err)
	}
	alice, team := store.Owner{Kind: "user", ID: "alice"}, store.Owner{Kind: "group", ID: "team"}
	for _, tc := range []struct {
		zone, group, dir, space string
	}{
		{"uploads", "", l.UploadsOf("alice", "c1"), l.Uploads("alice")},
		{"storage", "", l.ZoneRoot(alice, Storage), l.StorageSpace("alice")},
		{"documents", "", l.ZoneRoot(alice, Documents), l.DocumentsSpace("alice")},
		{"group", "team", l.ZoneRoot(team, GroupZone), l.GroupSpace("team")},
	} {
		z, err := s.ResolveZone(ctx, c, tc.zone, tc.group, false)
		if err != nil {
			t.Fatalf("%s: %v", tc.zone, err)
		}
		if z.fs.Dir() != tc.dir || z.Space != tc.space {
			t.Errorf("%s: zone at %s in %s, the layout says %s in %s", tc.zone, z.fs.Dir(), z.Space, tc.dir, tc.space)
		}
		z.Close()
	}
	for _, id := range []string{"..", "../bob", "a/b", "", "/abs", ".", "x\x00y"} {
		if ValidID(id) {
			t.Errorf("ValidID(%q): a hostile id would reach the layout", id)
		}
		if _, err := NewCaller(id, "", "", "", "", nil, ""); err == nil {
			t.Errorf("NewCaller(%q) accepted", id)
		}
		if conv := SanitizeConvID(id); !ValidID(conv) {
			t.Errorf("SanitizeConvID(%q) = %q, not one safe segment", id, conv)
		}
	}
	if _, err := s.ResolveZone(ctx, c, "group", "../users/bob", false); err == nil {
		t.Error("a group id with a path was resolved")
	}
}
