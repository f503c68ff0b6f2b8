package vcs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"
)

func TestConcurrentCommitsLinearHistory(t *testing.T) {
	t.Parallel()
	z := newZone(t)
	z.write(t, "base.txt", "base")
	r := z.open(t)
	if _, err := r.CommitAll(alice, "base"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("w%02d/file.txt", i)
			if err := os.MkdirAll(filepath.Join(z.work, fmt.Sprintf("w%02d", i)), 0o700); err != nil {
				errs <- err
				return
			}
			if err := os.WriteFile(filepath.Join(z.work, name), []byte(name), 0o600); err != nil {
				errs <- err
				return
			}
			h, err := r.CommitPaths([]string{name}, Signature{Name: fmt.Sprint("user", i)}, "write "+name)
			if err == nil && h == "" {
				err = errors.New("no commit for " + name)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := commitCount(t, r); n != 21 {
		t.Fatalf("%d commits, want 21", n)
	}
	_, h, err := r.readHead()
	if err != nil {
		t.Fatal(err)
	}
	for !h.IsZero() {
		c, err := object.GetCommit(r.st, h)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.ParentHashes) > 1 {
			t.Fatal("merge commit in history")
		}
		if len(c.ParentHashes) == 0 {
			break
		}
		h = c.ParentHashes[0]
	}
	if n := len(headFiles(t, r)); n != 21 {
		t.Fatalf("%d files in HEAD, want 21", n)
	}
}

func TestLockedHandleSerialisesExecAndCommit(t *testing.T) {
	t.Parallel()
	z := newZone(t)
	r := z.open(t)
	l, err := r.Lock()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan string)
	go func() {
		// Another tool call: write and commit under the same lock.
		l2, err := r.Lock()
		if err != nil {
			done <- ""
			return
		}
		defer l2.Unlock()
		z.write(t, "other.txt", "o")
		h, _ := l2.CommitPaths([]string{"other.txt"}, alice, "other")
		done <- h
	}()
	z.write(t, "exec.txt", "e") // what a shed_exec would do while holding the lock
	select {
	case <-done:
		t.Fatal("CommitPaths ran while the lock was held")
	case <-time.After(50 * time.Millisecond):
	}
	h, err := l.CommitAll(alice, "shed_exec")
	if err != nil || h == "" {
		t.Fatalf("CommitAll under lock: %q %v", h, err)
	}
	l.Unlock()
	l.Unlock() // harmless
	if _, err := l.CommitAll(alice, "late"); !errors.Is(err, ErrUnlocked) {
		t.Fatalf("use after Unlock = %v, want ErrUnlocked", err)
	}
	if h := <-done; h == "" {
		t.Fatal("waiting commit made no commit")
	}
	log, err := r.Log("", 0)
	if err != nil || len(log) != 2 || log[1].Message != "shed_exec" {
		t.Fatalf("log = %+v, %v", log, err)
	}
}

func TestLogAndFileAt(t *testing.T) {
	t.Parallel()
	z := newZone(t)
	r := z.open(t)
	var hashes []string
	for i, step := range []struct{ path, content string }{{"a.txt", "a1"}, {"d/b.txt", "b1"}, {"a.txt", "a2"}, {"d/b.txt", "b2"}} {
		z.write(t, step.path, step.content)
		h, err := r.CommitPaths([]string{step.path}, Signature{Name: fmt.Sprint("u", i), Email: "secret@example.org"}, fmt.Sprint("step ", i))
		if err != nil || h == "" {
			t.Fatal(h, err)
		}
		hashes = append(hashes, h)
	}
	logs := []struct {
		path  string
		limit int
		want  []int // indexes into hashes, newest first
		err   error
	}{
		{"", 0, []int{3, 2, 1, 0}, nil},
		{".", 2, []int{3, 2}, nil},
		{"a.txt", 0, []int{2, 0}, nil},
		{"d", 0, []int{3, 1}, nil},
		{"d/b.txt", 1, []int{3}, nil},
		{"nope", 0, nil, nil},
		{"../x", 0, nil, ErrInvalidPath},
		{"/etc/passwd", 0, nil, ErrInvalidPath},
	}
	for _, tc := range logs {
		t.Run(fmt.Sprintf("log %q %d", tc.path, tc.limit), func(t *testing.T) {
			got, err := r.Log(tc.path, tc.limit)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d entries, want %d", len(got), len(tc.want))
			}
			for i, w := range tc.want {
				e := got[i]
				if e.Hash != hashes[w] || e.Message != fmt.Sprint("step ", w) || e.Author != fmt.Sprint("u", w) || e.When.IsZero() {
					t.Fatalf("entry %d = %+v", i, e)
				}
				if strings.Contains(fmt.Sprint(e), "secret@") {
					t.Fatal("log leaks the author's e-mail")
				}
			}
		})
	}
	files := []struct {
		rev, path, want string
		err             error
	}{
		{"HEAD", "a.txt", "a2", nil},
		{"HEAD~2", "d/b.txt", "b1", nil},
		{"HEAD^", "a.txt", "a2", nil},
		{hashes[0], "a.txt", "a1", nil},
		{hashes[0][:7], "a.txt", "a1", nil},
		{strings.ToUpper(hashes[1][:10]), "d/b.txt", "b1", nil},
		{hashes[0], "d/b.txt", "", ErrNotFound},
		{"HEAD~9", "a.txt", "", ErrNotFound},
		{"HEAD~-1", "a.txt", "", ErrNotFound},
		{"main", "a.txt", "", ErrNotFound},
		{"abc", "a.txt", "", ErrNotFound},
		{"HEAD", "d", "", ErrIsDir},
		{"HEAD", ".", "", ErrIsDir},
		{"HEAD", "../repo.git/config", "", ErrInvalidPath},
		{"HEAD", "a\x00", "", ErrInvalidPath},
	}
	for _, tc := range files {
		t.Run(fmt.Sprintf("file %s %q", tc.rev, tc.path), func(t *testing.T) {
			got, err := r.FileAt(tc.rev, tc.path)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if string(got) != tc.want {
				t.Fatalf("content = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRestoreByWritingOldContent(t *testing.T) {
	t.Parallel()
	z := newZone(t)
	r := z.open(t)
	z.write(t, "a.txt", "v1")
	first, _ := r.CommitPaths([]string{"a.txt"}, alice, "v1")
	z.write(t, "a.txt", "v2")
	if _, err := r.CommitPaths([]string{"a.txt"}, alice, "v2"); err != nil {
		t.Fatal(err)
	}
	old, err := r.FileAt(first, "a.txt")
	if err != nil {
		t.Fatal(err)
	}
	z.write(t, "a.txt", string(old))
	if h, err := r.CommitPaths([]string{"a.txt"}, alice, "restore a.txt"); err != nil || h == "" {
		t.Fatal(h, err)
	}
	if n := commitCount(t, r); n != 3 {
		t.Fatalf("%d commits, want 3: restore must add a commit, never move HEAD back", n)
	}
}

func TestCommitHeaderInjectionIsNeutralised(t *testing.T) {
	t.Parallel()
	z := newZone(t)
	r := z.open(t)
	z.write(t, "a.txt", "a")
	evil := Signature{Name: "mallory> 0 +0000\ncommitter root <root@x", Email: "m@x>\n\x00"}
	h, err := r.CommitPaths([]string{"a.txt"}, evil, "msg\x00with nul\n\nbody")
	if err != nil || h == "" {
		t.Fatal(h, err)
	}
	out := z.gitCLI(t, "cat-file", "-p", h)
	if strings.Count(out, "\ncommitter ") != 1 || !strings.Contains(out, "\ncommitter fileshed <fileshed@localhost>") {
		t.Fatalf("commit header forged:\n%s", out)
	}
	if !strings.Contains(out, "author mallory 0 +0000committer root root@x <m@x>") || !strings.Contains(out, "msgwith nul") {
		t.Fatalf("unexpected commit:\n%s", out)
	}
	z.gitCLI(t, "fsck", "--strict")
}

// TestUserGitDirInWorkTreeIsNeverUsed: a user command writes a .git with an
// fsmonitor command and a hook into the zone; neither versioning nor the
// read-only git CLI that shed_exec runs (GIT_DIR set) executes them, and
// nothing of it is committed.
func TestUserGitDirInWorkTreeIsNeverUsed(t *testing.T) {
	t.Parallel()
	z := newZone(t)
	r := z.open(t)
	marker := filepath.Join(t.TempDir(), "pwned")
	z.write(t, ".git/config", "[core]\n\tfsmonitor = touch "+marker+"\n\thooksPath = hooks\n")
	z.write(t, ".git/HEAD", "ref: refs/heads/evil\n")
	z.write(t, ".git/hooks/pre-commit", "#!/bin/sh\ntouch "+marker+"\n")
	if err := os.Chmod(filepath.Join(z.work, ".git/hooks/pre-commit"), 0o755); err != nil {
		t.Fatal(err)
	}
	z.write(t, "a.txt", "a")
	if _, err := r.CommitAll(alice, "exec"); err != nil {
		t.Fatal(err)
	}
	if h, err := r.CommitPaths([]string{".git/config"}, alice, "x"); err != nil || h != "" {
		t.Fatalf("CommitPaths(.git/config) = %q, %v", h, err)
	}
	if got := headFiles(t, r); !equalMaps(got, map[string]string{"a.txt": "a"}) {
		t.Fatalf("HEAD = %v", got)
	}
	z.gitCLI(t, "status", "--porcelain")
	z.gitCLI(t, "log", "-p")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("user-written fsmonitor or hook was executed")
	}
	if _, err := os.Stat(filepath.Join(z.gitDir, "hooks")); err == nil {
		t.Fatal("git directory has a hooks directory")
	}
}

func TestCLISeesCleanStatus(t *testing.T) {
	t.Parallel()
	z := newZone(t)
	r := z.open(t)
	for i := 0; i < 50; i++ {
		z.write(t, fmt.Sprintf("d%d/f%d.txt", i%5, i), fmt.Sprint(i))
	}
	z.symlink(t, "d0/f0.txt", "link")
	if _, err := r.CommitAll(alice, "all"); err != nil {
		t.Fatal(err)
	}
	z.write(t, "d1/f1.txt", "changed")
	if _, err := r.CommitPaths([]string{"d1"}, alice, "d1"); err != nil {
		t.Fatal(err)
	}
	// Commits save the index lazily; Flush is what shed_exec git calls first.
	l, err := r.Lock()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	l.Unlock()
	if st := z.gitCLI(t, "status", "--porcelain"); st != "" {
		t.Fatalf("git status not clean:\n%s", st)
	}
	if diff := z.gitCLI(t, "diff", "--cached", "--stat"); diff != "" {
		t.Fatalf("index differs from HEAD:\n%s", diff)
	}
	z.gitCLI(t, "fsck", "--strict")
}

func TestIndexRoundTrip(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_700_000_000, 123456789)
	entries := []*index.Entry{
		{Name: "a", Mode: 0o100644, CreatedAt: now, ModifiedAt: now, Dev: 1, Inode: 2, UID: 3, GID: 4, Size: 5},
		{Name: "b/" + strings.Repeat("x", 5000), Mode: 0o120000},
		{Name: "c/d", Mode: 0o100755, Size: 1 << 31},
	}
	for i := range entries {
		entries[i].Hash[0] = byte(i + 1)
	}
	var buf bytes.Buffer
	if err := encodeIndex(&buf, entries); err != nil {
		t.Fatal(err)
	}
	var idx index.Index
	if err := index.NewDecoder(&buf).Decode(&idx); err != nil {
		t.Fatal(err)
	}
	if len(idx.Entries) != len(entries) {
		t.Fatalf("%d entries", len(idx.Entries))
	}
	for i, e := range idx.Entries {
		w := entries[i]
		if e.Name != w.Name || e.Mode != w.Mode || e.Hash != w.Hash || e.Size != w.Size || e.Inode != w.Inode ||
			e.UID != w.UID || e.GID != w.GID || e.Dev != w.Dev || !e.ModifiedAt.Equal(w.ModifiedAt) || !e.CreatedAt.Equal(w.CreatedAt) {
			t.Fatalf("entry %d: got %+v want %+v", i, e, w)
		}
	}
}
