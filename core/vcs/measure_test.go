package vcs

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCommitAllMeasured checks the sizes a full commit reports against what is on disk:
// regular files count, links do not, and whatever the scan cannot see (a .git folder, an
// index without stat data) is flagged rather than silently left out.
func TestCommitAllMeasured(t *testing.T) {
	who := Signature{Name: "t", Email: "t@x"}
	tests := []struct {
		name         string
		change       func(t *testing.T, z zone)
		before       int64
		after        int64
		beforeExact  bool
		afterExact   bool
		dropIndex    bool // the index file vanished: rebuilt from HEAD without stat data
		wantCommitID bool
	}{
		{name: "Unchanged", change: func(*testing.T, zone) {}, before: 8, after: 8, beforeExact: true, afterExact: true},
		{name: "Grow", change: func(t *testing.T, z zone) { z.write(t, "d/b.txt", "bbbbbbbbbb") }, before: 8, after: 14, beforeExact: true, afterExact: true, wantCommitID: true},
		{name: "Create", change: func(t *testing.T, z zone) { z.write(t, "n/new.txt", "123") }, before: 8, after: 11, beforeExact: true, afterExact: true, wantCommitID: true},
		{name: "Delete", change: func(t *testing.T, z zone) { rm(t, z, "a.txt") }, before: 8, after: 4, beforeExact: true, afterExact: true, wantCommitID: true},
		{name: "SymlinkWeighsNothing", change: func(t *testing.T, z zone) { z.symlink(t, "a-long-target-name", "l") }, before: 8, after: 8, beforeExact: true, afterExact: true, wantCommitID: true},
		{name: "DotGitFolderIsNotSeen", change: func(t *testing.T, z zone) { z.write(t, ".git/big", "0123456789") }, before: 8, after: 8, beforeExact: true, afterExact: false},
		{name: "NestedDotGitAlias", change: func(t *testing.T, z zone) { z.write(t, "d/GIT~1/x", "0123456789") }, before: 8, after: 8, beforeExact: true, afterExact: false},
		{name: "RebuiltIndexHasNoSizes", change: func(*testing.T, zone) {}, dropIndex: true, before: 0, after: 8, beforeExact: false, afterExact: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			z := newZone(t)
			z.write(t, "a.txt", "aaaa")
			z.write(t, "d/b.txt", "bbbb")
			r := z.open(t)
			if _, err := r.CommitAll(who, "init"); err != nil {
				t.Fatal(err)
			}
			tc.change(t, z)
			if tc.dropIndex {
				_ = r.Close()
				if err := os.Remove(filepath.Join(z.gitDir, "index")); err != nil {
					t.Fatal(err)
				}
				r = z.open(t)
			}
			l, err := r.Lock()
			if err != nil {
				t.Fatal(err)
			}
			h, m, err := l.CommitAllMeasured(who, "exec")
			l.Unlock()
			if err != nil {
				t.Fatal(err)
			}
			want := Measure{Before: tc.before, BeforeExact: tc.beforeExact, After: tc.after, AfterExact: tc.afterExact}
			if m != want {
				t.Fatalf("measure %+v, want %+v", m, want)
			}
			if (h != "") != tc.wantCommitID {
				t.Fatalf("commit %q, want one: %v", h, tc.wantCommitID)
			}
		})
	}
}

// TestCommitAllMeasuredFailureHasNoAfter: a commit that fails reports no size after.
func TestCommitAllMeasuredFailureHasNoAfter(t *testing.T) {
	z := newZone(t)
	z.write(t, "a.txt", "aaaa")
	r := z.open(t)
	if err := os.WriteFile(filepath.Join(z.gitDir, "index.lock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := r.Lock()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	if _, m, err := l.CommitAllMeasured(Signature{Name: "t"}, "x"); err == nil || m.AfterExact || m.After != 0 {
		t.Fatalf("want an error and no size after, got %+v, %v", m, err)
	}
}

func TestIgnored(t *testing.T) {
	for p, want := range map[string]bool{
		"a.txt": false, "d/.gitignore": false, "d/git/x": false,
		".git": true, ".git/config": true, "d/.GIT/x": true, "d/.git./x": true, "git~1/x": true,
		"../x": true, "/abs": true, "a\x00b": true,
	} {
		if got := Ignored(p); got != want {
			t.Errorf("Ignored(%q) = %v, want %v", p, got, want)
		}
	}
}

func rm(t *testing.T, z zone, rel string) {
	t.Helper()
	if err := os.Remove(filepath.Join(z.work, filepath.FromSlash(rel))); err != nil {
		t.Fatal(err)
	}
}
