package confine

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestNewCreatesPrivateZone(t *testing.T) {
	base := t.TempDir()
	z := newZoneAt(t, base, filepath.Join(base, "users", "u1", "data"))
	fi, err := os.Stat(z.dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("zone dir: %v, %v", fi, err)
	}
	if z.fs.Dir() != z.dir || !filepath.IsAbs(z.fs.Dir()) {
		t.Fatalf("Dir() = %q", z.fs.Dir())
	}
	if z.fs.Name() != "confine.Fs" {
		t.Fatalf("Name() = %q", z.fs.Name())
	}
}

func TestNewRefusesAFileAndHidesItsPath(t *testing.T) {
	base := t.TempDir()
	writeHost(t, filepath.Join(base, "f"), "x")
	_, err := New(filepath.Join(base, "f"))
	if err == nil || strings.Contains(err.Error(), base) {
		t.Fatalf("New on a file: %v", err)
	}
}

// TestRejectsSiblingWithZonePrefix: "../data_evil" must not pass for
// "data_evil" starting with "data" (afero BasePathFs, afero#513).
func TestRejectsSiblingWithZonePrefix(t *testing.T) {
	z := newZone(t)
	z.write("mine", "mine")
	evil := "../data_evil/secret"
	ops := map[string]func(p string) error{
		"Open":         func(p string) error { _, err := z.fs.Open(p); return err },
		"OpenFile":     func(p string) error { _, err := z.fs.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0); return err },
		"Create":       func(p string) error { _, err := z.fs.Create(p); return err },
		"Stat":         func(p string) error { _, err := z.fs.Stat(p); return err },
		"Lstat":        func(p string) error { _, _, err := z.fs.LstatIfPossible(p); return err },
		"Readlink":     func(p string) error { _, err := z.fs.ReadlinkIfPossible(p); return err },
		"Remove":       func(p string) error { return z.fs.Remove(p) },
		"RemoveAll":    func(p string) error { return z.fs.RemoveAll(p) },
		"Rename from":  func(p string) error { return z.fs.Rename(p, "stolen") },
		"Rename to":    func(p string) error { return z.fs.Rename("mine", p) },
		"Mkdir":        func(p string) error { return z.fs.Mkdir(p+"_dir", 0o700) },
		"MkdirAll":     func(p string) error { return z.fs.MkdirAll(p+"_dir/x", 0o700) },
		"Chmod":        func(p string) error { return z.fs.Chmod(p, 0o777) },
		"Chown":        func(p string) error { return z.fs.Chown(p, os.Getuid(), os.Getgid()) },
		"Chtimes":      func(p string) error { return z.fs.Chtimes(p, time.Unix(0, 0), time.Unix(0, 0)) },
		"Symlink name": func(p string) error { return z.fs.SymlinkIfPossible("mine", p+"_link") },
		"Symlink to":   func(p string) error { return z.fs.SymlinkIfPossible(p, "link") },
		"WriteAtomic":  func(p string) error { _, err := z.fs.WriteAtomic(p, strings.NewReader("pwned"), 0o600); return err },
		"Confined":     func(p string) error { _, err := z.fs.Confined(p); return err },
	}
	paths := []string{evil, "a/../../data_evil/secret", `..\data_evil\secret`, filepath.Join(z.base, "data_evil", "secret")}
	for op, fn := range ops {
		for _, p := range paths {
			t.Run(op+" "+p, func(t *testing.T) {
				z.expect(fn(p), ErrEscape, p)
				z.secretIntact()
			})
		}
	}
	if readHost(t, z.host("mine")) != "mine" {
		t.Fatal("source of refused rename changed")
	}
}

func TestRejectsAbsoluteHostPathInsideZone(t *testing.T) {
	z := newZone(t)
	z.write("f", "x")
	abs := z.host("f")
	_, err := z.fs.Open(abs)
	z.expect(err, ErrEscape, abs)
}

func TestFileOpsAndPrivateModes(t *testing.T) {
	z := newZone(t)
	if err := z.fs.MkdirAll("a/b", 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := z.fs.Create("a/b/f.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("hello"); err != nil {
		t.Fatal(err)
	}
	if f.Name() != "a/b/f.txt" {
		t.Fatalf("Name() = %q", f.Name())
	}
	f.Close()
	g, err := z.fs.OpenFile("a/b/g.txt", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
	if err := z.fs.Mkdir("a/c", 0o777); err != nil {
		t.Fatal(err)
	}
	modes := map[string]os.FileMode{"a": 0o700, "a/b": 0o700, "a/c": 0o700, "a/b/f.txt": 0o600, "a/b/g.txt": 0o600}
	for name, want := range modes {
		if fi, err := os.Stat(z.host(name)); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v (%v)", name, fi.Mode().Perm(), want, err)
		}
	}

	r, err := z.fs.Open("./a\\b//f.txt")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	if string(b) != "hello" || r.Name() != "a/b/f.txt" {
		t.Fatalf("read %q from %q", b, r.Name())
	}
	r.Close()

	d, err := z.fs.Open("a/b")
	if err != nil {
		t.Fatal(err)
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil || len(names) != 2 {
		t.Fatalf("Readdirnames: %v, %v", names, err)
	}

	if err := z.fs.Rename("a/b/f.txt", "a/c/h.txt"); err != nil {
		t.Fatal(err)
	}
	if readHost(t, z.host("a/c/h.txt")) != "hello" {
		t.Fatal("rename lost content")
	}
	if err := z.fs.Chmod("a/c/h.txt", 0o4755); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(z.host("a/c/h.txt")); fi.Mode() != 0o700 {
		t.Fatalf("Chmod kept special, group or other bits: %v", fi.Mode())
	}
	when := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := z.fs.Chtimes("a/c/h.txt", when, when); err != nil {
		t.Fatal(err)
	}
	if fi, _ := z.fs.Stat("a/c/h.txt"); !fi.ModTime().Equal(when) {
		t.Fatalf("Chtimes: %v", fi.ModTime())
	}
	if err := z.fs.Chown("a/c/h.txt", os.Getuid(), os.Getgid()); err != nil {
		t.Fatal(err)
	}
	if err := z.fs.Remove("a/c/h.txt"); err != nil {
		t.Fatal(err)
	}
	if err := z.fs.RemoveAll("a"); err != nil {
		t.Fatal(err)
	}
	if err := z.fs.RemoveAll("never/was"); err != nil {
		t.Fatalf("RemoveAll of a missing path: %v", err)
	}
	if _, err := os.Stat(z.host("a")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("RemoveAll left a: %v", err)
	}
}

func TestRootNames(t *testing.T) {
	z := newZone(t)
	for _, name := range []string{"", ".", "./", "a/.."} {
		t.Run(name, func(t *testing.T) {
			fi, err := z.fs.Stat(name)
			if err != nil || !fi.IsDir() || fi.Name() != "." {
				t.Fatalf("Stat: %v, %v (the host directory's name must not show)", fi, err)
			}
			d, err := z.fs.Open(name)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if d.Name() != "" {
				t.Fatalf("Name() = %q", d.Name())
			}
			if fi, err := d.Stat(); err != nil || fi.Name() != "." {
				t.Fatalf("Stat().Name() = %q, %v (the host directory's name must not show)", fi.Name(), err)
			}
			if err := z.fs.MkdirAll(name, 0o700); err != nil {
				t.Fatalf("MkdirAll root: %v", err)
			}
		})
	}
}

// TestRefusesRemovingOrMovingTheZoneRoot: "a/.." must not delete the zone.
func TestRefusesRemovingOrMovingTheZoneRoot(t *testing.T) {
	z := newZone(t)
	z.write("keep", "x")
	ops := []struct {
		name string
		do   func() error
	}{
		{"Remove", func() error { return z.fs.Remove("a/..") }},
		{"RemoveAll", func() error { return z.fs.RemoveAll("") }},
		{"RemoveAll dot", func() error { return z.fs.RemoveAll(".") }},
		{"Rename from root", func() error { return z.fs.Rename(".", "moved") }},
		{"Rename to root", func() error { return z.fs.Rename("keep", "") }},
		{"Symlink at root", func() error { return z.fs.SymlinkIfPossible("keep", ".") }},
	}
	for _, tt := range ops {
		t.Run(tt.name, func(t *testing.T) {
			z.expect(tt.do(), ErrInvalid)
			if readHost(t, z.host("keep")) != "x" {
				t.Fatal("zone content changed")
			}
		})
	}
}

// TestFileErrorsHideHostPath: *os.File errors carry the host path; ours don't.
func TestFileErrorsHideHostPath(t *testing.T) {
	z := newZone(t)
	z.write("d/f", "x")
	ops := []struct {
		name string
		do   func() error
	}{
		{"read a directory", func() error {
			d, err := z.fs.Open("d")
			if err != nil {
				return err
			}
			defer d.Close()
			_, err = d.Read(make([]byte, 8))
			return err
		}},
		{"write a read-only file", func() error {
			f, err := z.fs.Open("d/f")
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.Write([]byte("x"))
			return err
		}},
		{"readdir a file", func() error {
			f, err := z.fs.Open("d/f")
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.Readdir(-1)
			return err
		}},
		{"use after close", func() error {
			f, err := z.fs.Open("d/f")
			if err != nil {
				return err
			}
			f.Close()
			_, err = f.Stat()
			return err
		}},
		{"open missing", func() error { _, err := z.fs.Open("d/missing"); return err }},
		{"open below a file", func() error { _, err := z.fs.Open("d/f/x"); return err }},
		{"mkdir existing", func() error { return z.fs.Mkdir("d", 0o700) }},
		{"remove non-empty", func() error { return z.fs.Remove("d") }},
		{"rename missing", func() error { return z.fs.Rename("nope", "d/g") }},
		{"rename into missing dir", func() error { return z.fs.Rename("d/f", "no/g") }},
	}
	for _, tt := range ops {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.do()
			if err == nil {
				t.Fatal("no error")
			}
			z.noLeak(err)
			var pe *PathError
			if !errors.As(err, &pe) || filepath.IsAbs(pe.Path) {
				t.Fatalf("error %q is not a zone-relative *PathError", err)
			}
		})
	}
}

// TestErrorsKeepTheirKind: core maps errno kinds to codes (FILE_NOT_FOUND...).
func TestErrorsKeepTheirKind(t *testing.T) {
	z := newZone(t)
	z.write("f", "x")
	_, err := z.fs.Open("missing")
	z.expect(err, fs.ErrNotExist)
	z.expect(z.fs.Mkdir("f", 0o700), fs.ErrExist)
	var pe *PathError
	if !errors.As(z.fs.Rename("f", "no/g"), &pe) || pe.Path != "no/g" {
		t.Fatalf("rename into a missing directory blames %q, want the destination", pe.Path)
	}
	if !errors.As(z.fs.Rename("nope", "g"), &pe) || pe.Path != "nope" {
		t.Fatalf("rename of a missing source blames %q, want the source", pe.Path)
	}
}

func TestSubStaysInside(t *testing.T) {
	dir := t.TempDir()
	f, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_ = os.MkdirAll(filepath.Join(dir, "pub"), 0o700)
	_ = os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("s"), 0o600)
	_ = os.WriteFile(filepath.Join(dir, "pub", "a.txt"), []byte("a"), 0o600)
	_ = os.Symlink("../secret.txt", filepath.Join(dir, "pub", "up"))
	sub, err := f.Sub("pub")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if _, err := sub.Stat("a.txt"); err != nil {
		t.Errorf("a.txt: %v", err)
	}
	for _, name := range []string{"up", "../secret.txt", "/etc/passwd"} {
		if fh, err := sub.Open(name); err == nil {
			fh.Close()
			t.Errorf("%s opened through a folder Fs", name)
		}
	}
	if _, err := f.Sub("../x"); err == nil {
		t.Error("Sub(../x) accepted")
	}
}
