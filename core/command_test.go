package core

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fileshed/fileshed/core/store"
)

// cmdCase is one command of TestCommandTx: what the program does to the zone's folder (nil:
// it never started), and what the command transaction must leave.
type cmdCase struct {
	name, zone string
	operands   []string
	run        func(t *testing.T, data string)
	killed     bool
	wantErr    Code
	reverted   []string
	want       map[string]string // path -> content after ("" = absent)
	records    map[string]string // path -> "owner:mode" after ("" = no record)
}

// TestCommandTx drives core.BeginCommand and Finish in each zone kind, with the program's
// changes made on disk as a program would: files locked by another conversation, other
// owners' files, protected names, the quota and the watchdog. Each versioned case runs twice:
// settled by Finish, and killed before it (the record left behind) then settled by the
// recovery, which must leave the zone as the live guards do (the same guard code).
func TestCommandTx(t *testing.T) {
	t.Parallel()
	cases := []cmdCase{
		{name: "a change is kept", zone: "storage", run: put("new.md", "new\n"),
			want: map[string]string{"new.md": "new\n", "notes.md": "v1\n"}},
		{name: "nothing started", zone: "documents", want: map[string]string{"notes.md": "v1\n"}},
		{name: "a locked operand is refused", zone: "storage", operands: []string{"locked.md"}, wantErr: FileLocked,
			want: map[string]string{"locked.md": "locked\n"}},
		{name: "a locked file changed is put back", zone: "storage", run: put("locked.md", "cmd\n"),
			reverted: []string{"locked.md"}, want: map[string]string{"locked.md": "locked\n"}},
		{name: "a locked file removed is put back", zone: "documents", run: gone("locked.md"),
			reverted: []string{"locked.md"}, want: map[string]string{"locked.md": "locked\n"}},
		{name: "a locked file replaced by a link is put back, its target untouched", zone: "documents",
			run: link("locked.md", "notes.md"), reverted: []string{"locked.md"},
			want: map[string]string{"locked.md": "locked\n", "notes.md": "v1\n"}},
		{name: "a locked file's folder replaced by a link out of the zone", zone: "documents",
			run: func(t *testing.T, data string) {
				must(t, os.RemoveAll(filepath.Join(data, "d")))
				must(t, os.Symlink(t.TempDir(), filepath.Join(data, "d")))
			}, reverted: []string{"d/locked.md"}, want: map[string]string{"d/locked.md": "deep\n"}},
		{name: "a .git made is removed", zone: "documents", run: put(".git/config", "[core]\n"),
			reverted: []string{".git"}, want: map[string]string{".git/config": "", "notes.md": "v1\n"}},
		{name: "another owner's file is put back", zone: "group", run: put("alice.md", "bob\n"),
			reverted: []string{"alice.md"}, want: map[string]string{"alice.md": "alice\n"},
			records: map[string]string{"alice.md": "alice:owner"}},
		{name: "another owner's database gets no journal", zone: "group", run: put("alice.db-journal", "hot\n"),
			reverted: []string{"alice.db-journal"}, want: map[string]string{"alice.db-journal": ""}},
		{name: "a group file may change", zone: "group", run: put("open.md", "bob\n"),
			want: map[string]string{"open.md": "bob\n"}},
		{name: "a new file is the caller's, a link is itself", zone: "group",
			run: func(t *testing.T, data string) {
				put("made.md", "made\n")(t, data)
				put("made.db-wal", "wal\n")(t, data)
				link("ln.md", "alice.md")(t, data)
			},
			records: map[string]string{"made.md": "bob:group", "made.db-wal": "", "ln.md": "bob:group", "alice.md": "alice:owner"}},
		{name: "over the quota: rolled back", zone: "documents", run: put("big.bin", strings.Repeat("x", 2<<20)),
			wantErr: QuotaExceeded, want: map[string]string{"big.bin": "", "notes.md": "v1\n"}},
		{name: "killed by the watchdog: rolled back", zone: "storage", killed: true, run: put("new.md", "new\n"),
			wantErr: QuotaExceeded, want: map[string]string{"new.md": ""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, z, data, bob := commandFixture(t, tc.zone)
			ctx := context.Background()
			cx, err := s.BeginCommand(ctx, bob, z, Command{Name: "prog", Message: "shed_exec: prog", Operands: tc.operands, Wait: time.Minute})
			if tc.wantErr == FileLocked {
				wantCode(t, err, FileLocked)
				checkZone(t, s, z, data, tc)
				return
			}
			must(t, err)
			if tc.run != nil {
				tc.run(t, data)
			}
			got, err := cx.Finish(tc.run != nil, tc.killed, Amount{})
			cx.Close()
			if tc.wantErr != "" {
				wantCode(t, err, tc.wantErr)
			} else {
				must(t, err)
			}
			var paths []string
			for _, r := range got {
				paths = append(paths, r.Path)
			}
			slices.Sort(paths)
			if !slices.Equal(paths, tc.reverted) {
				t.Errorf("reverted %v, want %v", paths, tc.reverted)
			}
			checkZone(t, s, z, data, tc)
			if cmds, _ := s.db.Commands(ctx, z.Owner); len(cmds) != 0 {
				t.Errorf("the command's record was not forgotten: %v", cmds)
			}
		})
		if tc.zone == "storage" || tc.run == nil || tc.wantErr != "" {
			continue // no recovery outside versioned zones; over the quota is the live measure's
		}
		t.Run(tc.name+", killed", func(t *testing.T) {
			s, z, data, bob := commandFixture(t, tc.zone)
			ctx := context.Background()
			cx, err := s.BeginCommand(ctx, bob, z, Command{Name: "prog", Message: "shed_exec: prog", Wait: time.Minute})
			must(t, err)
			tc.run(t, data)
			cx.Close() // killed before its settlement: the record stays
			must(t, s.recoverOwner(ctx, z.Owner, func(store.Command) bool { return true }))
			// The records of what the command created are the live settlement's only: its
			// record holds no snapshot of the names before it (the guards' records must hold).
			tc.records = maps.Clone(tc.records)
			delete(tc.records, "made.md")
			delete(tc.records, "ln.md")
			checkZone(t, s, z, data, tc)
		})
	}
}

// commandFixture is a zone of kind zone ("storage", "documents", "group") holding notes.md
// and locked.md (held in a locked edit by another conversation), d/locked.md likewise; in
// the group, alice's owner file alice.md, her database alice.db and open.md (mode group);
// committed in a versioned zone. The quota is 1 MB; the caller is bob.
func commandFixture(t *testing.T, zone string) (*Service, *Zone, string, Caller) {
	t.Helper()
	s, _ := testService(t, map[string]string{"FILESHED_GROUPS_STATIC": `{"team":["alice","bob"]}`,
		"FILESHED_QUOTA_PER_USER_MB": "1", "FILESHED_QUOTA_PER_GROUP_MB": "1"})
	ctx := context.Background()
	bob := Caller{UserID: "bob", ConvID: "cmd"}
	z, err := s.ResolveZone(ctx, bob, zone, map[string]string{"group": "team"}[zone], true)
	must(t, err)
	t.Cleanup(z.Close)
	data := z.fs.Dir()
	files := map[string]string{"notes.md": "v1\n", "locked.md": "locked\n", "d/locked.md": "deep\n"}
	if zone == "group" {
		files["alice.md"], files["alice.db"], files["open.md"] = "alice\n", "SQLite format 3\x00", "open\n"
		for p, mode := range map[string]string{"alice.md": "owner", "alice.db": "owner", "open.md": "group"} {
			must(t, s.db.SetOwnership(ctx, store.Ownership{GroupID: "team", Path: p, Owner: "alice", Mode: mode}))
		}
	}
	for p, content := range files {
		put(p, content)(t, data)
	}
	for _, p := range []string{"locked.md", "d/locked.md"} {
		_, err := s.db.AcquireLock(ctx, store.Lock{ZoneKey: zoneKey(z), Path: p, UserID: "bob", ConvID: "editor", Since: time.Now()}, time.Hour)
		must(t, err)
	}
	if z.Versioned {
		_, err := s.Mutate(ctx, bob, z, "test", "before the command", func() (Change, error) { return Change{All: true}, nil })
		must(t, err)
	}
	_, _, err = s.Reconcile(ctx, z.Owner)
	must(t, err)
	return s, z, data, bob
}

// checkZone fails unless the zone holds tc.want and tc.records, and, in a versioned zone,
// HEAD holds what is on disk (the command's change committed, or nothing).
func checkZone(t *testing.T, s *Service, z *Zone, data string, tc cmdCase) {
	t.Helper()
	for p, want := range tc.want {
		fi, err := os.Lstat(filepath.Join(data, p))
		if want == "" {
			if err == nil {
				t.Errorf("%s is still there", p)
			}
			continue
		}
		got, rerr := os.ReadFile(filepath.Join(data, p))
		if err != nil || rerr != nil || !fi.Mode().IsRegular() || string(got) != want {
			t.Errorf("%s = %q (%v, %v), want the regular file %q", p, got, fi, err, want)
		}
	}
	for p, want := range tc.records {
		o, ok, err := s.db.Ownership(context.Background(), z.GroupID, p)
		must(t, err)
		if got := map[bool]string{true: o.Owner + ":" + o.Mode}[ok]; got != want {
			t.Errorf("record of %s = %q, want %q", p, got, want)
		}
	}
	if !z.Versioned {
		return
	}
	r, err := s.Repo(z)
	must(t, err)
	defer r.Release()
	l, _, unlock, err := s.LockRepo(context.Background(), r, z)
	must(t, err)
	defer unlock()
	for p, want := range tc.want {
		b, err := l.FileAt("HEAD", p)
		if want == "" && err == nil || want != "" && string(b) != want {
			t.Errorf("HEAD's %s = %q (%v), want %q", p, b, err, want)
		}
	}
}

// put writes p (its folders made) in the zone's folder data, as a program would.
func put(p, content string) func(t *testing.T, data string) {
	return func(t *testing.T, data string) {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(data, p)), 0o700))
		must(t, os.WriteFile(filepath.Join(data, p), []byte(content), 0o600))
	}
}

// gone removes p; link replaces p by a link to target.
func gone(p string) func(t *testing.T, data string) {
	return func(t *testing.T, data string) { must(t, os.RemoveAll(filepath.Join(data, p))) }
}

func link(p, target string) func(t *testing.T, data string) {
	return func(t *testing.T, data string) {
		gone(p)(t, data)
		must(t, os.Symlink(target, filepath.Join(data, p)))
	}
}

// wantCode fails unless err is the kernel error code.
func wantCode(t *testing.T, err error, code Code) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("error %v, want %s", err, code)
	}
}
