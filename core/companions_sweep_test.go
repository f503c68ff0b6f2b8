package core

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/store"
)

// sweepFixture is the group zone of team (versioned) with alice's database ledger.db in
// mode owner, committed; the caller is bob, a member who may only read it.
func sweepFixture(t *testing.T) (*Service, *Zone, string, Caller) {
	t.Helper()
	s, _ := testService(t, map[string]string{"FILESHED_GROUPS_STATIC": `{"team":["alice","bob","carol"]}`})
	ctx := context.Background()
	bob := Caller{UserID: "bob", ConvID: "c1"}
	z, err := s.ResolveZone(ctx, bob, "group", "team", true)
	must(t, err)
	t.Cleanup(z.Close)
	data := z.fs.Dir()
	put("ledger.db", SqliteMagic)(t, data)
	must(t, s.db.SetOwnership(ctx, store.Ownership{GroupID: "team", Path: "ledger.db", Owner: "alice", Mode: "owner"}))
	_, err = s.Mutate(ctx, bob, z, "test", "the ledger", func() (Change, error) { return Change{All: true}, nil })
	must(t, err)
	_, _, err = s.Reconcile(ctx, z.Owner)
	must(t, err)
	return s, z, data, bob
}

// TestSweepCompanionsAsAWrite: the kernel's sweep of a protected database's companions is
// a write like any other. A stray -wal and -journal are removed under the database's lock,
// the group's usage settled exactly (history included) and the removal committed; a folder named like a companion,
// holding carol's owner-mode file, is refused (NOT_A_FILE) and kept whole (it was removed
// with everything in it when the family swept by hand); a companion another conversation
// holds in a locked edit is FILE_LOCKED; a companion at a protected name (a database under
// .git, its record planted) is PROTECTED_PATH and stays.
func TestSweepCompanionsAsAWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("removed, credited, committed", func(t *testing.T) {
		s, z, data, bob := sweepFixture(t)
		put("ledger.db-wal", "forged log")(t, data)
		put("ledger.db-journal", "hot")(t, data)
		_, err := s.Mutate(ctx, bob, z, "test", "bob's strays", func() (Change, error) { return Change{All: true}, nil })
		must(t, err)
		_, _, err = s.Reconcile(ctx, z.Owner)
		must(t, err)
		before, err := s.db.Usage(ctx, z.Owner)
		must(t, err)
		unlock, err := s.HoldDatabase(ctx, bob, z, "ledger.db", "ledger.db")
		must(t, err)
		unlock()
		for _, p := range []string{"ledger.db-wal", "ledger.db-journal"} {
			if _, err := os.Lstat(filepath.Join(data, p)); err == nil {
				t.Errorf("%s is still there", p)
			}
		}
		after, err := s.db.Usage(ctx, z.Owner)
		must(t, err)
		measured, _, err := s.Reconcile(ctx, z.Owner)
		must(t, err)
		if d := Sub(before, after); d.Files != 2 || after != measured {
			t.Errorf("usage went from %+v to %+v, the disk holds %+v: the removal was not settled exactly", before, after, measured)
		}
		checkZone(t, s, z, data, cmdCase{want: map[string]string{"ledger.db": SqliteMagic, "ledger.db-wal": "", "ledger.db-journal": ""}})
	})
	t.Run("a folder is no companion", func(t *testing.T) {
		s, z, data, bob := sweepFixture(t)
		put("ledger.db-journal/carol.txt", "carol's")(t, data)
		must(t, s.db.SetOwnership(ctx, store.Ownership{GroupID: "team", Path: "ledger.db-journal/carol.txt", Owner: "carol", Mode: "owner"}))
		_, err := s.HoldDatabase(ctx, bob, z, "ledger.db", "ledger.db")
		wantCode(t, err, NotAFile)
		if b, err := os.ReadFile(filepath.Join(data, "ledger.db-journal", "carol.txt")); err != nil || string(b) != "carol's" {
			t.Fatalf("carol's file inside the folder is gone: %v", err)
		}
	})
	t.Run("locked by another conversation", func(t *testing.T) {
		s, z, data, bob := sweepFixture(t)
		put("ledger.db-wal", "log")(t, data)
		_, err := s.db.AcquireLock(ctx, store.Lock{ZoneKey: zoneKey(z), Path: "ledger.db-wal", UserID: "alice", ConvID: "editor", Since: time.Now()}, time.Hour)
		must(t, err)
		_, err = s.HoldDatabase(ctx, bob, z, "ledger.db", "ledger.db")
		wantCode(t, err, FileLocked)
		if _, err := os.Lstat(filepath.Join(data, "ledger.db-wal")); err != nil {
			t.Fatal("the locked companion was removed")
		}
	})
	t.Run("protected name", func(t *testing.T) {
		s, z, data, bob := sweepFixture(t)
		put(".git/x.db", SqliteMagic)(t, data)
		put(".git/x.db-wal", "log")(t, data)
		must(t, s.db.SetOwnership(ctx, store.Ownership{GroupID: "team", Path: ".git/x.db", Owner: "alice", Mode: "owner"}))
		_, err := s.HoldDatabase(ctx, bob, z, ".git/x.db", ".git/x.db")
		wantCode(t, err, ProtectedPath)
		if _, err := os.Lstat(filepath.Join(data, ".git", "x.db-wal")); err != nil {
			t.Fatal("the companion at a protected name was removed")
		}
	})
	t.Run("mode group: nothing to sweep", func(t *testing.T) {
		s, z, data, bob := sweepFixture(t)
		must(t, s.db.SetOwnership(ctx, store.Ownership{GroupID: "team", Path: "ledger.db", Owner: "alice", Mode: ModeGroup}))
		put("ledger.db-wal", "log")(t, data)
		unlock, err := s.HoldDatabase(ctx, bob, z, "ledger.db", "ledger.db")
		must(t, err)
		unlock()
		if _, err := os.Lstat(filepath.Join(data, "ledger.db-wal")); err != nil {
			t.Fatal("the -wal of a database open to every member was removed")
		}
	})
}
