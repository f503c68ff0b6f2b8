package vcs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

var alice = Signature{Name: "alice", Email: "alice@example.org"}

// base is the tree every CommitPaths case starts from.
var base = map[string]string{"a.txt": "a", "dir/b.txt": "b", "dir/sub/c.txt": "c", "file": "f"}

func TestCommitPaths(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		setup    func(t *testing.T, z zone)
		paths    []string
		wantErr  error
		noCommit bool
		want     map[string]string // HEAD after; nil: same as base
	}{
		{name: "modify", setup: func(t *testing.T, z zone) { z.write(t, "a.txt", "A") }, paths: []string{"a.txt"},
			want: map[string]string{"a.txt": "A", "dir/b.txt": "b", "dir/sub/c.txt": "c", "file": "f"}},
		{name: "add", setup: func(t *testing.T, z zone) { z.write(t, "new/n.txt", "n") }, paths: []string{"new/n.txt"},
			want: map[string]string{"a.txt": "a", "dir/b.txt": "b", "dir/sub/c.txt": "c", "file": "f", "new/n.txt": "n"}},
		{name: "delete file", setup: func(t *testing.T, z zone) { z.remove(t, "a.txt") }, paths: []string{"a.txt"},
			want: map[string]string{"dir/b.txt": "b", "dir/sub/c.txt": "c", "file": "f"}},
		{name: "delete directory", setup: func(t *testing.T, z zone) { z.remove(t, "dir") }, paths: []string{"dir"},
			want: map[string]string{"a.txt": "a", "file": "f"}},
		{name: "directory path commits everything under it", setup: func(t *testing.T, z zone) {
			z.write(t, "dir/b.txt", "B")
			z.write(t, "dir/sub/d.txt", "d")
			z.remove(t, "dir/sub/c.txt")
			z.write(t, "a.txt", "not committed")
		}, paths: []string{"dir"},
			want: map[string]string{"a.txt": "a", "dir/b.txt": "B", "dir/sub/d.txt": "d", "file": "f"}},
		{name: "dot is the whole work tree", setup: func(t *testing.T, z zone) { z.write(t, "a.txt", "A") }, paths: []string{"."},
			want: map[string]string{"a.txt": "A", "dir/b.txt": "b", "dir/sub/c.txt": "c", "file": "f"}},
		{name: "only the given paths", setup: func(t *testing.T, z zone) {
			z.write(t, "a.txt", "A")
			z.write(t, "file", "F")
		}, paths: []string{"file"},
			want: map[string]string{"a.txt": "a", "dir/b.txt": "b", "dir/sub/c.txt": "c", "file": "F"}},
		{name: "no change makes no commit", setup: func(t *testing.T, z zone) {}, paths: []string{"a.txt", "dir"}, noCommit: true},
		{name: "unknown missing path makes no commit", setup: func(t *testing.T, z zone) {}, paths: []string{"nope/x"}, noCommit: true},
		{name: "file becomes directory", setup: func(t *testing.T, z zone) {
			z.remove(t, "file")
			z.write(t, "file/inner.txt", "i")
		}, paths: []string{"file/inner.txt"},
			want: map[string]string{"a.txt": "a", "dir/b.txt": "b", "dir/sub/c.txt": "c", "file/inner.txt": "i"}},
		{name: "directory becomes file", setup: func(t *testing.T, z zone) {
			z.remove(t, "dir")
			z.write(t, "dir", "now a file")
		}, paths: []string{"dir"},
			want: map[string]string{"a.txt": "a", "dir": "now a file", "file": "f"}},
		{name: "executable bit", setup: func(t *testing.T, z zone) {
			if err := os.Chmod(filepath.Join(z.work, "a.txt"), 0o700); err != nil {
				t.Fatal(err)
			}
		}, paths: []string{"a.txt"},
			want: map[string]string{"a.txt": "a (x)", "dir/b.txt": "b", "dir/sub/c.txt": "c", "file": "f"}},
		{name: "symlink escaping is committed as a link, not followed", setup: func(t *testing.T, z zone) {
			z.symlink(t, "/etc/passwd", "pw")
		}, paths: []string{"pw"},
			want: map[string]string{"a.txt": "a", "dir/b.txt": "b", "dir/sub/c.txt": "c", "file": "f", "pw": "-> /etc/passwd"}},
		{name: "RejectsPathThroughSymlinkedDirectory", setup: func(t *testing.T, z zone) {
			z.symlink(t, "/etc", "etc")
		}, paths: []string{"etc/passwd"}, wantErr: ErrSymlinkInPath},
		{name: "dot git path is ignored", setup: func(t *testing.T, z zone) {
			z.write(t, ".git/config", "[core]\n\tfsmonitor = touch /tmp/pwned\n")
			z.write(t, "dir/.GIT/hooks/x", "#!/bin/sh\n")
		}, paths: []string{".git/config", "dir/.GIT/hooks/x", ".git"}, noCommit: true},
		{name: "fifo is left out", setup: func(t *testing.T, z zone) {
			if err := syscall.Mkfifo(filepath.Join(z.work, "fifo"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, paths: []string{"fifo"}, noCommit: true},
		{name: "absolute path", setup: func(t *testing.T, z zone) {}, paths: []string{"/etc/passwd"}, wantErr: ErrInvalidPath},
		{name: "dotdot climbs out", setup: func(t *testing.T, z zone) {}, paths: []string{"../repo.git/config"}, wantErr: ErrInvalidPath},
		{name: "dotdot inside is cleaned", setup: func(t *testing.T, z zone) { z.write(t, "a.txt", "A") }, paths: []string{"dir/../a.txt"},
			want: map[string]string{"a.txt": "A", "dir/b.txt": "b", "dir/sub/c.txt": "c", "file": "f"}},
		{name: "NUL byte", setup: func(t *testing.T, z zone) {}, paths: []string{"a\x00b"}, wantErr: ErrInvalidPath},
		{name: "empty path", setup: func(t *testing.T, z zone) {}, paths: []string{""}, wantErr: ErrInvalidPath},
		{name: "invalid UTF-8 name", setup: func(t *testing.T, z zone) { z.write(t, "bad\xff.txt", "x") }, paths: []string{"bad\xff.txt"},
			want: map[string]string{"a.txt": "a", "bad\xff.txt": "x", "dir/b.txt": "b", "dir/sub/c.txt": "c", "file": "f"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			z := newZone(t)
			for p, c := range base {
				z.write(t, p, c)
			}
			r := z.open(t)
			first, err := r.CommitAll(alice, "base")
			if err != nil || first == "" {
				t.Fatal(first, err)
			}
			tc.setup(t, z)
			h, err := r.CommitPaths(tc.paths, alice, "msg")
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), z.work) {
					t.Fatalf("error leaks host path: %v", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if tc.noCommit || tc.wantErr != nil {
				if h != "" || commitCount(t, r) != 1 {
					t.Fatalf("want no commit, got %q (%d commits)", h, commitCount(t, r))
				}
			} else if h == "" || commitCount(t, r) != 2 {
				t.Fatalf("want one new commit, got %q (%d commits)", h, commitCount(t, r))
			}
			want := tc.want
			if want == nil {
				want = base
			}
			if got := headFiles(t, r); !equalMaps(got, want) {
				t.Fatalf("HEAD = %v\nwant  %v", got, want)
			}
			if err := r.Verify(); err != nil {
				t.Fatalf("Verify: %v", err)
			}
		})
	}
}

func TestCommitAll(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		setup    func(t *testing.T, z zone)
		noCommit bool
		want     map[string]string
	}{
		{name: "nothing changed", setup: func(t *testing.T, z zone) {}, noCommit: true, want: base},
		{name: "touch only", setup: func(t *testing.T, z zone) {
			now := time.Now().Add(time.Hour)
			if err := os.Chtimes(filepath.Join(z.work, "a.txt"), now, now); err != nil {
				t.Fatal(err)
			}
		}, noCommit: true, want: base},
		{name: "add modify delete", setup: func(t *testing.T, z zone) {
			z.write(t, "a.txt", "A")
			z.write(t, "x/y/z.txt", "z")
			z.remove(t, "dir/sub")
		}, want: map[string]string{"a.txt": "A", "dir/b.txt": "b", "file": "f", "x/y/z.txt": "z"}},
		{name: "same size and mtime still detected", setup: func(t *testing.T, z zone) {
			p := filepath.Join(z.work, "a.txt")
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			z.write(t, "a.txt", "Z")
			if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
		}, want: map[string]string{"a.txt": "Z", "dir/b.txt": "b", "dir/sub/c.txt": "c", "file": "f"}},
		{name: "user git config and hooks never committed", setup: func(t *testing.T, z zone) {
			z.write(t, ".git/config", "[core]\n\tfsmonitor = touch pwned\n")
			z.write(t, ".git/hooks/pre-commit", "#!/bin/sh\ntouch pwned\n")
			z.write(t, "dir/.git", "gitdir: /etc\n")
			z.write(t, "dir/Git~1/x", "x")
			z.write(t, "dir/.git./x", "x")
		}, noCommit: true, want: base},
		{name: "symlinks committed as links, never entered", setup: func(t *testing.T, z zone) {
			z.symlink(t, "/etc", "etc")
			z.symlink(t, "../../outside", "dir/out")
			z.symlink(t, "missing", "dangling")
		}, want: map[string]string{"a.txt": "a", "dangling": "-> missing", "dir/b.txt": "b", "dir/out": "-> ../../outside",
			"dir/sub/c.txt": "c", "etc": "-> /etc", "file": "f"}},
		{name: "empty work tree", setup: func(t *testing.T, z zone) {
			for _, p := range []string{"a.txt", "dir", "file"} {
				z.remove(t, p)
			}
		}, want: map[string]string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			z := newZone(t)
			for p, c := range base {
				z.write(t, p, c)
			}
			r := z.open(t)
			if _, err := r.CommitAll(alice, "base"); err != nil {
				t.Fatal(err)
			}
			tc.setup(t, z)
			h, err := r.CommitAll(alice, "exec")
			if err != nil {
				t.Fatal(err)
			}
			if tc.noCommit != (h == "") {
				t.Fatalf("commit = %q, want no commit: %v", h, tc.noCommit)
			}
			if got := headFiles(t, r); !equalMaps(got, tc.want) {
				t.Fatalf("HEAD = %v\nwant  %v", got, tc.want)
			}
			if h2, err := r.CommitAll(alice, "again"); err != nil || h2 != "" {
				t.Fatalf("second CommitAll = %q, %v; want no commit", h2, err)
			}
			if _, err := os.Stat(filepath.Join(z.work, "pwned")); err == nil {
				t.Fatal("a user hook or fsmonitor ran")
			}
		})
	}
}
