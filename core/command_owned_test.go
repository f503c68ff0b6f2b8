package core

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestGuardPutsBackContestedWrites: a write beside a command whose file the command changes
// before or during the write's commit (issue 24, item 9) is contested. Before the commit,
// the write commits nothing; during it, the commit is not trusted. Either way the guard of
// the command (here alice's, who may not change bob's files) puts the file back as it was
// before the write — removed when it did not exist — never as the command or a tainted
// commit left it, while a file bob wrote beside the command and nobody touched since is left
// alone and not reported.
func TestGuardPutsBackContestedWrites(t *testing.T) {
	t.Parallel()
	s, base := testService(t, map[string]string{"FILESHED_GROUPS_STATIC": `{"team":["alice","bob"]}`})
	ctx := context.Background()
	alice, bob := Caller{UserID: "alice", ConvID: "c"}, Caller{UserID: "bob", ConvID: "c"}
	z, err := s.ResolveZone(ctx, bob, "group", "team", true)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	disk := filepath.Join(base, "groups", "team", "data")
	write := func(p, content string) {
		if _, err := z.fs.WriteAtomic(p, strings.NewReader(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	command := func(p, content string) { // the command writes in place, as `dd conv=notrunc` would
		if err := os.WriteFile(filepath.Join(disk, p), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"before.md", "during.md", "kept.md"} {
		if err := s.RecordGroupFiles(ctx, bob, z, "owner", p); err != nil {
			t.Fatal(err)
		}
		write(p, "v1\n")
	}
	if _, err := s.Mutate(ctx, bob, z, "t", "", func() (Change, error) {
		return Change{Paths: []string{"before.md", "during.md", "kept.md"}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	guard, err := s.guardOwned(ctx, alice, z) // alice's command starts
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Repo(z)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	run := &BesideRun{Writes: map[string]BesideWrite{}}
	guard.beside = run
	// beside is one write of bob's; meddle is what alice's command does before the commit,
	// inCommit while it is read.
	beside := func(p, content string, meddle, inCommit func()) string {
		write(p, content)
		written := run.Identities(z, []string{p})
		meddle()
		l, _, unlock, err := s.LockRepo(ctx, r, z)
		if err != nil {
			t.Fatal(err)
		}
		defer unlock()
		hash, err := run.CommitWrite(l, z, []string{p}, written, func(paths []string) (string, error) {
			inCommit()
			return s.Commit(l, bob, z, "t", "", Change{Paths: paths})
		})
		if err != nil {
			t.Fatal(err)
		}
		return hash
	}
	none := func() {}
	if h := beside("kept.md", "v2\n", none, none); h == "" || run.Writes["kept.md"].Contested {
		t.Fatalf("a clean write: commit %q, note %+v", h, run.Writes["kept.md"])
	}
	if h := beside("before.md", "v2\n", func() { command("before.md", "pwned\n") }, none); h != "" || !run.Writes["before.md"].Contested {
		t.Fatalf("changed before its commit: commit %q, note %+v", h, run.Writes["before.md"])
	}
	if h := beside("during.md", "v2\n", none, func() { command("during.md", "pwned\n") }); h == "" || !run.Writes["during.md"].Contested {
		t.Fatalf("changed during its commit: commit %q, note %+v", h, run.Writes["during.md"])
	}
	if err := s.RecordGroupFiles(ctx, bob, z, "owner", "new.md"); err != nil {
		t.Fatal(err)
	}
	beside("new.md", "n1\n", func() { command("new.md", "pwned\n") }, none)

	l, _, unlock, err := s.LockRepo(ctx, r, z)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	reverted, err := guard.restore(l)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range reverted {
		got = append(got, e.Path)
		if e.Reason != "changed while another member was writing it" {
			t.Errorf("%s: reason %q", e.Path, e.Reason)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"before.md", "during.md", "new.md"}) {
		t.Fatalf("reverted %v", got)
	}
	for p, want := range map[string]string{"before.md": "v1\n", "during.md": "v1\n", "kept.md": "v2\n"} {
		if b, err := os.ReadFile(filepath.Join(disk, p)); err != nil || string(b) != want {
			t.Errorf("%s = %q (%v), want %q", p, b, err, want)
		}
	}
	if _, err := os.Lstat(filepath.Join(disk, "new.md")); !os.IsNotExist(err) {
		t.Errorf("new.md, created beside the command and then changed by it, is still there (%v)", err)
	}
}
