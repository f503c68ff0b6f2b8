package core

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/store"
)

// recoveryHead is the group team's history before each case: the file, its owner and mode
// ("" = no record), its content.
var recoveryHead = []struct{ path, owner, mode, content string }{
	{"alice_ro.md", "alice", "owner_ro", "alice ro\n"},
	{"alice_own.md", "alice", "owner", "alice own\n"},
	{"open.md", "alice", "group", "open\n"},
	{"docs/alice.md", "alice", "owner", "alice doc\n"},
	{"alice.db", "alice", "owner", "SQLite format 3\x00"},
	{"carol_locked.md", "", "", "carol locked\n"},
	{"bob_locked.md", "", "", "bob locked\n"},
	{"old_locked.md", "", "", "old locked\n"},
}

// deadCommand is a command killed in the space: who ran it, on which replica.
type deadCommand struct{ user, replica string }

// TestRecoveryAppliesTheGuardsOfDeadCommands: the recovery of a group space given the records
// of commands that died there. What the caller was not allowed to change is put back from
// HEAD (modified, deleted, replaced by a link, hard-linked, reached through a folder replaced
// by a link), a journal beside a protected database and the protected names the command made
// are removed (not those that pre-date it), and what remains is committed as the caller's
// under the command's name; without a record of a dead command, as before: all of it under
// the fileshed author.
func TestRecoveryAppliesTheGuardsOfDeadCommands(t *testing.T) {
	t.Parallel()
	self := confine.Replica()
	// outside is a file out of every zone, where a link a command planted points: the
	// recovery must replace the link, never write through it.
	outside := filepath.Join(t.TempDir(), "alice.md")
	must(t, os.WriteFile(outside, []byte("outside\n"), 0o600))
	cases := []struct {
		name     string
		commands []deadCommand // oldest first; the group is "other" for the user "other:bob"
		change   func(t *testing.T, z *Zone, data string)
		want     map[string]string // path -> content after the recovery, "" = absent
		kept     int               // command records left (not the space's dead ones)
	}{
		{name: "bob rewrites alice's owner_ro file", commands: []deadCommand{{"bob", self}},
			change: write("alice_ro.md", "bob\n"), want: map[string]string{"alice_ro.md": "alice ro\n"}},
		{name: "alice rewrites her owner_ro file", commands: []deadCommand{{"alice", self}},
			change: write("alice_ro.md", "alice v2\n"), want: map[string]string{"alice_ro.md": "alice ro\n"}},
		{name: "bob deletes alice's owner file", commands: []deadCommand{{"bob", self}},
			change: remove("alice_own.md"), want: map[string]string{"alice_own.md": "alice own\n"}},
		{name: "alice rewrites her owner file", commands: []deadCommand{{"alice", self}},
			change: write("alice_own.md", "alice v2\n"), want: map[string]string{"alice_own.md": "alice v2\n"}},
		{name: "bob rewrites a group file", commands: []deadCommand{{"bob", self}},
			change: write("open.md", "bob\n"), want: map[string]string{"open.md": "bob\n"}},
		{name: "bob replaces alice's file by a link", commands: []deadCommand{{"bob", self}},
			change: func(t *testing.T, z *Zone, data string) {
				remove("alice_own.md")(t, z, data)
				must(t, os.Symlink("open.md", filepath.Join(data, "alice_own.md")))
			}, want: map[string]string{"alice_own.md": "alice own\n"}},
		{name: "bob replaces alice's file by a link out of the zone", commands: []deadCommand{{"bob", self}},
			change: func(t *testing.T, z *Zone, data string) {
				remove("alice_own.md")(t, z, data)
				must(t, os.Symlink(outside, filepath.Join(data, "alice_own.md")))
			}, want: map[string]string{"alice_own.md": "alice own\n"}},
		{name: "bob replaces alice's folder by a link out of the zone", commands: []deadCommand{{"bob", self}},
			change: func(t *testing.T, z *Zone, data string) {
				remove("docs")(t, z, data)
				must(t, os.Symlink(filepath.Dir(outside), filepath.Join(data, "docs")))
			}, want: map[string]string{"docs/alice.md": "alice doc\n"}},
		{name: "bob hard-links alice's file", commands: []deadCommand{{"bob", self}},
			change: func(t *testing.T, z *Zone, data string) {
				must(t, os.Link(filepath.Join(data, "alice_own.md"), filepath.Join(data, "hl")))
			}, want: map[string]string{"alice_own.md": "alice own\n", "hl": "alice own\n"}},
		{name: "bob replaces alice's folder by a link", commands: []deadCommand{{"bob", self}},
			change: func(t *testing.T, z *Zone, data string) {
				must(t, os.Rename(filepath.Join(data, "docs"), filepath.Join(data, "moved")))
				write("moved/alice.md", "bob\n")(t, z, data)
				must(t, os.Symlink("moved", filepath.Join(data, "docs")))
			}, want: map[string]string{"docs/alice.md": "alice doc\n", "moved/alice.md": "bob\n"}},
		{name: "bob writes a journal beside alice's database", commands: []deadCommand{{"bob", self}},
			change: write("alice.db-journal", "hot\n"), want: map[string]string{"alice.db-journal": "", "alice.db": "SQLite format 3\x00"}},
		{name: "bob rewrites the file carol locked", commands: []deadCommand{{"bob", self}},
			change: write("carol_locked.md", "bob\n"), want: map[string]string{"carol_locked.md": "carol locked\n"}},
		{name: "bob rewrites the file his conversation locked", commands: []deadCommand{{"bob", self}},
			change: write("bob_locked.md", "bob v2\n"), want: map[string]string{"bob_locked.md": "bob v2\n"}},
		{name: "bob rewrites a file whose lock expired", commands: []deadCommand{{"bob", self}},
			change: write("old_locked.md", "bob\n"), want: map[string]string{"old_locked.md": "bob\n"}},
		{name: "bob plants .git and a link to one", commands: []deadCommand{{"bob", self}},
			change: func(t *testing.T, z *Zone, data string) {
				write(".git/config", "[core]\n\tfsmonitor = x\n")(t, z, data)
				write("sub/.GIT/hooks/post-checkout", "x\n")(t, z, data)
				must(t, os.Symlink("legacy/.git", filepath.Join(data, "lnk")))
				write("bob.md", "bob\n")(t, z, data)
			}, want: map[string]string{".git/config": "", "sub/.GIT/hooks/post-checkout": "", "lnk": "",
				"legacy/.git/config": "legacy\n", "bob.md": "bob\n"}},
		{name: "a temporary name the killed write left", commands: []deadCommand{{"bob", self}},
			change: write(confine.TempName(), "half\n"), want: map[string]string{"open.md": "open\n"}},
		{name: "two dead commands: the guards of both, the last one's commit", commands: []deadCommand{{"bob", self}, {"carol", self}},
			change: func(t *testing.T, z *Zone, data string) {
				write("alice_ro.md", "bob\n")(t, z, data)
				write("carol_locked.md", "bob\n")(t, z, data) // carol's own lock: not bob's
				write("carol.md", "carol\n")(t, z, data)
			}, want: map[string]string{"alice_ro.md": "alice ro\n", "carol_locked.md": "carol locked\n", "carol.md": "carol\n"}},
		{name: "no command: everything under the fileshed author", commands: nil,
			change: write("alice_ro.md", "bob\n"), want: map[string]string{"alice_ro.md": "bob\n"}},
		{name: "a live replica's command is not applied", commands: []deadCommand{{"bob", "LIVEREPLICA00000"}},
			change: write("alice_ro.md", "bob\n"), want: map[string]string{"alice_ro.md": "bob\n"}, kept: 1},
		{name: "another group's command is not applied here", commands: []deadCommand{{"other:bob", self}},
			change: write("alice_ro.md", "bob\n"), want: map[string]string{"alice_ro.md": "bob\n"}, kept: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, z, data := recoveryFixture(t)
			ctx := context.Background()
			before, err := TakeSnapshot(data)
			must(t, err)
			for _, dc := range tc.commands {
				cz, user := z, dc.user
				if g, ok := strings.CutPrefix(user, "other:"); ok {
					user, cz = g, &Zone{Kind: GroupZone, Owner: store.Owner{Kind: "group", ID: "other"}, GroupID: "other", Versioned: true}
				}
				must(t, s.db.StartCommand(ctx, store.Command{ID: user + dc.replica, Replica: dc.replica, Owner: cz.Owner,
					UserID: user, ConvID: "c-" + user, Message: "shed_exec: tar -xf " + user + ".tar",
					Protected: protectedTops(z, before), Started: time.Now()}))
			}
			tc.change(t, z, data)
			write("note.md", tc.name)(t, z, data) // what every command may write
			must(t, s.recoverOwner(ctx, z.Owner, func(c store.Command) bool { return c.Replica == self }))
			for p, want := range tc.want {
				got, err := os.ReadFile(filepath.Join(data, p))
				if want == "" {
					if _, lerr := os.Lstat(filepath.Join(data, p)); lerr == nil {
						t.Errorf("%s is still there", p)
					}
					continue
				}
				if err != nil || string(got) != want {
					t.Errorf("%s = %q, %v; want %q", p, got, err, want)
				}
				if fi, err := os.Lstat(filepath.Join(data, p)); err != nil || !fi.Mode().IsRegular() || fi.Sys().(*syscall.Stat_t).Nlink != 1 {
					t.Errorf("%s is no regular file of one link: %v", p, err)
				}
			}
			if b, err := os.ReadFile(outside); err != nil || string(b) != "outside\n" {
				t.Errorf("the file out of the zone: %q, %v", b, err)
			}
			if fi, err := os.Lstat(filepath.Join(data, "docs")); err != nil || !fi.IsDir() {
				t.Errorf("docs is not a folder: %v", err)
			}
			if n := tempNames(t, data); n != 0 {
				t.Errorf("%d temporary names left", n)
			}
			author := "fileshed"
			if len(tc.commands) > 0 && tc.kept == 0 {
				author = tc.commands[len(tc.commands)-1].user
			}
			checkCommitted(t, s, z, author)
			left, err := s.db.Commands(ctx, store.Owner{})
			if err != nil || len(left) != tc.kept {
				t.Errorf("records left: %+v, %v; want %d", left, err, tc.kept)
			}
		})
	}
}

// recoveryFixture is a service with the group team's space committed as recoveryHead says,
// its records, carol's lock (conversation c-carol), bob's own (c-bob), an expired lock, and
// a .git folder that pre-dates the rule (legacy/.git, never committed).
func recoveryFixture(t *testing.T) (*Service, *Zone, string) {
	s, base := testService(t, nil)
	ctx := context.Background()
	space := filepath.Join(base, "groups", "team")
	data := filepath.Join(space, "data")
	must(t, os.MkdirAll(data, 0o700))
	fs, err := confine.New(data)
	must(t, err)
	z := &Zone{Kind: GroupZone, Name: "Group:team", Label: "group", Versioned: true, Owner: store.Owner{Kind: "group", ID: "team"},
		GroupID: "team", Space: space, fs: fs}
	t.Cleanup(func() { z.Close() })
	for _, f := range recoveryHead {
		write(f.path, f.content)(t, z, data)
		if f.owner != "" {
			must(t, s.db.SetOwnership(ctx, store.Ownership{GroupID: "team", Path: f.path, Owner: f.owner, Mode: f.mode}))
		}
	}
	write("legacy/.git/config", "legacy\n")(t, z, data)
	for _, l := range []store.Lock{{ZoneKey: "group:team", Path: "carol_locked.md", UserID: "carol", ConvID: "c-carol"},
		{ZoneKey: "group:team", Path: "bob_locked.md", UserID: "bob", ConvID: "c-bob"},
		{ZoneKey: "group:team", Path: "old_locked.md", UserID: "carol", ConvID: "c-carol", Since: time.Now().Add(-s.LockMaxAge() - time.Hour)}} {
		_, err := s.db.AcquireLock(ctx, l, s.LockMaxAge())
		must(t, err)
	}
	r, err := s.Repo(z)
	must(t, err)
	defer r.Release()
	l, _, unlock, err := s.LockRepo(ctx, r, z)
	must(t, err)
	defer unlock()
	_, err = s.Commit(l, Caller{UserID: "alice"}, z, "test", "the group before the command", Change{All: true})
	must(t, err)
	return s, z, data
}

// checkCommitted fails unless HEAD is the author's and holds the zone as it is on disk.
func checkCommitted(t *testing.T, s *Service, z *Zone, author string) {
	t.Helper()
	r, err := s.Repo(z)
	must(t, err)
	defer r.Release()
	log, err := r.Log("", 1)
	if err != nil || len(log) != 1 {
		t.Fatalf("log: %v, %v", log, err)
	}
	if log[0].Author != author {
		t.Errorf("HEAD by %q (%s), want %q", log[0].Author, log[0].Message, author)
	}
	want := recoveryMessage
	if author != "fileshed" {
		want = "shed_exec: tar -xf " + author + ".tar" + recoveredSuffix
	}
	if !strings.HasPrefix(log[0].Message, want) {
		t.Errorf("HEAD's message %q, want %q", log[0].Message, want)
	}
	snap, err := TakeSnapshot(z.fs.Dir())
	must(t, err)
	for rel, e := range snap.Entries {
		if e.Dir || ProtectedReason(z, rel) != "" || strings.HasPrefix(rel, "legacy/.git") {
			continue
		}
		want, err := r.FileAt("HEAD", rel)
		got, _ := os.ReadFile(filepath.Join(z.fs.Dir(), rel))
		if e.Link != "" {
			got = []byte(e.Link)
		}
		if err != nil || string(got) != string(want) {
			t.Errorf("%s on disk %q, in HEAD %q (%v)", rel, got, want, err)
		}
	}
}

// write is a change writing content to rel (its folders made).
func write(rel, content string) func(*testing.T, *Zone, string) {
	return func(t *testing.T, _ *Zone, data string) {
		p := filepath.Join(data, rel)
		must(t, os.MkdirAll(filepath.Dir(p), 0o700))
		must(t, os.WriteFile(p, []byte(content), 0o600))
	}
}

// remove is a change removing rel.
func remove(rel string) func(*testing.T, *Zone, string) {
	return func(t *testing.T, _ *Zone, data string) { must(t, os.RemoveAll(filepath.Join(data, rel))) }
}

// tempNames counts fileshed's temporary names under dir.
func tempNames(t *testing.T, dir string) int {
	n := 0
	must(t, filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err == nil && confine.IsTempName(filepath.Base(p)) {
			n++
		}
		return err
	}))
	return n
}

// must fails the test on err.
func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
