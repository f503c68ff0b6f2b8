package vcs

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestWritersTakingTurnsKeepEachOthersCommits: two Repos on one repository (as two replicas
// are) commit in turn — new files, changes, removals, a file becoming a folder, an
// executable bit, nested folders — each bringing its cache forward over the other's
// commits. Every commit keeps all the others' changes (no commit reverts one it did not
// see), the history is linear, and the index each leaves is the stat cache of HEAD: a git
// CLI sees a clean work tree.
func TestWritersTakingTurnsKeepEachOthersCommits(t *testing.T) {
	t.Parallel()
	z := newZone(t)
	z.write(t, "keep.txt", "k")
	z.write(t, "a/b/c.txt", "c")
	a, b := z.open(t), z.open(t)
	if _, err := a.CommitAll(alice, "init"); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		r     *Repo
		do    func()
		paths []string
	}{
		{b, func() { z.write(t, "b1.txt", "1") }, []string{"b1.txt"}},
		{a, func() { z.write(t, "a/b/c.txt", "C") }, []string{"a/b/c.txt"}},
		{b, func() { z.write(t, "a/b/d/e.txt", "e") }, []string{"a/b/d/e.txt"}},
		{a, func() { z.remove(t, "keep.txt") }, []string{"keep.txt"}},
		{b, func() { z.remove(t, "b1.txt"); z.write(t, "b1.txt/inner.txt", "i") }, nil},
		{a, func() { z.write(t, "x.sh", "#!/bin/sh\n"); chmodX(t, z, "x.sh") }, nil},
		{b, func() { z.remove(t, "a") }, nil},
		{a, func() { z.write(t, "a/new.txt", "n") }, []string{"a/new.txt"}},
	}
	for i, s := range steps {
		s.do()
		var h string
		var err error
		if s.paths != nil {
			h, err = s.r.CommitPaths(s.paths, alice, fmt.Sprint("step ", i))
		} else {
			h, err = s.r.CommitAll(alice, fmt.Sprint("step ", i))
		}
		if err != nil || h == "" {
			t.Fatalf("step %d: %q %v", i, h, err)
		}
		want := workFiles(t, z)
		for _, r := range []*Repo{a, b} {
			if got := headFiles(t, r); !equalMaps(got, want) {
				t.Fatalf("step %d: HEAD has %v, the work tree %v", i, got, want)
			}
		}
	}
	for _, r := range []*Repo{a, b} {
		if h, err := r.CommitAll(alice, "nothing"); err != nil || h != "" {
			t.Fatalf("a cache shows changes after the turns: %q %v", h, err)
		}
		if err := r.Verify(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := exec.LookPath("git"); err == nil {
		out, err := exec.Command("git", "--git-dir", z.gitDir, "--work-tree", z.work, "status", "--porcelain").CombinedOutput()
		if err != nil || len(out) != 0 {
			t.Fatalf("git status: %v %s", err, out)
		}
		if out, err := exec.Command("git", "--git-dir", z.gitDir, "rev-list", "--count", "--merges", "HEAD").Output(); err != nil || string(out) != "0\n" {
			t.Fatalf("history not linear: %v %s", err, out)
		}
	}
}

// workFiles reads the work tree as headFiles reads HEAD.
func workFiles(t *testing.T, z zone) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(z.work, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(z.work, p)
		out[filepath.ToSlash(rel)] = string(b)
		if fi, _ := d.Info(); fi.Mode()&0o100 != 0 {
			out[filepath.ToSlash(rel)] += " (x)"
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// chmodX makes rel executable.
func chmodX(t *testing.T, z zone, rel string) {
	t.Helper()
	if err := os.Chmod(filepath.Join(z.work, rel), 0o700); err != nil {
		t.Fatal(err)
	}
}
