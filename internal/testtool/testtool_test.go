package testtool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// recorder records a skip instead of skipping (a real skip would fail CI).
type recorder struct {
	testing.TB
	skipped string
}

func (r *recorder) Helper() {}

func (r *recorder) Skipf(format string, args ...any) { r.skipped = fmt.Sprintf(format, args...) }

// fataler records a fatal failure and ends its goroutine, as t.Fatal does, without failing
// the test (the helper under test is expected to fail).
type fataler struct {
	testing.TB
	failed bool
}

func (f *fataler) Helper() {}

func (f *fataler) Fatal(args ...any) { f.failed = true; runtime.Goexit() }

func (f *fataler) Fatalf(format string, args ...any) { f.failed = true; runtime.Goexit() }

func TestRequireNamesThePackage(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	r := &recorder{TB: t}
	Require(r, "zipinfo")
	if !strings.Contains(r.skipped, "apt-get install unzip") {
		t.Fatalf("skip message %q", r.skipped)
	}
	r = &recorder{TB: t}
	Require(r, "cat")
	if r.skipped != "" {
		t.Fatalf("a base program skipped: %q", r.skipped)
	}
}

// TestMemDirIsOnTmpfsAndRemoved: MemDir's directory is on tmpfs when /dev/shm is one, on
// the test's temporary disk when the root is not tmpfs, and gone (with what it held) when
// the test that asked for it ends.
func TestMemDirIsOnTmpfsAndRemoved(t *testing.T) {
	var dirs []string
	t.Run("shm", func(t *testing.T) {
		d := MemDir(t)
		var fs unix.Statfs_t
		if err := unix.Statfs("/dev/shm", &fs); err == nil && fs.Type == unix.TMPFS_MAGIC && !strings.HasPrefix(d, "/dev/shm/") {
			t.Fatalf("MemDir %s is not under /dev/shm", d)
		}
		if err := os.WriteFile(filepath.Join(d, "f"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		LinkMany(t, d, "f", 3, func(i int) string { return fmt.Sprintf("f%d", i) })
		if fi, err := os.Stat(filepath.Join(d, "f3")); err != nil || fi.Sys().(*syscall.Stat_t).Nlink != 4 {
			t.Fatalf("links: %v %v", fi, err)
		}
		dirs = append(dirs, d)
	})
	t.Run("disk", func(t *testing.T) {
		old := memRoot
		memRoot = t.TempDir() // not a tmpfs: the fallback
		defer func() { memRoot = old }()
		d := MemDir(t)
		if strings.HasPrefix(d, memRoot) || strings.HasPrefix(d, "/dev/shm/") {
			t.Fatalf("MemDir %s on a root that is not tmpfs", d)
		}
		dirs = append(dirs, d)
	})
	for _, d := range dirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Fatalf("%s survives its test: %v", d, err)
		}
	}
}

// TestCachedFillsOnceAndAtomically: a miss fills, a hit does not; a failed fill leaves no
// entry (the next call fills again); another key is another entry; two fills at once both
// answer the one entry; an entry of the same kind unused for longer than cacheIdle goes on
// the next miss, another kind's stays; a kind with '-' is refused.
func TestCachedFillsOnceAndAtomically(t *testing.T) {
	root := t.TempDir()
	old := cacheRoot
	cacheRoot = func() (string, error) { return root, nil }
	defer func() { cacheRoot = old }()
	fills := 0
	fill := func(dir string) error {
		fills++
		return os.WriteFile(filepath.Join(dir, "f"), []byte("made"), 0o600)
	}
	a := Cached(t, "k", []byte("lock 1"), fill)
	if b := Cached(t, "k", []byte("lock 1"), fill); b != a || fills != 1 {
		t.Fatalf("a hit filled again (%d fills) or moved: %s, %s", fills, a, b)
	}
	if b, err := os.ReadFile(filepath.Join(a, "f")); err != nil || string(b) != "made" {
		t.Fatalf("the entry: %q %v", b, err)
	}
	failing := &fataler{TB: t}
	done := make(chan struct{})
	go func() { // t.Fatal ends the goroutine it runs on
		defer close(done)
		Cached(failing, "k", []byte("lock 2"), func(dir string) error {
			os.WriteFile(filepath.Join(dir, "half"), nil, 0o600)
			return errors.New("npm failed")
		})
	}()
	<-done
	if !failing.failed {
		t.Fatal("a failed fill did not fail the test")
	}
	c := Cached(t, "k", []byte("lock 2"), fill)
	if c == a || fills != 2 {
		t.Fatalf("after a failed fill: %s (%d fills)", c, fills)
	}
	if _, err := os.Stat(filepath.Join(c, "half")); err == nil {
		t.Fatal("the failed fill's folder became the entry")
	}
	// Two fills at once: the second rename finds the entry and answers it.
	var second string
	d := Cached(t, "k", []byte("lock 3"), func(dir string) error {
		second = Cached(t, "k", []byte("lock 3"), fill)
		return fill(dir)
	})
	if d != second {
		t.Fatalf("two fills, two answers: %s, %s", d, second)
	}
	other := Cached(t, "other", []byte("lock 1"), fill)
	stale := time.Now().Add(-cacheIdle - time.Hour)
	for _, p := range []string{a, other} {
		if err := os.Chtimes(p, stale, stale); err != nil {
			t.Fatal(err)
		}
	}
	Cached(t, "k", []byte("lock 4"), fill)
	if _, err := os.Stat(a); !os.IsNotExist(err) {
		t.Fatalf("an idle entry survives a miss of its kind: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatalf("another kind's entry was trimmed: %v", err)
	}
	left, _ := os.ReadDir(root)
	for _, e := range left {
		if strings.HasPrefix(e.Name(), ".fill-") {
			t.Fatalf("a fill's folder left behind: %s", e.Name())
		}
	}
	bad := &fataler{TB: t}
	done = make(chan struct{})
	go func() { defer close(done); Cached(bad, "a-b", nil, fill) }()
	<-done
	if !bad.failed {
		t.Fatal("a kind with '-' was accepted")
	}
}

// TestAloneRunsInAProcessOfItsOwn: a test that asks to run alone runs again in a child
// process of the test binary, with the variables given, and its parent is given every line
// the child printed.
func TestAloneRunsInAProcessOfItsOwn(t *testing.T) {
	const said = "alone: the child ran"
	var lines []string
	if !Alone(t, []string{"TESTTOOL_ALONE_MARK=child"}, func(l string) { lines = append(lines, l) }) {
		if !slices.Contains(lines, said) {
			t.Fatalf("the child's line %q is not among the lines given to the parent: %q", said, lines)
		}
		return
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if parent, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", os.Getppid())); err != nil || parent != self {
		t.Fatalf("the parent process runs %q (%v), not the test binary %s", parent, err, self)
	}
	if v := os.Getenv("TESTTOOL_ALONE_MARK"); v != "child" {
		t.Fatalf("the variable given for the child is %q", v)
	}
	fmt.Println(said)
}
