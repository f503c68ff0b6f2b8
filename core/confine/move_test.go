package confine

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestMoveTo(t *testing.T) {
	base := t.TempDir()
	a := newZoneAt(t, base, filepath.Join(base, "a"))
	b := newZoneAt(t, base, filepath.Join(base, "b"))
	writeHost(t, a.host("x.txt"), "x")
	writeHost(t, a.host("dir/y.txt"), "y")
	writeHost(t, b.host("taken.txt"), "old")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(a.fs.MoveTo("x.txt", b.fs, "moved.txt", true))
	if got := readHost(t, b.host("moved.txt")); got != "x" {
		t.Fatalf("moved content %q", got)
	}
	if _, err := os.Lstat(a.host("x.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("source still there")
	}
	must(a.fs.MoveTo("dir", b.fs, "dir2", true))
	if got := readHost(t, b.host("dir2/y.txt")); got != "y" {
		t.Fatalf("folder content %q", got)
	}
	writeHost(t, a.host("z.txt"), "z")
	if err := a.fs.MoveTo("z.txt", b.fs, "taken.txt", true); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("noReplace over an existing file: %v", err)
	}
	must(a.fs.MoveTo("z.txt", b.fs, "taken.txt", false))
	if got := readHost(t, b.host("taken.txt")); got != "z" {
		t.Fatalf("replaced content %q", got)
	}
	// A destination folder that is a symlink leading out of the zone is refused.
	must(os.Symlink(filepath.Join(base, "data_evil"), b.host("out")))
	writeHost(t, a.host("w.txt"), "w")
	if err := a.fs.MoveTo("w.txt", b.fs, "out/w.txt", true); !errors.Is(err, ErrEscape) {
		t.Fatalf("escape through a symlinked parent: %v", err)
	}
	// A symlink is moved as a link, never followed.
	must(os.Symlink(filepath.Join(base, "data_evil", "secret"), a.host("link")))
	must(a.fs.MoveTo("link", b.fs, "link", true))
	if fi, err := os.Lstat(b.host("link")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("link not moved as a link: %v", err)
	}
	if readHost(t, filepath.Join(base, "data_evil", "secret")) != secret {
		t.Fatal("the target changed")
	}
	for _, bad := range [][2]string{{"", "q"}, {"w.txt", ""}, {"../x", "q"}, {"w.txt", "../q"}} {
		if err := a.fs.MoveTo(bad[0], b.fs, bad[1], true); err == nil {
			t.Fatalf("MoveTo(%q, %q) succeeded", bad[0], bad[1])
		}
	}
}
